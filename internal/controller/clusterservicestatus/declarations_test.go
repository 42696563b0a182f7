package clusterservicestatus

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/apply"
	"holdfast.dev/holdfast/internal/render"
)

func object(apiVersion, kind, namespace, name string, data map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{"name": name}}}
	if namespace != "" {
		u.SetNamespace(namespace)
	}
	if data != nil {
		u.Object["data"] = data
	}
	return u
}

func TestDeclarationFindsOnlyTheObjectsAskedFor(t *testing.T) {
	objs := []*unstructured.Unstructured{
		object("v1", "Namespace", "", "apps", nil),
		// Declared without a namespace: apply gives it the service's.
		object("v1", "ConfigMap", "", "settings", map[string]any{"line": "a\nb", "nul": "x\x00y", "n": int64(3)}),
		object("v1", "ConfigMap", "other", "settings", map[string]any{"k": "elsewhere"}),
		object("apps/v1", "Deployment", "apps", "web", nil),
	}
	for i := range 500 {
		objs = append(objs, object("v1", "ConfigMap", "apps", fmt.Sprintf("cm-%03d", i), map[string]any{"i": int64(i)}))
	}
	d, err := newDeclaration("sha256:in", &render.Result{Objects: objs, Digest: "sha256:out"}, "apps")
	if err != nil {
		t.Fatal(err)
	}
	if d.objects != len(objs) || d.input != "sha256:in" || d.revision != "sha256:out" {
		t.Fatalf("declaration %d objects, input %q, revision %q", d.objects, d.input, d.revision)
	}
	settings := apply.Ref{Version: "v1", Kind: "ConfigMap", Namespace: "apps", Name: "settings"}
	web := apply.Ref{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "apps", Name: "web"}
	cm := apply.Ref{Version: "v1", Kind: "ConfigMap", Namespace: "apps", Name: "cm-321"}
	ns := apply.Ref{Version: "v1", Kind: "Namespace", Name: "apps"}
	absent := apply.Ref{Version: "v1", Kind: "ConfigMap", Namespace: "apps", Name: "cm-999"}
	wrongKind := apply.Ref{Version: "v1", Kind: "Secret", Namespace: "apps", Name: "settings"}
	// What a watch event is checked against: declared objects, in the namespace apply gives them.
	elsewhere := apply.Ref{Version: "v1", Kind: "ConfigMap", Namespace: "team-b", Name: "settings"}
	for ref, want := range map[apply.Ref]bool{settings: true, web: true, cm: true, ns: true, absent: false, wrongKind: false, elsewhere: false} {
		if got := d.declares(ref); got != want {
			t.Errorf("declares(%s) = %v, want %v", ref, got, want)
		}
	}
	found, err := d.find([]apply.Ref{settings, web, cm, ns, absent, wrongKind}, "apps")
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 4 {
		t.Fatalf("found %d objects, want 4: %v", len(found), found)
	}
	got := found[unversioned(settings)]
	if got == nil || got.Object["data"].(map[string]any)["line"] != "a\nb" || got.Object["data"].(map[string]any)["nul"] != "x\x00y" ||
		got.Object["data"].(map[string]any)["n"] != int64(3) || got.GetNamespace() != "" {
		t.Errorf("settings = %v, want the object declared without a namespace, its data intact", got)
	}
	if got := found[unversioned(cm)]; got == nil || got.Object["data"].(map[string]any)["i"] != int64(321) {
		t.Errorf("cm-321 = %v", got)
	}
	if found[unversioned(web)] == nil || found[unversioned(ns)] == nil {
		t.Errorf("web or the namespace not found: %v", found)
	}

	// In another default namespace, the ConfigMap declared without one is not "other"'s.
	other := apply.Ref{Version: "v1", Kind: "ConfigMap", Namespace: "other", Name: "settings"}
	found, err = d.find([]apply.Ref{other}, "apps")
	if err != nil || found[unversioned(other)].Object["data"].(map[string]any)["k"] != "elsewhere" {
		t.Errorf("settings in other = %v, %v", found, err)
	}

	if _, err := (&declaration{packed: []byte("not zstd")}).find([]apply.Ref{web}, ""); err == nil {
		t.Error("corrupt packing: no error")
	}
}

func TestRecordedStatusHoldsOnlyEntriesNotInSync(t *testing.T) {
	m := newMemory()
	key := types.NamespacedName{Namespace: "fleet", Name: "web.c1"}
	entry := func(name string, state holdfastv1.ResourceState) holdfastv1.ResourceStatus {
		return holdfastv1.ResourceStatus{ResourceRef: holdfastv1.ResourceRef{Version: "v1", Kind: "ConfigMap", Namespace: "apps", Name: name}, State: state}
	}
	css := &holdfastv1.ClusterServiceStatus{}
	css.ResourceVersion = "12"
	css.Status.Resources = []holdfastv1.ResourceStatus{entry("a", holdfastv1.ResourceInSync), entry("b", holdfastv1.ResourceContested), entry("c", holdfastv1.ResourceInSync)}
	m.setRecorded(key, "c1", css, "9")

	for _, rv := range []string{"12", "9"} {
		rec := m.recordedAt(key, rv)
		if rec == nil {
			t.Fatalf("nothing recorded at %s", rv)
		}
		if len(rec.unusual) != 1 || rec.unusual[apply.Ref{Kind: "ConfigMap", Namespace: "apps", Name: "b"}].State != holdfastv1.ResourceContested {
			t.Errorf("unusual entries %v, want b Contested only", rec.unusual)
		}
	}
	if m.recordedAt(key, "13") != nil {
		t.Error("a version someone else wrote: the record was used")
	}
	// Written again over it, twice, and read back: the cache may still hold any of 9, 12, 14.
	css.ResourceVersion = "14"
	m.setRecorded(key, "c1", css, "12")
	css.ResourceVersion = "16"
	m.setRecorded(key, "c1", css, "14")
	m.setRecorded(key, "c1", css, "")
	for _, rv := range []string{"9", "12", "14", "16"} {
		if m.recordedAt(key, rv) == nil {
			t.Errorf("our own chain of writes: version %s not accepted", rv)
		}
	}
	css.ResourceVersion = "20"
	m.setRecorded(key, "c1", css, "18") // over a version someone else wrote
	if m.recordedAt(key, "16") != nil || m.recordedAt(key, "18") == nil {
		t.Error("a write over someone else's version: the chain before it is still accepted")
	}
	css.ResourceVersion = "12"
	m.setRecorded(key, "c1", css, "")
	if m.recordedAt(key, "9") != nil {
		t.Error("recorded as read: the version before was accepted")
	}

	// Too many entries not InSync: nothing is recorded, the whole object is read instead.
	css.Status.Resources = nil
	for i := range maxUnusual + 1 {
		css.Status.Resources = append(css.Status.Resources, entry(fmt.Sprint(i), holdfastv1.ResourceFailed))
	}
	m.setRecorded(key, "c1", css, "")
	if m.recordedAt(key, "12") != nil {
		t.Error("over maxUnusual: still recorded")
	}
	m.forget(key)
	if n := m.statusObjects(); n != 0 {
		t.Errorf("%d status objects held after forget", n)
	}
}

func TestDeclarationIsCompact(t *testing.T) {
	var objs []*unstructured.Unstructured
	for i := range 2000 {
		objs = append(objs, object("v1", "ConfigMap", "apps", fmt.Sprintf("settings-%04d", i), map[string]any{"key": "value", "i": int64(i)}))
	}
	d, err := newDeclaration("in", &render.Result{Objects: objs, Digest: "out"}, "apps")
	if err != nil {
		t.Fatal(err)
	}
	// The objects' JSON is about 150 bytes each; packed, a few dozen at most, with no slack kept.
	if perObject := cap(d.packed) / len(objs); perObject > 40 {
		t.Errorf("%d bytes kept per object (len %d, cap %d), want at most 40", perObject, len(d.packed), cap(d.packed))
	}
}

// TestDeclarationGivesBackItsRendering: what a full reconcile with unchanged inputs uses instead
// of rendering is the rendering itself — every object, in order, intact, with its digest — and
// new objects each time, since apply changes what it is given.
func TestDeclarationGivesBackItsRendering(t *testing.T) {
	objs := []*unstructured.Unstructured{
		object("v1", "Namespace", "", "apps", nil),
		object("v1", "ConfigMap", "", "settings", map[string]any{"line": "a\nb", "nul": "x\x00y", "n": int64(3), "f": 1.5}),
		object("apps/v1", "Deployment", "apps", "web", nil),
		object("v1", "ConfigMap", "other", "settings", map[string]any{"k": "elsewhere"}),
	}
	digest, err := render.Digest(objs)
	if err != nil {
		t.Fatal(err)
	}
	d, err := newDeclaration("sha256:in", &render.Result{Objects: objs, Digest: digest}, "apps")
	if err != nil {
		t.Fatal(err)
	}
	res, err := d.rendering()
	if err != nil {
		t.Fatal(err)
	}
	if res.Digest != digest || len(res.Objects) != len(objs) {
		t.Fatalf("rendering: %d objects, digest %s; want %d, %s", len(res.Objects), res.Digest, len(objs), digest)
	}
	if again, err := render.Digest(res.Objects); err != nil || again != digest {
		t.Fatalf("the objects given back digest to %s (%v), want %s", again, err, digest)
	}
	for i := range objs {
		if !equality.Semantic.DeepEqual(res.Objects[i].Object, objs[i].Object) {
			t.Errorf("object %d = %v, want %v", i, res.Objects[i].Object, objs[i].Object)
		}
	}
	res.Objects[0].SetName("changed-by-apply")
	if res2, err := d.rendering(); err != nil || res2.Objects[0].GetName() != "apps" {
		t.Errorf("a change to objects given back reached the declaration: %v, %v", res2, err)
	}
	if _, err := (&declaration{packed: []byte("not zstd")}).rendering(); err == nil {
		t.Error("corrupt packing: no error")
	}
	short := *d
	short.objects++
	if _, err := short.rendering(); err == nil {
		t.Error("a declaration holding fewer objects than it says: no error")
	}
}
