package rendercache_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/chartserver"
	"holdfast.dev/holdfast/internal/render/chartsource"
	"holdfast.dev/holdfast/internal/rendercache"
	"holdfast.dev/holdfast/internal/sandbox"
	"holdfast.dev/holdfast/internal/testsupport"
)

// The Secrets are kept on a real API server (one for the package; each test has its own
// namespace), so that its limits — 1 MiB of data, optimistic updates — are the real ones. The
// pure tests run without it.
var (
	hub  client.Client
	repo *chartserver.Repo
)

// storeNamespace is where the stores keep their Secrets, as the controller keeps them in its own
// namespace, apart from the status objects'.
const storeNamespace = "holdfast-system"

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	flag.Parse()
	repo = chartserver.NewRepo()
	defer repo.Close()
	for _, pkg := range []func() ([]byte, error){
		func() ([]byte, error) { return chartserver.Generated("1.0.0") },
		bigChart,
	} {
		tgz, err := pkg()
		if err == nil {
			err = repo.Add(tgz)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	if _, err := sandbox.BinaryDir(); err != nil {
		// The tests that need the API server skip or fail (testsupport.RequireBinaries).
		return m.Run()
	}
	cp, err := sandbox.Start(context.Background(), sandbox.Options{Name: "rendercache-test"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = cp.Stop() }()
	if hub, err = client.New(cp.RESTConfig(), client.Options{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := hub.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: storeNamespace}}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// bigChart generates three ConfigMaps of random text: each object fits (under 1 MiB), the
// rendering compressed does not.
func bigChart() ([]byte, error) {
	cm := "{{- range $i := until 3 }}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big-{{ $i }}\n" +
		"data:\n  blob: {{ randAlphaNum 500000 | quote }}\n{{- end }}\n"
	return chartserver.Package(map[string][]byte{
		"Chart.yaml":         []byte("apiVersion: v2\nname: big\nversion: 1.0.0\n"),
		"templates/big.yaml": []byte(cm),
	})
}

// newOwner returns a status object (in memory: the API server runs no garbage collector, so a
// missing owner is harmless) in a namespace of its own.
func newOwner(t *testing.T) *holdfastv1.ClusterServiceStatus {
	t.Helper()
	testsupport.RequireBinaries(t)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "rendercache-"}}
	if err := hub.Create(context.Background(), ns); err != nil {
		t.Fatalf("creating a namespace: %v", err)
	}
	t.Cleanup(func() { _ = hub.Delete(context.Background(), ns) })
	return &holdfastv1.ClusterServiceStatus{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "apps.cluster-1", UID: uuid.NewUUID()},
		Spec:       holdfastv1.ClusterServiceStatusSpec{Cluster: "cluster-1", MultiClusterService: "apps"},
	}
}

// newStore returns a store on the test API server, fetching charts from the test repository.
func newStore() *rendercache.Store {
	return &rendercache.Store{Namespace: storeNamespace, Client: hub, Reader: hub, Charts: chartsource.New(chartsource.Options{})}
}

// keptSecret reads the Secret keeping owner's renderings; nil if there is none.
func keptSecret(t *testing.T, owner *holdfastv1.ClusterServiceStatus) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{}
	err := hub.Get(context.Background(), newStore().SecretKey(owner), s)
	if client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	if err != nil {
		return nil
	}
	return s
}
