package rendercache_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/uuid"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/render"
	"holdfast.dev/holdfast/internal/rendercache"
)

func helmService(service, chartName, values string) render.Request {
	return render.Request{
		Service: service, Cluster: render.Cluster{Name: "cluster-1", Namespace: "fleet"}, TargetNamespace: "apps", ServiceValues: values,
		Source: render.Source{Helm: &render.Helm{RepoURL: repo.URL(), Chart: chartName, Version: "1.0.0"}},
	}
}

func mustRender(t *testing.T, s *rendercache.Session, req render.Request) *render.Result {
	t.Helper()
	res, err := s.Render(context.Background(), req.Service, req)
	if err != nil {
		t.Fatalf("rendering %s: %v", req.Service, err)
	}
	return res
}

func mustSave(t *testing.T, s *rendercache.Session, services ...string) []rendercache.Unkept {
	t.Helper()
	unkept, err := s.Save(context.Background(), services)
	if err != nil {
		t.Fatalf("saving: %v", err)
	}
	return unkept
}

// pass is one reconcile: it renders reqs and saves, declared being the services declared.
func pass(t *testing.T, store *rendercache.Store, owner *holdfastv1.ClusterServiceStatus, declared []string, reqs ...render.Request) (*rendercache.Session, []rendercache.Unkept) {
	t.Helper()
	s := store.Open(owner)
	for _, req := range reqs {
		mustRender(t, s, req)
	}
	return s, mustSave(t, s, declared...)
}

// password is the generated password in a rendering of the generated chart.
func password(t *testing.T, res *render.Result) string {
	t.Helper()
	for _, o := range res.Objects {
		if o.GetKind() == "Secret" {
			data, _, _ := unstructured.NestedString(o.Object, "data", "password")
			return data
		}
	}
	t.Fatal("no Secret in the rendering")
	return ""
}

// TestKeptUntilInputsChange: a Helm service is rendered once per revision of its inputs, also
// across a restart (a new Store); a change of input renders it again, once.
func TestKeptUntilInputsChange(t *testing.T) {
	owner := newOwner(t)
	store := newStore()

	s1 := store.Open(owner)
	first := mustRender(t, s1, helmService("db", "generated", ""))
	if !s1.Fresh("db") {
		t.Error("the first rendering is not fresh")
	}
	if unkept := mustSave(t, s1, "db"); len(unkept) != 0 {
		t.Errorf("unkept: %+v", unkept)
	}
	secret := keptSecret(t, owner)
	if secret == nil {
		t.Fatal("nothing kept")
	}
	if secret.Type != rendercache.SecretType || secret.Labels[rendercache.RenderingsOfLabel] != owner.Name ||
		secret.Labels[holdfastv1.ClusterLabel] != "cluster-1" || secret.Labels[holdfastv1.MultiClusterServiceLabel] != "apps" {
		t.Errorf("kept in a Secret of type %q, labels %v", secret.Type, secret.Labels)
	}
	if secret.Namespace != storeNamespace || secret.Labels[rendercache.RenderingsOfNamespaceLabel] != owner.Namespace ||
		secret.Labels[rendercache.RenderingsOfUIDLabel] != string(owner.UID) || len(secret.OwnerReferences) != 0 {
		t.Errorf("kept in namespace %s, labels %v, owner references %+v", secret.Namespace, secret.Labels, secret.OwnerReferences)
	}

	for _, tc := range []struct {
		name  string
		store *rendercache.Store
	}{{"the same process", store}, {"after a restart", newStore()}} {
		s := tc.store.Open(owner)
		again := mustRender(t, s, helmService("db", "generated", ""))
		if s.Fresh("db") || again.Digest != first.Digest || !reflect.DeepEqual(again.Objects, first.Objects) {
			t.Errorf("%s: rendered again (fresh %v, digest %s, was %s)", tc.name, s.Fresh("db"), again.Digest, first.Digest)
		}
		mustSave(t, s, "db")
		if rv := keptSecret(t, owner).ResourceVersion; rv != secret.ResourceVersion {
			t.Errorf("%s: the Secret was written with nothing new (resourceVersion %s, was %s)", tc.name, rv, secret.ResourceVersion)
		}
	}

	s2 := store.Open(owner)
	changed := mustRender(t, s2, helmService("db", "generated", "greeting: changed\n"))
	if !s2.Fresh("db") || changed.Digest == first.Digest || password(t, changed) == password(t, first) {
		t.Errorf("a change of values did not render again (fresh %v)", s2.Fresh("db"))
	}
	mustSave(t, s2, "db")
	s3 := store.Open(owner)
	if again := mustRender(t, s3, helmService("db", "generated", "greeting: changed\n")); s3.Fresh("db") || again.Digest != changed.Digest {
		t.Error("the new rendering was not kept")
	}
}

// TestOnlyHelmIsKept: other sources render deterministically; they cost no request and keep
// nothing.
func TestOnlyHelmIsKept(t *testing.T) {
	owner := newOwner(t)
	reads := &countingReader{Reader: hub}
	store := &rendercache.Store{Namespace: storeNamespace, Client: hub, Reader: reads, Charts: newStore().Charts}
	pass(t, store, owner, []string{"web"}, render.Request{Service: "web", Source: render.Source{Inline: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"}})
	if reads.n.Load() != 0 || keptSecret(t, owner) != nil {
		t.Errorf("an inline service read %d times and kept %v", reads.n.Load(), keptSecret(t, owner) != nil)
	}
}

// TestServicesDropped: what is kept for services no longer declared is dropped, and the Secret
// goes when nothing is left.
func TestServicesDropped(t *testing.T) {
	owner := newOwner(t)
	store := newStore()
	a, b := helmService("a", "generated", ""), helmService("b", "generated", "")
	pass(t, store, owner, []string{"a", "b"}, a, b)
	if data := keptSecret(t, owner).Data; len(data) != 2 {
		t.Fatalf("kept %d services, want 2", len(data))
	}
	pass(t, store, owner, []string{"a"}, a)
	if data := keptSecret(t, owner).Data; len(data) != 1 || data["a"] == nil {
		t.Errorf("kept %d services after b was removed, want a only", len(data))
	}
	pass(t, store, owner, nil, a)
	if keptSecret(t, owner) != nil {
		t.Error("the Secret stays with nothing to keep")
	}
}

// TestSizeLimit: services are kept in declaration order while they fit in 1 MiB; one that does
// not is rendered every time and reported.
func TestSizeLimit(t *testing.T) {
	owner := newOwner(t)
	store := newStore()
	big, small := helmService("big", "big", ""), helmService("small", "generated", "")
	_, unkept := pass(t, store, owner, []string{"big", "small"}, big, small)
	if len(unkept) != 1 || unkept[0].Service != "big" || !strings.Contains(unkept[0].Reason, "bytes compressed") {
		t.Fatalf("unkept = %+v, want big, for its size", unkept)
	}
	secret := keptSecret(t, owner)
	if secret == nil || len(secret.Data) != 1 || secret.Data["small"] == nil {
		t.Fatalf("kept %v, want small only", secret)
	}
	s, _ := pass(t, store, owner, []string{"big", "small"}, big, small)
	if !s.Fresh("big") || s.Fresh("small") {
		t.Errorf("fresh: big %v, small %v; want big only", s.Fresh("big"), s.Fresh("small"))
	}
}

// TestCorruptEntry: a kept rendering that cannot be used is rendered again, and kept anew.
func TestCorruptEntry(t *testing.T) {
	owner := newOwner(t)
	store := newStore()
	db := helmService("db", "generated", "")
	pass(t, store, owner, []string{"db"}, db)
	secret := keptSecret(t, owner)
	secret.Data["db"] = []byte("not what was kept")
	if err := hub.Update(context.Background(), secret); err != nil {
		t.Fatal(err)
	}
	if s, _ := pass(t, store, owner, []string{"db"}, db); !s.Fresh("db") {
		t.Fatal("a corrupt entry was used")
	}
	if s, _ := pass(t, store, owner, []string{"db"}, db); s.Fresh("db") {
		t.Error("the rendering made after the corrupt entry was not kept")
	}
}

// TestForeignSecret: a Secret of that name that is not Holdfast's is neither used, written nor
// deleted; nothing is kept, and Save says why.
func TestForeignSecret(t *testing.T) {
	owner := newOwner(t)
	key := newStore().SecretKey(owner)
	foreign := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}, Data: map[string][]byte{"db": []byte("x")}}
	if err := hub.Create(context.Background(), foreign); err != nil {
		t.Fatal(err)
	}
	store := newStore()
	_, unkept := pass(t, store, owner, []string{"db"}, helmService("db", "generated", ""))
	if len(unkept) != 1 || !strings.Contains(unkept[0].Reason, "not Holdfast's") {
		t.Errorf("unkept = %+v", unkept)
	}
	if err := store.Delete(context.Background(), owner); err != nil {
		t.Fatal(err)
	}
	if got := keptSecret(t, owner); got == nil || got.ResourceVersion != foreign.ResourceVersion {
		t.Errorf("the foreign Secret was changed or deleted")
	}
}

// TestEarlierOwner: a Secret kept for an earlier status object of the same name is not used,
// and is taken over.
func TestEarlierOwner(t *testing.T) {
	owner := newOwner(t)
	earlier := owner.DeepCopy()
	earlier.UID = uuid.NewUUID()
	store := newStore()
	db := helmService("db", "generated", "")
	pass(t, store, earlier, []string{"db"}, db)
	if s, _ := pass(t, store, owner, []string{"db"}, db); !s.Fresh("db") {
		t.Error("the rendering kept for an earlier owner was used")
	}
	if uid := keptSecret(t, owner).Labels[rendercache.RenderingsOfUIDLabel]; uid != string(owner.UID) {
		t.Errorf("kept for UID %q, want %q", uid, owner.UID)
	}
}

// TestUnavailable: when the hub cannot be read, Helm services fail (to be retried) rather than
// being rendered anew; when it cannot be written, Save says so and which services are fresh.
func TestUnavailable(t *testing.T) {
	owner := newOwner(t)
	charts := newStore().Charts
	down := &rendercache.Store{Namespace: storeNamespace, Client: hub, Reader: failingReader{}, Charts: charts}
	s := down.Open(owner)
	if _, err := s.Render(context.Background(), "db", helmService("db", "generated", "")); !errors.Is(err, rendercache.ErrUnavailable) {
		t.Errorf("rendering with the hub down: %v, want ErrUnavailable", err)
	}
	mustRender(t, s, render.Request{Service: "web", Source: render.Source{Inline: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"}})

	refusing := &rendercache.Store{Namespace: storeNamespace, Client: refusingWriter{Client: hub}, Reader: hub, Charts: charts}
	s = refusing.Open(owner)
	mustRender(t, s, helmService("db", "generated", ""))
	if _, err := s.Save(context.Background(), []string{"db"}); !errors.Is(err, rendercache.ErrUnavailable) || !s.Fresh("db") {
		t.Errorf("saving with writes refused: %v (fresh %v), want ErrUnavailable", err, s.Fresh("db"))
	}
}

// TestDelete: Delete removes what is kept, and is done when there is nothing.
func TestDelete(t *testing.T) {
	owner := newOwner(t)
	store := newStore()
	pass(t, store, owner, []string{"db"}, helmService("db", "generated", ""))
	for range 2 {
		if err := store.Delete(context.Background(), owner); err != nil {
			t.Fatal(err)
		}
	}
	if keptSecret(t, owner) != nil {
		t.Error("the Secret is still there")
	}
}

type countingReader struct {
	client.Reader
	n atomic.Int64
}

func (r *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	r.n.Add(1)
	return r.Reader.Get(ctx, key, obj, opts...)
}

type failingReader struct{ client.Reader }

func (failingReader) Get(context.Context, client.ObjectKey, client.Object, ...client.GetOption) error {
	return apierrors.NewServiceUnavailable("the hub is down")
}

type refusingWriter struct{ client.Client }

func (refusingWriter) Create(context.Context, client.Object, ...client.CreateOption) error {
	return apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "x", errors.New("no"))
}

// TestMaxSizeIsTheAPIServers: MaxSize is what the API server accepts in one Secret's data.
func TestMaxSizeIsTheAPIServers(t *testing.T) {
	owner := newOwner(t)
	for _, tc := range []struct {
		size int
		ok   bool
	}{{rendercache.MaxSize, true}, {rendercache.MaxSize + 1, false}} {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: owner.Namespace, GenerateName: "size-"},
			Data: map[string][]byte{"a": make([]byte, tc.size/2), "b": make([]byte, tc.size-tc.size/2)}}
		if err := hub.Create(context.Background(), s); (err == nil) != tc.ok {
			t.Errorf("a Secret of %d bytes: %v, want accepted = %v", tc.size, err, tc.ok)
		}
	}
}

// TestKeptBesideTheOwnerBefore: renderings an earlier Holdfast kept beside their status object
// (owned by it) are used after an upgrade, so that no chart is rendered anew, and are kept in the
// store's namespace from then on; those of another status object are not used.
func TestKeptBesideTheOwnerBefore(t *testing.T) {
	ctx := context.Background()
	owner := newOwner(t)
	db := helmService("db", "generated", "")
	store := newStore()
	s := store.Open(owner)
	before := password(t, mustRender(t, s, db))
	mustSave(t, s, "db")
	// What an earlier Holdfast kept: the same data beside the status object, owned by it.
	kept := keptSecret(t, owner)
	legacy := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: owner.Namespace, Name: owner.Name + "-render",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: holdfastv1.GroupVersion.String(), Kind: "ClusterServiceStatus", Name: owner.Name, UID: owner.UID}}},
		Type: rendercache.SecretType, Data: kept.Data}
	if err := hub.Create(ctx, legacy); err != nil {
		t.Fatal(err)
	}
	if err := hub.Delete(ctx, kept); err != nil {
		t.Fatal(err)
	}

	other := owner.DeepCopy()
	other.UID = uuid.NewUUID()
	if s, _ := pass(t, newStore(), other, []string{"db"}, db); !s.Fresh("db") {
		t.Error("a rendering kept beside another status object of that name was used")
	}
	if err := hub.Delete(ctx, keptSecret(t, other)); err != nil {
		t.Fatal(err)
	}

	after, _ := pass(t, newStore(), owner, []string{"db"}, db)
	if after.Fresh("db") {
		t.Error("the rendering kept beside the status object was not used: the chart was rendered anew")
	}
	if got := password(t, mustRender(t, newStore().Open(owner), db)); got != before {
		t.Error("the generated password changed across the upgrade")
	}
	if moved := keptSecret(t, owner); moved == nil || moved.Labels[rendercache.RenderingsOfUIDLabel] != string(owner.UID) {
		t.Errorf("not kept in the store's namespace: %v", moved)
	}
}
