package drift

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// webVersion is version rv of ConfigMap demo/web.
func webVersion(rv string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("ConfigMap")
	u.SetNamespace("demo")
	u.SetName("web")
	u.SetResourceVersion(rv)
	return u
}

func TestOwnWrites(t *testing.T) {
	cluster := types.NamespacedName{Namespace: "fleet", Name: "one"}
	version := webVersion
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

// A version of an object is superseded once Holdfast has written the object after it: a watch
// report of it arriving later is no new drift. A deletion's watch event must not make Holdfast
// forget a write it made after that deletion (re-creating the object).
func TestSuperseded(t *testing.T) {
	cluster := types.NamespacedName{Namespace: "fleet", Name: "one"}
	cm := &unstructured.Unstructured{}
	cm.SetAPIVersion("v1")
	cm.SetKind("ConfigMap")
	gvk := cm.GroupVersionKind()
	o := &OwnWrites{}
	if o.Superseded(cluster, gvk, "demo", "web", "19") {
		t.Fatal("never written: superseded")
	}
	k := keyOf(cluster, gvk, "demo", "web")
	o.begin(k)
	o.end(k, true, "20", "sha256:a")
	for rv, want := range map[string]bool{"19": true, "9": true, "20": false, "21": false, "100": false, "": false, "x": false, "020": false} {
		if got := o.Superseded(cluster, gvk, "demo", "web", rv); got != want {
			t.Errorf("version %q after a write returned 20: superseded %v, want %v", rv, got, want)
		}
	}
	if o.Superseded(types.NamespacedName{Namespace: "fleet", Name: "two"}, gvk, "demo", "web", "19") {
		t.Error("another cluster's object: superseded")
	}
	deleted := cm.DeepCopy()
	deleted.SetNamespace("demo")
	deleted.SetName("web")
	deleted.SetResourceVersion("18") // deleted before Holdfast wrote 20 (re-created it)
	o.Forget(cluster, deleted)
	if !o.Superseded(cluster, gvk, "demo", "web", "18") {
		t.Error("a deletion's event older than Holdfast's write made it forget that write")
	}
	deleted.SetResourceVersion("25")
	o.Forget(cluster, deleted)
	if len(o.objects) != 0 {
		t.Errorf("deleted after Holdfast's last write: %d entries kept", len(o.objects))
	}
}

// TestJudgeOrWait: a version seen while Holdfast's writes to the object are under way is judged
// once they are done, not compared: Own when a write returned it (or left its owned fields), and
// NotOwn when none did; with two writes under way, only once both are done.
func TestJudgeOrWait(t *testing.T) {
	cluster := types.NamespacedName{Namespace: "fleet", Name: "one"}
	version := webVersion
	o := &OwnWrites{}
	k := keyOf(cluster, version("").GroupVersionKind(), "demo", "web")
	verdicts := map[string][]Ownership{}
	wait := func(rv, digest string) bool {
		t.Helper()
		got, waiting := o.JudgeOrWait(cluster, version(rv), digest, func(v Ownership) { verdicts[rv] = append(verdicts[rv], v) })
		if waiting != (got == Unsure) {
			t.Fatalf("version %s: %v, waiting %v", rv, got, waiting)
		}
		return waiting
	}
	if wait("5", "sha256:a") {
		t.Fatal("nothing written: the version waited")
	}
	o.begin(k)
	o.begin(k)
	if !wait("6", "sha256:b") || !wait("7", "sha256:mallory") {
		t.Fatal("versions seen while Holdfast writes did not wait")
	}
	o.end(k, true, "6", "sha256:b")
	if len(verdicts["6"]) != 1 || verdicts["6"][0] != Own {
		t.Errorf("the version the first write returned: %v, want Own once", verdicts["6"])
	}
	if len(verdicts["7"]) != 0 {
		t.Errorf("a version judged while a write it may be is still under way: %v", verdicts["7"])
	}
	o.end(k, false, "", "")
	if len(verdicts["7"]) != 1 || verdicts["7"][0] != NotOwn {
		t.Errorf("a version no write returned: %v, want NotOwn once", verdicts["7"])
	}
	o.begin(k)
	for i := range maxWaiting {
		if !wait(string(rune('a'+i)), "") {
			t.Fatalf("version %d of %d did not wait", i+1, maxWaiting)
		}
	}
	if got, waiting := o.JudgeOrWait(cluster, version("z"), "", func(Ownership) { t.Error("called for a version that did not wait") }); got != Unsure || waiting {
		t.Errorf("one version too many: %v, waiting %v; want Unsure, not waiting", got, waiting)
	}
	o.end(k, true, "a", "sha256:c")
	if len(verdicts["a"]) != 1 || verdicts["a"][0] != Own || len(verdicts["b"]) != 1 || verdicts["b"][0] != NotOwn {
		t.Errorf("after the write: a %v, b %v; want Own and NotOwn", verdicts["a"], verdicts["b"])
	}
}
