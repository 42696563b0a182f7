package clusterservicestatus_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/naming"
	"holdfast.dev/holdfast/internal/notify"
)

// sharedCluster registers on the hub a Cluster named name that reaches the suite's target with
// the target's own kubeconfig Secret: several registrations of one API server, whose objects a
// template keeps apart by naming them after the Cluster.
func sharedCluster(t *testing.T, name, target string, labels map[string]string) {
	t.Helper()
	ctx := context.Background()
	tc := &holdfastv1.Cluster{}
	NewWithT(t).Expect(hub.Get(ctx, clusterKey(target), tc)).To(Succeed())
	c := &holdfastv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: clusterNamespace, Name: name, Labels: labels}, Spec: tc.Spec}
	NewWithT(t).Expect(hub.Create(ctx, c)).To(Succeed())
	t.Cleanup(func() {
		_ = hub.Delete(ctx, c)
		NewWithT(t).Eventually(func() bool { return apiNotFound(hub.Get(ctx, client.ObjectKeyFromObject(c), c)) }).
			WithTimeout(timeout).WithPolling(poll).Should(BeTrue(), "Cluster %s still exists", name)
	})
}

// rolloutFleet is the clusters of a rollout test: name, and the target it is on.
type rolloutFleet struct {
	set     string
	names   []string
	targets map[string]string
}

// revisionOn reads the revision the app ConfigMap of cluster says ("" when absent).
func (f *rolloutFleet) revisionOn(cluster string) string {
	cm := &corev1.ConfigMap{}
	if err := targets[f.targets[cluster]].Get(context.Background(), client.ObjectKey{Namespace: cluster, Name: "app"}, cm); err != nil {
		return ""
	}
	return cm.Data["rev"]
}

// expectRevisions waits until every cluster's ConfigMap says the revision want gives it.
func (f *rolloutFleet) expectRevisions(t *testing.T, want func(cluster string) string) {
	t.Helper()
	eventually(t, func(g Gomega) {
		for _, c := range f.names {
			g.Expect(f.revisionOn(c)).To(Equal(want(c)), func() string { return "revision on " + c + "; " + f.state() })
		}
	})
}

// state says what the rollout and each cluster's status object hold, and what each revision
// deploys, for a failure message.
func (f *rolloutFleet) state() string {
	ctx := context.Background()
	var b strings.Builder
	m := &holdfastv1.MultiClusterService{}
	if err := hub.Get(ctx, client.ObjectKey{Name: f.set}, m); err == nil && m.Status.Rollout != nil {
		ro := m.Status.Rollout
		fmt.Fprintf(&b, "rollout: phase %s, wave %d, revision %s, stable %s, resume %q, abort %q; ",
			ro.Phase, ro.Wave, ro.Revision, ro.StableRevision, ro.LastHandledResume, ro.LastHandledAbort)
	}
	revs := &appsv1.ControllerRevisionList{}
	if err := hub.List(ctx, revs, client.InNamespace(clusterNamespace)); err == nil {
		for _, cr := range revs.Items {
			if strings.HasPrefix(cr.Name, f.set) {
				fmt.Fprintf(&b, "%s (#%d) has rev %s; ", cr.Name, cr.Revision, regexp.MustCompile(`rev: \\"[^\\]*`).FindString(string(cr.Data.Raw)))
			}
		}
	}
	for _, c := range f.names {
		css := &holdfastv1.ClusterServiceStatus{}
		if err := hub.Get(ctx, client.ObjectKey{Namespace: clusterNamespace, Name: naming.StatusName(f.set, c)}, css); err != nil {
			fmt.Fprintf(&b, "%s: %v; ", c, err)
			continue
		}
		fmt.Fprintf(&b, "%s: configmap %q, spec.revision %s, status.revision %s, generation %d observed %d; ",
			c, f.revisionOn(c), css.Spec.Revision, css.Status.Revision, css.Generation, css.Status.ObservedGeneration)
	}
	return b.String()
}

// watchOrder records, every 50 ms, when each cluster first shows revision rev, until stop.
func (f *rolloutFleet) watchOrder(rev string) (stop func() map[string]time.Time) {
	seen := map[string]time.Time{}
	sample := func() {
		for _, c := range f.names {
			if _, ok := seen[c]; !ok && f.revisionOn(c) == rev {
				seen[c] = time.Now()
			}
		}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			sample()
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	})
	// A last sample: a cluster may have changed after the one before, and before the caller
	// saw every cluster at rev.
	return func() map[string]time.Time { close(done); wg.Wait(); sample(); return seen }
}

func rolloutOf(g Gomega, name string) *holdfastv1.MultiClusterService {
	m := &holdfastv1.MultiClusterService{}
	g.Expect(hub.Get(context.Background(), client.ObjectKey{Name: name}, m)).To(Succeed())
	g.Expect(m.Status.Rollout).NotTo(BeNil())
	return m
}

// TestRolloutInWaves: six clusters in three waves (label wave). A new template revision reaches
// them wave by wave, in order; a revision that fails its health check halts the rollout at the
// first wave, naming the clusters, while the others keep the revision before — and drift there
// is put back to that one; a cluster that joins gets the current revision; resume goes on to
// the next wave (which halts again), and abort sends every cluster back to the stable revision.
func TestRolloutInWaves(t *testing.T) {
	name := objName(t, "")
	f := &rolloutFleet{set: name, targets: map[string]string{}}
	for i := 1; i <= 6; i++ {
		c := fmt.Sprintf("ro-%d", i)
		f.names = append(f.names, c)
		f.targets[c] = fmt.Sprintf("cluster-%d", i%2+1)
		sharedCluster(t, c, f.targets[c], map[string]string{"rollout": name, "wave": fmt.Sprint((i + 1) / 2)})
	}
	wave := func(c string) int {
		var i int
		_, _ = fmt.Sscanf(c, "ro-%d", &i)
		return (i + 1) / 2
	}
	manifests := func(rev, ok string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata: {name: '{{ .Cluster.Name }}'}\n---\n"+
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app, namespace: '{{ .Cluster.Name }}'}\ndata: {rev: %q, ok: %q}\n", rev, ok)
	}
	hooks := &receiver{}
	hookSrv := httptest.NewServer(hooks)
	defer hookSrv.Close()
	NewWithT(t).Expect(hub.Create(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name + "-hook", Namespace: templateNamespace},
		StringData: map[string]string{notify.SecretKeyURL: hookSrv.URL}})).To(Succeed())
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Templating: holdfastv1.TemplatingGoTemplate, Inline: manifests("1", "true")})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: holdfastv1.ClusterSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"rollout": name}}},
		SyncMode:        holdfastv1.SyncModeContinuousWithDriftDetection,
		Services:        []holdfastv1.Service{{Name: "app", Template: holdfastv1.TemplateReference{Name: name, Namespace: templateNamespace}}},
		HealthChecks:    []holdfastv1.HealthCheck{{Kind: "ConfigMap", Expr: "true", Failed: "has(self.data) && has(self.data.ok) && self.data.ok == 'false'"}},
		Rollout:         &holdfastv1.RolloutStrategy{WaveLabel: "wave", PauseBetweenWaves: &metav1.Duration{Duration: time.Second}},
		Notifications: []holdfastv1.NotificationTarget{{Name: "audit", Type: holdfastv1.NotificationWebhook,
			SecretRef: holdfastv1.SecretReference{Namespace: templateNamespace, Name: name + "-hook"}}},
	})
	t.Log("The first revision goes everywhere at once")
	f.expectRevisions(t, func(string) string { return "1" })
	var first string
	eventually(t, func(g Gomega) {
		m := rolloutOf(g, name)
		g.Expect(m.Status.Rollout.Phase).To(Equal(holdfastv1.RolloutComplete))
		g.Expect(m.Status.Rollout.Waves).To(HaveLen(3))
		g.Expect(conditions(m).Status).To(Equal(metav1.ConditionTrue))
		first = m.Status.Rollout.Revision
	})

	t.Log("Revision 2 goes wave by wave")
	stop := f.watchOrder("2")
	updateTemplate(t, name, func(tpl *holdfastv1.ServiceTemplate) { tpl.Spec.Inline = manifests("2", "true") })
	// Revision 1's rollout is complete too: wait for revision 2's to be, so that it is the
	// stable revision revision 3 starts from (an abort goes back to it).
	eventually(t, func(g Gomega) {
		ro := rolloutOf(g, name).Status.Rollout
		g.Expect(ro.Revision).NotTo(Equal(first), "revision 2's rollout has not started")
		g.Expect(ro.Phase).To(Equal(holdfastv1.RolloutComplete))
		g.Expect(ro.StableRevision).To(Equal(ro.Revision))
	})
	f.expectRevisions(t, func(string) string { return "2" })
	seen := stop()
	NewWithT(t).Expect(seen).To(HaveLen(len(f.names)), "clusters seen with revision 2")
	for _, a := range f.names {
		for _, b := range f.names {
			if wave(a) < wave(b) {
				NewWithT(t).Expect(seen[a].Before(seen[b])).To(BeTrue(), "%s (wave %d) got revision 2 at %s, after %s (wave %d) at %s",
					a, wave(a), seen[a].Format("15:04:05.000"), b, wave(b), seen[b].Format("15:04:05.000"))
			}
		}
	}

	t.Log("Revision 3 fails its health check: the rollout halts at the first wave")
	updateTemplate(t, name, func(tpl *holdfastv1.ServiceTemplate) { tpl.Spec.Inline = manifests("3", "false") })
	eventually(t, func(g Gomega) {
		m := rolloutOf(g, name)
		g.Expect(m.Status.Rollout.Phase).To(Equal(holdfastv1.RolloutHalted))
		g.Expect(m.Status.Rollout.FailedClusters).To(ContainElement(HaveField("Cluster", clusterNamespace+"/ro-1")))
		ready := conditions(m)
		g.Expect(ready.Reason).To(Equal(holdfastv1.RolloutHaltedReason))
		g.Expect(ready.Message).To(ContainSubstring("ro-1"))
		g.Expect(ready.Message).To(ContainSubstring(holdfastv1.UnhealthyReason))
	})
	t.Log("The halt is notified, naming the clusters")
	eventually(t, func(g Gomega) {
		var halted []string
		for _, req := range hooks.all() {
			if req.header.Get("X-Holdfast-Event") == string(notify.RolloutHalted) {
				halted = append(halted, string(req.body))
			}
		}
		g.Expect(halted).To(HaveLen(1))
		// The halt comes with the first failure of wave 1, ro-1's or ro-2's.
		g.Expect(halted[0]).To(And(MatchRegexp(`"failedClusters":\[\{"cluster":"`+clusterNamespace+`/ro-[12]"`), ContainSubstring(holdfastv1.UnhealthyReason)))
	})
	consistently(t, 2*time.Second, func(g Gomega) {
		for _, c := range f.names {
			if wave(c) > 1 {
				g.Expect(f.revisionOn(c)).To(Equal("2"), "revision on %s, not reached", c)
			}
		}
	})

	t.Log("Drift on a cluster not reached is put back to its own revision, 2")
	editConfigMap(t, f.targets["ro-6"], "ro-6", "app", "kubectl-edit", "rev", "by-hand")
	eventually(t, func(g Gomega) { g.Expect(f.revisionOn("ro-6")).To(Equal("2")) })

	t.Log("A cluster that joins gets the current revision, 3")
	f.names = append(f.names, "ro-7")
	f.targets["ro-7"] = "cluster-1"
	sharedCluster(t, "ro-7", "cluster-1", map[string]string{"rollout": name, "wave": "3"})
	eventually(t, func(g Gomega) { g.Expect(f.revisionOn("ro-7")).To(Equal("3")) })

	t.Log("Resume: the next wave takes revision 3, fails, and the rollout halts again")
	updateServiceSet(t, name, func(m *holdfastv1.MultiClusterService) {
		metav1.SetMetaDataAnnotation(&m.ObjectMeta, holdfastv1.RolloutResumeAnnotation, "resume-1")
	})
	eventually(t, func(g Gomega) {
		m := rolloutOf(g, name)
		g.Expect(m.Status.Rollout.LastHandledResume).To(Equal("resume-1"))
		g.Expect(m.Status.Rollout.Phase).To(Equal(holdfastv1.RolloutHalted))
		g.Expect(m.Status.Rollout.Wave).To(BeEquivalentTo(1))
		g.Expect(m.Status.Rollout.FailedClusters).To(ContainElement(And(HaveField("Cluster", clusterNamespace+"/ro-3"), HaveField("Resumed", false))))
	})
	NewWithT(t).Expect(f.revisionOn("ro-5")).To(Equal("2"), "the last wave is not reached")

	t.Log("Abort: every cluster goes back to revision 2")
	updateServiceSet(t, name, func(m *holdfastv1.MultiClusterService) {
		metav1.SetMetaDataAnnotation(&m.ObjectMeta, holdfastv1.RolloutAbortAnnotation, "abort-1")
	})
	f.expectRevisions(t, func(string) string { return "2" })
	eventually(t, func(g Gomega) {
		m := rolloutOf(g, name)
		g.Expect(m.Status.Rollout.Phase).To(Equal(holdfastv1.RolloutAborted))
		g.Expect(conditions(m).Reason).To(Equal(holdfastv1.RolloutAbortedReason))
	})
}

// conditions returns the Ready condition of a service set.
func conditions(m *holdfastv1.MultiClusterService) metav1.Condition {
	return condition(m.Status.Conditions, holdfastv1.ReadyCondition)
}

// TestRolloutStrategyIsValidated: the API server refuses a maxInFlight or failureThreshold that
// is neither a number of clusters nor a percentage, and waves with a wave label, naming the field.
func TestRolloutStrategyIsValidated(t *testing.T) {
	name := objName(t, "")
	pct, zero, word := intstr.FromString("50%"), intstr.FromInt32(0), intstr.FromString("half")
	for _, tc := range []struct {
		rollout holdfastv1.RolloutStrategy
		refused string
	}{
		{holdfastv1.RolloutStrategy{MaxInFlight: &pct, FailureThreshold: &pct}, ""},
		{holdfastv1.RolloutStrategy{MaxInFlight: &word}, "maxInFlight is a number of clusters"},
		{holdfastv1.RolloutStrategy{FailureThreshold: &zero}, "failureThreshold is a number of clusters"},
		{holdfastv1.RolloutStrategy{WaveLabel: "wave", Waves: []holdfastv1.RolloutWave{{Name: "a"}}}, "set waves or waveLabel, not both"},
	} {
		mcs := &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: holdfastv1.MultiClusterServiceSpec{ClusterSelector: selectEnv("none"), Rollout: &tc.rollout}}
		err := hub.Create(context.Background(), mcs)
		if tc.refused == "" {
			NewWithT(t).Expect(err).NotTo(HaveOccurred())
			deleteServiceSet(t, name)
			continue
		}
		NewWithT(t).Expect(err).To(MatchError(ContainSubstring(tc.refused)))
	}
}
