package clusterservicestatus

import (
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/drift"
	"holdfast.dev/holdfast/internal/fleet"
)

func statusObject(namespace, name, serviceSet, cluster string) *holdfastv1.ClusterServiceStatus {
	return &holdfastv1.ClusterServiceStatus{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec:       holdfastv1.ClusterServiceStatusSpec{MultiClusterService: serviceSet, Cluster: cluster},
	}
}

func TestStatusOf(t *testing.T) {
	c1 := types.NamespacedName{Namespace: "fleet", Name: "c1"}
	cases := []struct {
		name  string
		css   *holdfastv1.ClusterServiceStatus
		owner string
		want  bool
	}{
		{"the service set's status object on the cluster", statusObject("fleet", "web.c1", "web", "c1"), "web", true},
		{"another cluster's", statusObject("fleet", "web.c1", "web", "c2"), "web", false},
		{"another service set's", statusObject("fleet", "web.c1", "api", "c1"), "web", false},
		{"a Cluster of the same name in another namespace", statusObject("team", "web.c1", "web", "c1"), "web", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := statusOf(tc.css, tc.owner, c1); got != tc.want {
				t.Fatalf("statusOf = %v, want %v", got, tc.want)
			}
		})
	}
}

// changed is a change the drift watches report for a ConfigMap whose owner annotation says owner.
func changed(owner string) drift.Change {
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion("v1")
	obj.SetKind("ConfigMap")
	obj.SetNamespace("demo")
	obj.SetName("settings")
	obj.SetAnnotations(map[string]string{holdfastv1.OwnerAnnotation: owner})
	obj.SetLabels(map[string]string{holdfastv1.ServiceLabel: "app"})
	return drift.Change{Object: obj, Verdict: drift.Verdict{Drifted: true}}
}

// driftReconciler is a Reconciler whose hub cache holds objs, with what onDrift needs.
func driftReconciler(t *testing.T, objs ...*holdfastv1.ClusterServiceStatus) *Reconciler {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := holdfastv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	b := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&holdfastv1.ClusterServiceStatus{})
	for _, o := range objs {
		b = b.WithObjects(o)
	}
	return &Reconciler{
		Client:  b.Build(),
		Clock:   clocktesting.NewFakePassiveClock(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)),
		memory:  newMemory(),
		fights:  &drift.Fights{},
		recheck: make(chan event.TypedGenericEvent[*holdfastv1.ClusterServiceStatus], 16),
		drifted: make(chan event.TypedGenericEvent[*holdfastv1.ClusterServiceStatus], 16),
		Applied: drift.NewApplied(),
	}
}

// TestDriftOfUnknownOwnersIsDropped: an owner annotation is whatever whoever writes on the target
// put there. A change is remembered and reconciled only for a status object that exists, of that
// service set on that cluster; anything else leaves no trace in memory or in the queue.
func TestDriftOfUnknownOwnersIsDropped(t *testing.T) {
	c1 := types.NamespacedName{Namespace: "fleet", Name: "c1"}
	cases := []struct {
		name    string
		cluster types.NamespacedName
		owner   string
		status  types.NamespacedName // the status object the change names
		want    bool
	}{
		{name: "a status object of the cluster", cluster: c1, owner: "web", status: types.NamespacedName{Namespace: "fleet", Name: "web.c1"}, want: true},
		{name: "no such status object", cluster: c1, owner: "ghost", status: types.NamespacedName{Namespace: "fleet", Name: "ghost.c1"}},
		{name: "the status object of another cluster", cluster: c1, owner: "evil", status: types.NamespacedName{Namespace: "fleet", Name: "evil.c1"}},
		{name: "the status object of another service set", cluster: types.NamespacedName{Namespace: "fleet", Name: "c3"}, owner: "web",
			status: types.NamespacedName{Namespace: "fleet", Name: "web.c3"}},
		{name: "a Cluster of the same name in another namespace", cluster: types.NamespacedName{Namespace: "team", Name: "c1"}, owner: "web",
			status: types.NamespacedName{Namespace: "team", Name: "web.c1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := driftReconciler(t,
				statusObject("fleet", "web.c1", "web", "c1"),
				statusObject("fleet", "evil.c1", "evil", "c2"), // named as if of c1, but of c2
				statusObject("fleet", "web.c3", "api", "c3"),   // named as if of web, but of api
			)
			r.onDrift(tc.cluster, changed(tc.owner))
			drifts := r.memory.takeDrifts(tc.status)
			if got := len(drifts) == 1; got != tc.want {
				t.Fatalf("drift remembered = %v, want %v", got, tc.want)
			}
			if got := len(r.drifted) == 1; got != tc.want {
				t.Fatalf("reconcile asked for = %v, want %v", got, tc.want)
			}
			if !tc.want && r.memory.statusObjects() != 0 {
				t.Fatalf("memory holds %d entries for a dropped change", r.memory.statusObjects())
			}
		})
	}
}

func TestForgedOwnersLeaveNothingBehind(t *testing.T) {
	r := driftReconciler(t, statusObject("fleet", "web.c1", "web", "c1"))
	c1 := types.NamespacedName{Namespace: "fleet", Name: "c1"}
	for i := range 20000 {
		r.onDrift(c1, changed(fmt.Sprint("made-up-", i)))
	}
	if r.memory.statusObjects() != 0 || r.memory.drifts.len() != 0 || r.memory.rechecks.len() != 0 || len(r.drifted) != 0 {
		t.Fatalf("20,000 forged owners left %d entries (%d pending, %d rechecks) and %d requests",
			r.memory.statusObjects(), r.memory.drifts.len(), r.memory.rechecks.len(), len(r.drifted))
	}
}

// TestClosedConnectionsForgetTheirWatches: the drift watches forget the cache of each connection
// the registry lets go, here a Cluster's connection removed.
func TestClosedConnectionsForgetTheirWatches(t *testing.T) {
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: srv.URL,
		CertificateAuthorityData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})}
	cfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: "t"}
	cfg.Contexts["ctx"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	cfg.CurrentContext = "ctx"
	kubeconfig, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}

	reg := fleet.NewRegistry(fleet.Options{})
	t.Cleanup(reg.Close)
	forgotten := make(chan cache.Cache, 4)
	reg.OnClosed(forgetCacheOf(func(c cache.Cache) { forgotten <- c }))
	key := types.NamespacedName{Namespace: "fleet", Name: "c1"}
	conn, err := reg.Connect(key, "", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := reg.Connect(key, "", kubeconfig); err != nil || again != conn {
		t.Fatalf("the same kubeconfig did not reuse the connection: %v", err)
	}
	reg.Remove(key)
	select {
	case c := <-forgotten:
		if c != conn.Cluster().GetCache() {
			t.Fatal("forgot another cache than the removed connection's")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the removed connection's cache was not forgotten")
	}
	select {
	case <-forgotten:
		t.Fatal("a cache was forgotten twice, or one still in use was")
	case <-time.After(100 * time.Millisecond):
	}
}
