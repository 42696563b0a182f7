package rollout

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// previewing is a cluster that recorded changes for the preview request.
func previewing(key, revision string, changes ...holdfastv1.PreviewChange) Cluster {
	css := &holdfastv1.ClusterServiceStatus{}
	css.Generation, css.Status.ObservedGeneration = 2, 2
	css.Status.Preview = NewClusterPreview(revision, changes, time.Unix(0, 0))
	return Cluster{Key: key, Status: css}
}

func update(object, line string) holdfastv1.PreviewChange {
	return holdfastv1.PreviewChange{Service: "web", Object: object, Action: holdfastv1.PreviewUpdate, Diff: []string{line}}
}

// TestSummarizeGroupsIdenticalChanges: clusters with the same changes are one group, largest
// first; unchanged clusters are counted, not grouped; a refusal is its own group with its
// message; a cluster that has not previewed this revision is not counted as previewed.
func TestSummarizeGroupsIdenticalChanges(t *testing.T) {
	image := update("apps/v1 Deployment demo/web", `/spec/template/spec/containers/0/image: "web:1.2" -> "web:1.3"`)
	mode := update("v1 ConfigMap demo/web-settings", `/data/mode: "a" -> "b"`)
	refused := holdfastv1.PreviewChange{Service: "web", Object: "apps/v1 Deployment demo/web", Action: holdfastv1.PreviewRefuse,
		Diff: []string{"admission webhook denied: images from web:1.3 are not allowed"}}
	clusters := []Cluster{
		previewing("ns/a", "r2", image), previewing("ns/b", "r2", image), previewing("ns/c", "r2", image),
		previewing("ns/d", "r2", image, mode), previewing("ns/e", "r2"), previewing("ns/f", "r2", refused),
		previewing("ns/g", "r1", image),
	}
	sum := Summarize("r2", clusters)
	if sum.Clusters != 7 || sum.Previewed != 6 || sum.Changed != 4 || sum.NoChange != 1 || sum.Refused != 1 {
		t.Fatalf("counts %+v", sum)
	}
	if len(sum.Groups) != 3 {
		t.Fatalf("groups %+v, want 3", sum.Groups)
	}
	if g := sum.Groups[0]; g.Clusters != 3 || strings.Join(g.Examples, ",") != "ns/a,ns/b,ns/c" || len(g.Changes) != 1 {
		t.Errorf("largest group %+v", g)
	}
	if g := sum.Groups[2]; g.Outcome != holdfastv1.PreviewRefused || !strings.Contains(g.Message, "admission webhook denied") {
		t.Errorf("refused group %+v", g)
	}
	again := Summarize("r2", clusters)
	if again.Digest != sum.Digest || sum.Digest == "" {
		t.Errorf("digest not stable: %s, %s", sum.Digest, again.Digest)
	}
	clusters[4] = previewing("ns/e", "r2", mode)
	if Summarize("r2", clusters).Digest == sum.Digest {
		t.Error("a cluster's changes changed and the preview's digest did not")
	}
}

// TestSummarizeNamesClustersASelectorMoves: clusters only the revision's selector selects, and
// those it no longer selects, are grouped apart from the clusters it keeps even when their
// changes are the same, and counted; a leaving cluster where nothing would change (unmatchPolicy
// Leave) is grouped too, where a kept unchanged one is only counted.
func TestSummarizeNamesClustersASelectorMoves(t *testing.T) {
	create := holdfastv1.PreviewChange{Service: "web", Object: "v1 ConfigMap demo/web", Action: holdfastv1.PreviewCreate}
	kept, joining, leaving, left, same := previewing("ns/a", "r2", create), previewing("ns/b", "r2", create),
		previewing("ns/c", "r2"), previewing("ns/d", "r2"), previewing("ns/e", "r2")
	joining.Membership, leaving.Membership, left.Membership = Joining, Leaving, Leaving
	leaving.Status.Status.Preview = NewClusterPreview("r2", []holdfastv1.PreviewChange{{Service: "web", Object: "v1 ConfigMap demo/web", Action: holdfastv1.PreviewDelete}}, time.Unix(0, 0))
	sum := Summarize("r2", []Cluster{kept, joining, leaving, left, same})
	if sum.Joining != 1 || sum.Leaving != 2 || sum.NoChange != 2 {
		t.Fatalf("counts %+v: want 1 joining, 2 leaving, 2 unchanged", sum)
	}
	got := map[string]holdfastv1.PreviewSelection{}
	for _, g := range sum.Groups {
		got[strings.Join(g.Examples, ",")] = g.Selection
	}
	want := map[string]holdfastv1.PreviewSelection{"ns/a": "", "ns/b": holdfastv1.PreviewJoining, "ns/c": holdfastv1.PreviewLeaving, "ns/d": holdfastv1.PreviewLeaving}
	if !maps.Equal(got, want) {
		t.Fatalf("groups %v, want %v", got, want)
	}
}

// TestPreviewStaysBounded: a thousand clusters, each with its own large diff, make a summary
// under 64 KiB, and one cluster's huge preview is cut with its digest of the whole.
func TestPreviewStaysBounded(t *testing.T) {
	var clusters []Cluster
	long := strings.Repeat("x", 2000)
	for i := range 1000 {
		var changes []holdfastv1.PreviewChange
		for j := range 40 {
			lines := make([]string, 70)
			for k := range lines {
				lines[k] = fmt.Sprintf("/data/k%d: %q -> %q", k, long[:200], fmt.Sprint(i))
			}
			lines[0] += long
			changes = append(changes, holdfastv1.PreviewChange{Service: "web", Object: fmt.Sprintf("v1 ConfigMap ns/c%d", j), Action: holdfastv1.PreviewUpdate, Diff: lines})
		}
		clusters = append(clusters, previewing(fmt.Sprintf("ns/c%04d", i), "r2", changes...))
	}
	one := clusters[0].Status.Status.Preview
	b, _ := json.Marshal(one)
	if len(b) > 40<<10 || len(one.Changes[0].Diff) != 65 || len(one.Changes[0].Diff[0]) > 600 || one.Omitted == 0 || len(one.Changes)+int(one.Omitted) != 40 {
		t.Errorf("cluster preview: %d bytes, %d changes kept, %d omitted", len(b), len(one.Changes), one.Omitted)
	}
	sum := Summarize("r2", clusters)
	b, _ = json.Marshal(sum)
	if len(b) >= 64<<10 {
		t.Errorf("summary is %d bytes", len(b))
	}
	if int(sum.OmittedGroups)+len(sum.Groups) != 1000 || sum.Changed != 1000 {
		t.Errorf("groups %d shown + %d omitted, changed %d", len(sum.Groups), sum.OmittedGroups, sum.Changed)
	}
}
