package drift

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

func TestOwnWrites(t *testing.T) {
	cluster := types.NamespacedName{Namespace: "fleet", Name: "one"}
	version := func(rv string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("v1")
		u.SetKind("ConfigMap")
		u.SetNamespace("demo")
		u.SetName("web")
		u.SetResourceVersion(rv)
		return u
	}
	o := &OwnWrites{}
	k := keyOf(cluster, version("").GroupVersionKind(), "demo", "web")
	if got := o.Judge(cluster, version("5"), "sha256:a"); got != NotOwn {
		t.Fatalf("never written: %v, want NotOwn", got)
	}
	o.begin(k)
	if got := o.Judge(cluster, version("6"), "sha256:b"); got != Unsure {
		t.Fatalf("while Holdfast writes: %v, want Unsure", got)
	}
	o.end(k, true, "6", "sha256:b")
	for _, c := range []struct {
		rv, digest string
		want       Ownership
	}{
		{"6", "sha256:b", Own},
		{"6", "", Own},                  // the version it wrote
		{"9", "sha256:b", Own},          // a later version (a relist) with its owned fields as it left them
		{"7", "sha256:mallory", NotOwn}, // someone else's write under its name
	} {
		if got := o.Judge(cluster, version(c.rv), c.digest); got != c.want {
			t.Errorf("version %s, digest %s: %v, want %v", c.rv, c.digest, got, c.want)
		}
	}
	if got := o.Judge(types.NamespacedName{Namespace: "fleet", Name: "two"}, version("6"), "sha256:b"); got != NotOwn {
		t.Errorf("another cluster: %v, want NotOwn", got)
	}
	for i := 10; i < 10+ownRVs; i++ {
		o.begin(k)
		o.end(k, true, string(rune('a'+i)), "sha256:c")
	}
	if got := o.Judge(cluster, version("6"), "sha256:b"); got != NotOwn {
		t.Errorf("a version older than the last %d writes: %v, want NotOwn", ownRVs, got)
	}
	o.begin(k)
	o.end(k, false, "", "")
	if got := o.Judge(cluster, version("7"), "sha256:mallory"); got != NotOwn {
		t.Errorf("after a failed write: %v, want NotOwn", got)
	}
	o.Forget(cluster, version(""))
	if got := o.Judge(cluster, version("x"), "sha256:c"); got != NotOwn || len(o.objects) != 0 {
		t.Errorf("forgotten: %v, %d entries", got, len(o.objects))
	}
}
