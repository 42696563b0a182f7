package rendercache

import (
	"fmt"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"holdfast.dev/holdfast/internal/render"
	"holdfast.dev/holdfast/internal/testsupport"
)

func TestDeclarationFindsOnlyTheObjectsAskedFor(t *testing.T) {
	objs := []*unstructured.Unstructured{
		testsupport.Object("v1", "Namespace", "", "apps", nil),
		// Declared without a namespace: apply gives it the service's.
		testsupport.Object("v1", "ConfigMap", "", "settings", map[string]any{"line": "a\nb", "nul": "x\x00y", "n": int64(3)}),
		testsupport.Object("v1", "ConfigMap", "other", "settings", map[string]any{"k": "elsewhere"}),
		testsupport.Object("apps/v1", "Deployment", "apps", "web", nil),
	}
	for i := range 500 {
		objs = append(objs, testsupport.Object("v1", "ConfigMap", "apps", fmt.Sprintf("cm-%03d", i), map[string]any{"i": int64(i)}))
	}
	d, err := NewDeclaration("sha256:in", &render.Result{Objects: objs, Digest: "sha256:out"}, "apps")
	if err != nil {
		t.Fatal(err)
	}
	if d.objects != len(objs) || d.input != "sha256:in" || d.revision != "sha256:out" {
		t.Fatalf("declaration %d objects, input %q, revision %q", d.objects, d.input, d.revision)
	}
	settings := ObjectKey{Kind: "ConfigMap", Namespace: "apps", Name: "settings"}
	web := ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "apps", Name: "web"}
	cm := ObjectKey{Kind: "ConfigMap", Namespace: "apps", Name: "cm-321"}
	ns := ObjectKey{Kind: "Namespace", Name: "apps"}
	absent := ObjectKey{Kind: "ConfigMap", Namespace: "apps", Name: "cm-999"}
	wrongKind := ObjectKey{Kind: "Secret", Namespace: "apps", Name: "settings"}
	// What a watch event is checked against: declared objects, in the namespace apply gives them.
	elsewhere := ObjectKey{Kind: "ConfigMap", Namespace: "team-b", Name: "settings"}
	for ref, want := range map[ObjectKey]bool{settings: true, web: true, cm: true, ns: true, absent: false, wrongKind: false, elsewhere: false} {
		if got := d.Declares(ref); got != want {
			t.Errorf("declares(%s) = %v, want %v", ref, got, want)
		}
	}
	found, err := d.Find([]ObjectKey{settings, web, cm, ns, absent, wrongKind}, "apps")
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 4 {
		t.Fatalf("found %d objects, want 4: %v", len(found), found)
	}
	got := found[settings]
	if got == nil || got.Object["data"].(map[string]any)["line"] != "a\nb" || got.Object["data"].(map[string]any)["nul"] != "x\x00y" ||
		got.Object["data"].(map[string]any)["n"] != int64(3) || got.GetNamespace() != "" {
		t.Errorf("settings = %v, want the object declared without a namespace, its data intact", got)
	}
	if got := found[cm]; got == nil || got.Object["data"].(map[string]any)["i"] != int64(321) {
		t.Errorf("cm-321 = %v", got)
	}
	if found[web] == nil || found[ns] == nil {
		t.Errorf("web or the namespace not found: %v", found)
	}

	// In another default namespace, the ConfigMap declared without one is not "other"'s.
	other := ObjectKey{Kind: "ConfigMap", Namespace: "other", Name: "settings"}
	found, err = d.Find([]ObjectKey{other}, "apps")
	if err != nil || found[other].Object["data"].(map[string]any)["k"] != "elsewhere" {
		t.Errorf("settings in other = %v, %v", found, err)
	}

	if _, err := (&Declaration{frames: [][]byte{[]byte("not zstd")}, keys: map[uint64]int32{keyHash(web.Group, web.Kind, web.Namespace, web.Name): 0}}).Find([]ObjectKey{web}, ""); err == nil {
		t.Error("corrupt packing: no error")
	}
}

func TestDeclarationIsCompact(t *testing.T) {
	var objs []*unstructured.Unstructured
	for i := range 2000 {
		objs = append(objs, testsupport.Object("v1", "ConfigMap", "apps", fmt.Sprintf("settings-%04d", i), map[string]any{"key": "value", "i": int64(i)}))
	}
	d, err := NewDeclaration("in", &render.Result{Objects: objs, Digest: "out"}, "apps")
	if err != nil {
		t.Fatal(err)
	}
	// The objects' JSON is about 150 bytes each; packed, a few dozen at most, with no slack kept.
	packed, capacity := 0, 0
	for _, f := range d.frames {
		packed, capacity = packed+len(f), capacity+cap(f)
	}
	if perObject := capacity / len(objs); perObject > 40 {
		t.Errorf("%d bytes kept per object (len %d, cap %d), want at most 40", perObject, packed, capacity)
	}
	if len(d.frames) < 2 {
		t.Errorf("%d frames for %d bytes of lines; want one per %d bytes", len(d.frames), len(objs)*150, frameSize)
	}
	// Finding one object unpacks its frame alone: the last object is found, from a frame
	// nothing else is read from.
	last := ObjectKey{Kind: "ConfigMap", Namespace: "apps", Name: "settings-1999"}
	corrupt := *d
	corrupt.frames = slices.Clone(d.frames)
	for i := range corrupt.frames[:len(corrupt.frames)-1] {
		corrupt.frames[i] = []byte("not zstd")
	}
	if found, err := corrupt.Find([]ObjectKey{last}, "apps"); err != nil || found[last] == nil {
		t.Errorf("finding the last object unpacked other frames, or did not find it: %v, %v", found, err)
	}
	// Finding an object the service does not declare unpacks nothing.
	corrupt.frames[len(corrupt.frames)-1] = []byte("not zstd")
	absent := ObjectKey{Kind: "ConfigMap", Namespace: "apps", Name: "absent"}
	if found, err := corrupt.Find([]ObjectKey{absent}, "apps"); err != nil || len(found) != 0 {
		t.Errorf("finding an object not declared unpacked a frame, or found it: %v, %v", found, err)
	}
	if res, err := d.Rendering(); err != nil || len(res.Objects) != len(objs) || res.Objects[1999].GetName() != "settings-1999" {
		t.Errorf("the rendering given back from %d frames: %v", len(d.frames), err)
	}
}

// TestDeclarationGivesBackItsRendering: what a full reconcile with unchanged inputs uses instead
// of rendering is the rendering itself — every object, in order, intact, with its digest — and
// new objects each time, since apply changes what it is given.
func TestDeclarationGivesBackItsRendering(t *testing.T) {
	objs := []*unstructured.Unstructured{
		testsupport.Object("v1", "Namespace", "", "apps", nil),
		testsupport.Object("v1", "ConfigMap", "", "settings", map[string]any{"line": "a\nb", "nul": "x\x00y", "n": int64(3), "f": 1.5}),
		testsupport.Object("apps/v1", "Deployment", "apps", "web", nil),
		testsupport.Object("v1", "ConfigMap", "other", "settings", map[string]any{"k": "elsewhere"}),
	}
	digest, err := render.Digest(objs)
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewDeclaration("sha256:in", &render.Result{Objects: objs, Digest: digest}, "apps")
	if err != nil {
		t.Fatal(err)
	}
	res, err := d.Rendering()
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
	if res2, err := d.Rendering(); err != nil || res2.Objects[0].GetName() != "apps" {
		t.Errorf("a change to objects given back reached the declaration: %v, %v", res2, err)
	}
	if _, err := (&Declaration{frames: [][]byte{[]byte("not zstd")}}).Rendering(); err == nil {
		t.Error("corrupt packing: no error")
	}
	short := *d
	short.objects++
	if _, err := short.Rendering(); err == nil {
		t.Error("a declaration holding fewer objects than it says: no error")
	}
}
