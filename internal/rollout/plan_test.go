package rollout

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// fleet is six clusters in three waves (label wave=1..3), each with a status object the test
// moves as the ClusterServiceStatus controller would.
type fleet struct {
	t        *testing.T
	clusters []Cluster
	status   *holdfastv1.RolloutStatus
	now      time.Time
	strategy holdfastv1.RolloutStrategy
}

func newFleet(t *testing.T, strategy holdfastv1.RolloutStrategy) *fleet {
	f := &fleet{t: t, now: time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC), strategy: strategy}
	for i := range 6 {
		css := &holdfastv1.ClusterServiceStatus{}
		css.Generation = 1
		f.clusters = append(f.clusters, Cluster{
			Key: fmt.Sprintf("ns/c%d", i), Labels: map[string]string{"wave": fmt.Sprint(i/2 + 1)}, Status: css,
		})
	}
	return f
}

// plan makes a plan for revision and applies its assignments to the status objects (a changed
// revision is a new generation, not yet reconciled).
func (f *fleet) plan(revision string, resume, abort string) Plan {
	f.t.Helper()
	p, err := Make(Input{Strategy: f.strategy, Previous: f.status, Revision: revision, Clusters: f.clusters, Resume: resume, Abort: abort, Now: f.now})
	if err != nil {
		f.t.Fatal(err)
	}
	for _, c := range f.clusters {
		rev, ok := p.Assign[c.Key]
		if !ok {
			f.t.Fatalf("plan left %s without a revision", c.Key)
		}
		if c.Status.Spec.Revision != rev {
			c.Status.Spec.Revision = rev
			c.Status.Generation++
		}
	}
	// Kept as the API server keeps it: times to the second.
	raw, err := json.Marshal(p.Status)
	if err != nil {
		f.t.Fatal(err)
	}
	f.status = &holdfastv1.RolloutStatus{}
	if err := json.Unmarshal(raw, f.status); err != nil {
		f.t.Fatal(err)
	}
	return p
}

// reconcile has cluster i reconcile its revision and end Ready (or failed).
func (f *fleet) reconcile(i int, ready bool) {
	css := f.clusters[i].Status
	css.Status.ObservedGeneration, css.Status.Revision = css.Generation, css.Spec.Revision
	c := metav1.Condition{Type: holdfastv1.ReadyCondition, Status: metav1.ConditionTrue, Reason: holdfastv1.ReadyReason}
	if !ready {
		c = metav1.Condition{Type: holdfastv1.ReadyCondition, Status: metav1.ConditionFalse, Reason: holdfastv1.HealthTimeoutReason, Message: "Deployment web: pods crash"}
	}
	css.Status.Conditions = []metav1.Condition{c}
}

func (f *fleet) revisions() string {
	out := ""
	for _, c := range f.clusters {
		out += c.Status.Spec.Revision + " "
	}
	return out
}

func (f *fleet) expect(phase holdfastv1.RolloutPhase, revisions string) {
	f.t.Helper()
	if f.status.Phase != phase || f.revisions() != revisions {
		f.t.Fatalf("phase %s, revisions %q; want %s, %q", f.status.Phase, f.revisions(), phase, revisions)
	}
}

func TestWavesInOrderAndHaltOnFailure(t *testing.T) {
	f := newFleet(t, holdfastv1.RolloutStrategy{WaveLabel: "wave", MaxInFlight: ptrTo(intstr.FromInt32(1))})
	f.plan("r1", "", "")
	f.expect(holdfastv1.RolloutComplete, "r1 r1 r1 r1 r1 r1 ")
	for i := range 6 {
		f.reconcile(i, true)
	}

	f.plan("r2", "", "")
	f.expect(holdfastv1.RolloutProgressing, "r2 r1 r1 r1 r1 r1 ")
	f.plan("r2", "", "")
	f.expect(holdfastv1.RolloutProgressing, "r2 r1 r1 r1 r1 r1 ") // maxInFlight 1: c0 not healthy yet
	f.reconcile(0, true)
	f.plan("r2", "", "")
	f.expect(holdfastv1.RolloutProgressing, "r2 r2 r1 r1 r1 r1 ")
	f.reconcile(1, true)
	f.plan("r2", "", "")
	f.expect(holdfastv1.RolloutProgressing, "r2 r2 r2 r1 r1 r1 ")
	if f.status.Wave != 1 || f.status.Waves[0].Healthy != 2 || f.status.Waves[0].Name != "wave=1" {
		t.Fatalf("wave %d, waves %+v", f.status.Wave, f.status.Waves)
	}

	f.reconcile(2, false)
	f.plan("r2", "", "")
	f.expect(holdfastv1.RolloutHalted, "r2 r2 r2 r1 r1 r1 ")
	if len(f.status.FailedClusters) != 1 || f.status.FailedClusters[0].Cluster != "ns/c2" || f.status.Failures != 1 {
		t.Fatalf("failed clusters %+v", f.status.FailedClusters)
	}
	f.plan("r2", "", "")
	f.expect(holdfastv1.RolloutHalted, "r2 r2 r2 r1 r1 r1 ")

	// Resume: c2's failure no longer counts; c3 goes on.
	f.plan("r2", "t1", "")
	f.expect(holdfastv1.RolloutProgressing, "r2 r2 r2 r2 r1 r1 ")
	if f.status.Failures != 0 || !f.status.FailedClusters[0].Resumed {
		t.Fatalf("after resume: %+v", f.status.FailedClusters)
	}
	// Abort: back to r1 everywhere.
	f.plan("r2", "t1", "t2")
	f.expect(holdfastv1.RolloutAborted, "r1 r1 r1 r1 r1 r1 ")
	f.plan("r2", "t1", "t2")
	f.expect(holdfastv1.RolloutAborted, "r1 r1 r1 r1 r1 r1 ")
	// A new revision starts over from the stable one.
	f.plan("r3", "t1", "t2")
	f.expect(holdfastv1.RolloutProgressing, "r3 r1 r1 r1 r1 r1 ")
	if f.status.StableRevision != "r1" {
		t.Fatalf("stable revision %s", f.status.StableRevision)
	}
}

// TestPauseIsWhole: a wave healthy at a fraction of a second is paused after for the whole
// pause, although status keeps its time to the second.
func TestPauseIsWhole(t *testing.T) {
	f := newFleet(t, holdfastv1.RolloutStrategy{WaveLabel: "wave", PauseBetweenWaves: &metav1.Duration{Duration: time.Second}})
	f.plan("r1", "", "")
	f.plan("r2", "", "")
	f.reconcile(0, true)
	f.reconcile(1, true)
	f.now = f.now.Add(600 * time.Millisecond)
	if p := f.plan("r2", "", ""); p.Requeue != 1400*time.Millisecond {
		t.Fatalf("requeue %s, want 1.4s (the pause from the next whole second)", p.Requeue)
	}
	f.expect(holdfastv1.RolloutPausing, "r2 r2 r1 r1 r1 r1 ")
	f.now = f.now.Add(time.Second)
	f.plan("r2", "", "")
	f.expect(holdfastv1.RolloutPausing, "r2 r2 r1 r1 r1 r1 ")
	f.now = f.now.Add(400 * time.Millisecond)
	f.plan("r2", "", "")
	f.expect(holdfastv1.RolloutProgressing, "r2 r2 r2 r2 r1 r1 ")
}

func TestPauseBetweenWavesAndJoiningCluster(t *testing.T) {
	f := newFleet(t, holdfastv1.RolloutStrategy{
		Waves: []holdfastv1.RolloutWave{
			{Name: "canary", ClusterSelector: metav1.LabelSelector{MatchLabels: map[string]string{"wave": "1"}}},
			{Name: "second", ClusterSelector: metav1.LabelSelector{MatchLabels: map[string]string{"wave": "2"}}},
		},
		PauseBetweenWaves: &metav1.Duration{Duration: time.Minute},
	})
	f.plan("r1", "", "")
	f.plan("r2", "", "")
	f.expect(holdfastv1.RolloutProgressing, "r2 r2 r1 r1 r1 r1 ")
	f.reconcile(0, true)
	f.reconcile(1, true)
	p := f.plan("r2", "", "")
	f.expect(holdfastv1.RolloutPausing, "r2 r2 r1 r1 r1 r1 ")
	if p.Requeue != time.Minute {
		t.Fatalf("requeue %s", p.Requeue)
	}
	// A cluster joins the last wave during the pause: it gets the current revision at once.
	f.clusters = append(f.clusters, Cluster{Key: "ns/c6", Labels: map[string]string{"wave": "3"}, Status: &holdfastv1.ClusterServiceStatus{}})
	f.now = f.now.Add(61 * time.Second)
	f.plan("r2", "", "")
	f.expect(holdfastv1.RolloutProgressing, "r2 r2 r2 r2 r1 r1 r2 ")
	if names := []string{f.status.Waves[0].Name, f.status.Waves[2].Name}; names[0] != "canary" || names[1] != "rest" {
		t.Fatalf("waves %+v", f.status.Waves)
	}
	for i := 2; i < 7; i++ {
		f.reconcile(i, true)
	}
	f.plan("r2", "", "")
	f.now = f.now.Add(61 * time.Second)
	f.plan("r2", "", "")
	f.expect(holdfastv1.RolloutProgressing, "r2 r2 r2 r2 r2 r2 r2 ")
	f.reconcile(4, true)
	f.reconcile(5, true)
	f.plan("r2", "", "")
	f.expect(holdfastv1.RolloutComplete, "r2 r2 r2 r2 r2 r2 r2 ")
	if f.status.StableRevision != "r2" {
		t.Fatalf("stable %s", f.status.StableRevision)
	}
}

func TestFailureThresholdPercent(t *testing.T) {
	f := newFleet(t, holdfastv1.RolloutStrategy{FailureThreshold: ptrTo(intstr.FromString("50%"))})
	f.plan("r1", "", "")
	f.plan("r2", "", "")
	f.expect(holdfastv1.RolloutProgressing, "r2 r2 r2 r2 r2 r2 ")
	f.reconcile(0, false)
	f.reconcile(1, false)
	f.plan("r2", "", "")
	f.expect(holdfastv1.RolloutProgressing, "r2 r2 r2 r2 r2 r2 ") // 2 of 6 < 3
	f.reconcile(2, false)
	f.plan("r2", "", "")
	f.expect(holdfastv1.RolloutHalted, "r2 r2 r2 r2 r2 r2 ")
}

func ptrTo[T any](v T) *T { return &v }

// TestRevisionNames: a revision is named by its content: the services and the templates' specs
// and pinned artifacts, not their conditions; a template missing is an error naming the service.
func TestRevisionNames(t *testing.T) {
	svc := []holdfastv1.Service{{Name: "web", Template: holdfastv1.TemplateReference{Namespace: "t", Name: "web"}}}
	tpl := &holdfastv1.ServiceTemplate{Spec: holdfastv1.ServiceTemplateSpec{Inline: "a"}}
	tpl.Namespace, tpl.Name = "t", "web"
	name := func(tpl *holdfastv1.ServiceTemplate) string {
		t.Helper()
		s, err := NewSnapshot(svc, holdfastv1.ClusterSelector{}, map[string]*holdfastv1.ServiceTemplate{"t/web": tpl})
		if err != nil {
			t.Fatal(err)
		}
		_, n, err := s.Encode("platform")
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	first := name(tpl)
	withConditions := tpl.DeepCopy()
	withConditions.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue}}
	withConditions.Status.ObservedGeneration = 7
	if got := name(withConditions); got != first {
		t.Errorf("conditions changed the revision: %s, %s", first, got)
	}
	newArtifact := tpl.DeepCopy()
	newArtifact.Status.Artifact = &holdfastv1.ArtifactStatus{Digest: "sha256:0123"}
	newSpec := tpl.DeepCopy()
	newSpec.Spec.Inline = "b"
	for what, other := range map[string]*holdfastv1.ServiceTemplate{"a pinned artifact": newArtifact, "the spec": newSpec} {
		if got := name(other); got == first {
			t.Errorf("%s did not change the revision %s", what, first)
		}
	}
	if _, err := NewSnapshot(svc, holdfastv1.ClusterSelector{}, nil); err == nil || !strings.Contains(err.Error(), `service "web": ServiceTemplate t/web not found`) {
		t.Errorf("missing template: %v", err)
	}
}
