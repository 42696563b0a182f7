package sharding_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/controller"
	"holdfast.dev/holdfast/internal/fleet"
	"holdfast.dev/holdfast/internal/localfleet"
	"holdfast.dev/holdfast/internal/metrics"
	"holdfast.dev/holdfast/internal/sharding"
	"holdfast.dev/holdfast/internal/testsupport"
)

const (
	e2eNamespace = localfleet.DefaultNamespace
	e2eClusters  = 6
	declared     = "declared"
)

// writeLog records every mutating request each replica sends to each target cluster.
type writeLog struct {
	mu     sync.Mutex
	writes map[string][]write // by cluster
}

type write struct {
	replica string
	at      time.Time
	what    string
}

func (l *writeLog) transport(replica string) func(types.NamespacedName, http.RoundTripper) http.RoundTripper {
	return func(cluster types.NamespacedName, next http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			switch req.Method {
			case http.MethodGet, http.MethodHead, http.MethodOptions:
			default:
				l.mu.Lock()
				l.writes[cluster.Name] = append(l.writes[cluster.Name], write{replica: replica, at: time.Now(), what: req.Method + " " + req.URL.Path})
				l.mu.Unlock()
			}
			return next.RoundTrip(req)
		})
	}
}

// firstSince is the time of the first write replica sent to cluster at or after t.
func (l *writeLog) firstSince(cluster, replica string, t time.Time) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, w := range l.writes[cluster] {
		if w.replica == replica && !w.at.Before(t) {
			return w.at, true
		}
	}
	return time.Time{}, false
}

// interleaved lists the clusters whose writes sent in [from, to) did not come in one unbroken
// run per replica: a replica wrote to the cluster, another did, and the first again, as two
// replicas correcting the same drift at once do. Within a window with one membership change
// (and the views the replicas agree on moving in one direction) a cluster changes hands at most
// once per replica.
func (l *writeLog) interleaved(from, to time.Time) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var bad []string
	for cluster, all := range l.writes {
		ws := slices.DeleteFunc(slices.Clone(all), func(w write) bool { return w.at.Before(from) || !w.at.Before(to) })
		sort.SliceStable(ws, func(i, j int) bool { return ws[i].at.Before(ws[j].at) })
		done := map[string]bool{}
		for i, w := range ws {
			if i > 0 && ws[i-1].replica != w.replica {
				done[ws[i-1].replica] = true
			}
			if done[w.replica] {
				var runs []string
				for _, w := range ws {
					runs = append(runs, w.replica+"@"+w.at.Format("15:04:05.000"))
				}
				bad = append(bad, fmt.Sprintf("%s: %s", cluster, strings.Join(runs, " ")))
				break
			}
		}
	}
	return bad
}

func (l *writeLog) writers(cluster string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, w := range l.writes[cluster] {
		if !slices.Contains(out, w.replica) {
			out = append(out, w.replica)
		}
	}
	return out
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// replica is one running controller.
type replica struct {
	cancel context.CancelFunc
	done   chan error
}

func startReplica(t *testing.T, fl *localfleet.Fleet, log *writeLog, id string, keepLease bool) *replica {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	mgr, _, err := controller.NewManager(ctx, fl.Hub.RESTConfig(), controller.Options{
		MetricsAddr: "0", HealthAddr: "0", SkipNameValidation: true,
		PlatformNamespaces: []string{e2eNamespace, "templates"},
		ProbeInterval:      time.Second, ConnectionGrace: 5 * time.Second,
		LeaderElection: true, LeaderElectionNamespace: e2eNamespace, LeaderElectionID: "holdfast-sharding-e2e",
		Shard: true, ShardID: id, ShardKeepLeaseOnStop: keepLease,
		TargetTransport: log.transport(id),
	})
	if err != nil {
		cancel()
		t.Fatalf("building replica %s: %v", id, err)
	}
	r := &replica{cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- mgr.Start(ctx) }()
	t.Cleanup(r.stop)
	return r
}

func (r *replica) stop() {
	if r.cancel == nil {
		return
	}
	r.cancel()
	<-r.done
	r.cancel = nil
}

var (
	fleetOnce sync.Once
	sharedHub *localfleet.Fleet
	hubErr    error
)

// hubFleet is a hub without targets, started for the first test that needs it and stopped by
// TestMain.
func hubFleet(t *testing.T) *localfleet.Fleet {
	t.Helper()
	testsupport.RequireBinaries(t)
	fleetOnce.Do(func() {
		var out io.Writer = &testsupport.LogBuffer{}
		if testing.Verbose() {
			out = os.Stderr
		}
		ctrl.SetLogger(zap.New(zap.WriteTo(out), zap.UseDevMode(true)))
		sharedHub, hubErr = localfleet.Up(context.Background(), localfleet.Options{})
	})
	if hubErr != nil {
		t.Fatalf("starting the hub: %v", hubErr)
	}
	return sharedHub
}

func TestMain(m *testing.M) {
	code := m.Run()
	if sharedHub != nil {
		_ = sharedHub.Stop()
	}
	os.Exit(code)
}

func clusterName(i int) string { return fmt.Sprintf("shard-%d", i) }

func targetNamespace(cluster string) string { return "target-" + cluster }

// TestHandOverWithoutDoubleWrites runs two sharded replicas over six clusters (namespaces of the
// hub, which is also every target), injects drift all along, kills one replica (its Lease left
// to expire), then adds a third. Every cluster is handled by one replica at a time: its writes
// come in one unbroken run per replica; the killed replica's clusters are corrected by the
// other within the hand-over bound; the third replica takes its share.
func TestHandOverWithoutDoubleWrites(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	fl := hubFleet(t)
	hub := fl.HubClient()
	var err error

	g.Expect(hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "templates"}})).To(Succeed())
	var clusters []string
	for i := 1; i <= e2eClusters; i++ {
		name := clusterName(i)
		clusters = append(clusters, name)
		_, err := fleet.Register(ctx, hub, fleet.Registration{Namespace: e2eNamespace, Name: name,
			Labels: map[string]string{"sharding-e2e": name}, Kubeconfig: fl.Hub.Kubeconfig()})
		g.Expect(err).NotTo(HaveOccurred())
		ns := targetNamespace(name)
		g.Expect(hub.Create(ctx, &holdfastv1.ServiceTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: "templates", Name: name},
			Spec: holdfastv1.ServiceTemplateSpec{Inline: fmt.Sprintf(
				"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: drifty\n  namespace: %s\ndata:\n  key: %s\n",
				ns, ns, declared)}})).To(Succeed())
		g.Expect(hub.Create(ctx, &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: holdfastv1.MultiClusterServiceSpec{
				ClusterSelector: holdfastv1.ClusterSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"sharding-e2e": name}}},
				SyncMode:        holdfastv1.SyncModeContinuousWithDriftDetection,
				Services: []holdfastv1.Service{{Name: "drifty", Namespace: ns,
					Template: holdfastv1.TemplateReference{Namespace: "templates", Name: name}}},
			}})).To(Succeed())
	}

	log := &writeLog{writes: map[string][]write{}}
	began := time.Now()
	a := startReplica(t, fl, log, "replica-a", false)
	b := startReplica(t, fl, log, "replica-b", true)

	deployed := func(g Gomega, cluster string) {
		cm := &corev1.ConfigMap{}
		g.Expect(hub.Get(ctx, client.ObjectKey{Namespace: targetNamespace(cluster), Name: "drifty"}, cm)).To(Succeed())
		g.Expect(cm.Data).To(HaveKeyWithValue("key", declared), "ConfigMap on %s", cluster)
	}
	for _, c := range clusters {
		g.Eventually(func(g Gomega) { deployed(g, c) }).WithTimeout(90 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())
	}
	ab := sharding.NewView("replica-a", "replica-b")
	wantA := 0
	for _, c := range clusters {
		if ab.Owner(e2eNamespace+"/"+c) == "replica-a" {
			wantA++
		}
	}
	g.Expect(wantA).To(And(BeNumerically(">", 0), BeNumerically("<", e2eClusters)), "the test's names must split the clusters")
	g.Eventually(func(g Gomega) {
		g.Expect(metrics.ShardClusters()).To(And(HaveKeyWithValue("replica-a", wantA), HaveKeyWithValue("replica-b", e2eClusters-wantA)))
	}).WithTimeout(30 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())

	// Drift, all along: one cluster's ConfigMap edited every 150 ms, in turn.
	driftCtx, stopDrift := context.WithCancel(ctx)
	drifting := make(chan struct{})
	go func() {
		defer close(drifting)
		for i := 0; driftCtx.Err() == nil; i++ {
			c := clusters[i%len(clusters)]
			cm := &corev1.ConfigMap{}
			if hub.Get(driftCtx, client.ObjectKey{Namespace: targetNamespace(c), Name: "drifty"}, cm) == nil {
				cm.Data = map[string]string{"key": fmt.Sprintf("drift-%d", i)}
				_ = hub.Update(driftCtx, cm, client.FieldOwner("kubectl-edit"))
			}
			select {
			case <-driftCtx.Done():
			case <-time.After(150 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() { stopDrift(); <-drifting })

	time.Sleep(3 * time.Second)
	for _, c := range clusters {
		g.Expect(log.writers(c)).NotTo(BeEmpty(), "no drift corrected on %s", c)
	}

	// Kill b: it stops renewing and its Lease expires.
	killed := time.Now()
	b.stop()
	var fromB []string
	for _, c := range clusters {
		if ab.Owner(e2eNamespace+"/"+c) == "replica-b" {
			fromB = append(fromB, c)
		}
	}
	var slowest time.Duration
	for _, c := range fromB {
		g.Eventually(func(g Gomega) {
			at, ok := log.firstSince(c, "replica-a", killed)
			g.Expect(ok).To(BeTrue(), "replica-a corrected nothing on %s since replica-b was killed", c)
			slowest = max(slowest, at.Sub(killed))
		}).WithTimeout(45 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())
	}
	t.Logf("Clusters of the killed replica first written by the survivor after %s (lease duration %s)", slowest, sharding.DefaultLeaseDuration)
	// The bound the fleet needs is 15 s; this shared machine gets twice that.
	g.Expect(slowest).To(BeNumerically("<", 30*time.Second))

	// Add c: it takes its share, the others keep theirs.
	added := time.Now()
	startReplica(t, fl, log, "replica-c", false)
	ac := sharding.NewView("replica-a", "replica-c")
	wantC := 0
	for _, c := range clusters {
		if ac.Owner(e2eNamespace+"/"+c) == "replica-c" {
			wantC++
			g.Eventually(func(g Gomega) {
				_, ok := log.firstSince(c, "replica-c", added)
				g.Expect(ok).To(BeTrue(), "replica-c corrected nothing on %s", c)
			}).WithTimeout(45 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())
		}
	}
	g.Expect(wantC).To(BeNumerically(">", 0), "the test's names must give replica-c a cluster")
	g.Eventually(func(g Gomega) {
		g.Expect(metrics.ShardClusters()).To(And(HaveKeyWithValue("replica-a", e2eClusters-wantC), HaveKeyWithValue("replica-c", wantC),
			HaveKeyWithValue("replica-b", 0)))
	}).WithTimeout(30 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())
	time.Sleep(2 * time.Second)

	stopDrift()
	<-drifting
	g.Expect(log.interleaved(began, killed)).To(BeEmpty(), "clusters written by two replicas in turn or at once while a and b ran")
	g.Expect(log.interleaved(killed, time.Now())).To(BeEmpty(), "clusters written by two replicas in turn or at once after b was killed")
	for _, c := range clusters {
		g.Eventually(func(g Gomega) { deployed(g, c) }).WithTimeout(30 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())
	}

	// A replica that stops cleanly deletes its Lease: the others need not wait for it to expire.
	a.stop()
	err = hub.Get(ctx, client.ObjectKey{Namespace: e2eNamespace, Name: sharding.LeaseName("replica-a")}, &coordinationv1.Lease{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the Lease of replica-a after it stopped: %v", err)
}
