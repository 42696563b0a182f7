package measure

import (
	"bytes"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"holdfast.dev/holdfast/internal/onboard"
	"holdfast.dev/holdfast/internal/testsupport"
)

// TestIdealAgents runs the pull floor on three simulated Pull clusters: a first round and a
// change, each checked on the API servers (every agent's status names the round, every object
// is on its cluster with the data of the round), a round published before the agents started
// counted as applied, and no agent goroutine or watch left once they stop.
func TestIdealAgents(t *testing.T) {
	testsupport.RequireBinaries(t)
	ctx := t.Context()
	f, err := StartSimFleet(ctx, SimFleetOptions{Servers: 1, Clusters: 3, Pull: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := f.Stop(); err != nil {
			t.Error(err)
		}
	})
	// Registering a Pull cluster makes its hub namespace; here nothing else needs it.
	for _, sim := range f.Sims {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: onboard.PullNamespace(sim)}}
		if err := f.Hub.Create(ctx, ns); err != nil {
			t.Fatal(err)
		}
	}
	objects := func(rev int) []*unstructured.Unstructured {
		t.Helper()
		objs, err := IdealObjects(SimManifests([]string{"config-00", "config-01"}, rev, "", ""))
		if err != nil {
			t.Fatal(err)
		}
		return objs
	}
	watchers := agentGoroutines(t)

	agents, err := f.StartIdealAgents(ctx, f.Sims)
	if err != nil {
		t.Fatal(err)
	}
	took, err := agents.Rollout(ctx, objects(1), 2, "revision 1")
	if err != nil {
		t.Fatal(err)
	}
	if took <= 0 {
		t.Errorf("the first round took %s", took)
	}
	if err := agents.Check(ctx, objects(1), "revision 1"); err != nil {
		t.Error(err)
	}
	agents.Stop()
	waitAgentsGone(t, watchers)

	// Started again, the agents take the round their Secrets hold as applied, and apply the next.
	agents, err = f.StartIdealAgents(ctx, f.Sims)
	if err != nil {
		t.Fatal(err)
	}
	defer agents.Stop()
	time.Sleep(time.Second) // what an agent would do on its start, it has done by now
	if _, n, errs := agents.tally("revision 1"); n != 0 || len(errs) != 0 {
		t.Errorf("agents started after round 1: %d applied it again, errors %v", n, errs)
	}
	if err := agents.Check(ctx, objects(2), "revision 1"); err == nil {
		t.Error("Check found the objects of revision 2 before they were published")
	}
	if _, err := agents.Rollout(ctx, objects(2), 2, "revision 2"); err != nil {
		t.Fatal(err)
	}
	if err := agents.Check(ctx, objects(2), "revision 2"); err != nil {
		t.Error(err)
	}
	agents.Stop()
	waitAgentsGone(t, watchers)
}

// agentGoroutines counts the goroutines that run an ideal agent or read one of its watches
// (client-go's StreamWatcher: this test opens no other watch).
func agentGoroutines(t *testing.T) int {
	t.Helper()
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 2); err != nil {
		t.Fatal(err)
	}
	n := 0
	for g := range strings.SplitSeq(buf.String(), "\n\n") {
		if strings.Contains(g, "measure.(*IdealAgents)") || strings.Contains(g, "measure.drain") || strings.Contains(g, "watch.(*StreamWatcher).receive") {
			n++
		}
	}
	return n
}

// waitAgentsGone waits a few seconds until as many such goroutines run as before: a watch's
// reader ends shortly after it is stopped.
func waitAgentsGone(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := agentGoroutines(t)
		if n <= before {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines of the ideal agents or their watches left after Stop", n-before)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
