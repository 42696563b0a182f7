package alerting

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/notify"
	"holdfast.dev/holdfast/internal/tenancy"
)

// sink is a webhook receiver that keeps the events it is sent, by path.
type sink struct {
	*httptest.Server
	mu   sync.Mutex
	got  map[string][]map[string]any
	seen chan struct{}
}

func newSink(t *testing.T) *sink {
	s := &sink{got: map[string][]map[string]any{}, seen: make(chan struct{}, 100)}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var e map[string]any
		if err := json.Unmarshal(body, &e); err != nil {
			t.Errorf("a body that is not JSON: %s", body)
		}
		s.mu.Lock()
		s.got[r.URL.Path] = append(s.got[r.URL.Path], e)
		s.mu.Unlock()
		s.seen <- struct{}{}
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *sink) events(path string) []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.got[path]
}

func TestRouterSendsToTheRulesThatSeeAndSelect(t *testing.T) {
	recv := newSink(t)
	secret := func(ns, path string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hook"}, Data: map[string][]byte{"url": []byte(recv.URL + path)}}
	}
	rule := func(ns, name string, spec holdfastv1.AlertRuleSpec) *holdfastv1.AlertRule {
		spec.Targets = []holdfastv1.AlertTarget{{Name: "hook", Type: holdfastv1.NotificationWebhook, SecretRef: holdfastv1.LocalObjectReference{Name: "hook"}}}
		return &holdfastv1.AlertRule{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Generation: 1}, Spec: spec}
	}
	scheme := runtime.NewScheme()
	_ = holdfastv1.AddToScheme(scheme)
	_ = corev1.AddToScheme(scheme)
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		secret("fleet", "/platform"), secret("team-a", "/team-a"), secret("team-b", "/team-b"),
		rule("fleet", "everything", holdfastv1.AlertRuleSpec{Summary: "prod fleet", RateLimit: &metav1.Duration{Duration: time.Minute}}),
		rule("team-a", "mine", holdfastv1.AlertRuleSpec{}),
		rule("team-b", "mine", holdfastv1.AlertRuleSpec{}),
	).Build()
	clock := clocktesting.NewFakePassiveClock(time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC))
	d := notify.New(notify.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = d.Start(ctx) }()
	r := &Router{Rules: c, Secrets: c, Notifier: d, Tenancy: tenancy.Policy{PlatformNamespaces: []string{"fleet"}}, Clock: clock}

	teamA := &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: "team-a-web", Labels: map[string]string{holdfastv1.TenantNamespaceLabel: "team-a"}}}
	plain := "hunter2-plaintext"
	e := driftOf(notify.DriftDetected, "db", "password set to "+plain)
	e.MultiClusterService = teamA.Name
	e.Object.Kind = "Secret"
	e.Drift = &holdfastv1.DriftDetail{Type: holdfastv1.DriftChanged, Fields: []holdfastv1.FieldChange{
		{Path: ".data.password", New: `"` + base64.StdEncoding.EncodeToString([]byte(plain)) + `"`}, {Path: ".data.token", New: `"` + plain + `"`}}}
	for range 3 { // a flapping object: three events within every rule's window
		r.Route(ctx, teamA, []notify.Event{e})
	}
	waitFor(t, recv, 2) // the platform rule's first, team-a's rule's first; team-b's rule sees nothing
	clock.SetTime(clock.Now().Add(61 * time.Second))
	r.Route(ctx, teamA, []notify.Event{e})
	waitFor(t, recv, 1) // the platform rule's window (1m) is over; team-a's (5m, the default) is not
	other := e
	other.Object.Name = "other"
	r.Route(ctx, teamA, []notify.Event{other})
	waitFor(t, recv, 2) // another object is limited on its own, by both rules
	time.Sleep(300 * time.Millisecond)

	platform, mine, others := recv.events("/platform"), recv.events("/team-a"), recv.events("/team-b")
	if len(platform) != 3 || len(mine) != 2 || len(others) != 0 {
		t.Fatalf("sent to the platform rule %d, team-a's %d, team-b's %d; want 3, 2, 0", len(platform), len(mine), len(others))
	}
	if platform[0]["summary"] != "prod fleet" || mine[0]["summary"] != nil {
		t.Errorf("summaries %v and %v, want the platform rule's on its events only", platform[0]["summary"], mine[0]["summary"])
	}
	if msg, _ := platform[1]["message"].(string); !strings.Contains(msg, "2 more like this in the 1m0s before were not sent") {
		t.Errorf("the first event after the window says %q, want the count of those held back", msg)
	}
	if msg, _ := platform[0]["message"].(string); strings.Contains(msg, "more like this") {
		t.Errorf("the first event says %q: nothing was held back before it", msg)
	}
	for path, got := range map[string][]map[string]any{"/platform": platform, "/team-a": mine} {
		body, _ := json.Marshal(got)
		if strings.Contains(string(body), plain) || strings.Contains(string(body), base64.StdEncoding.EncodeToString([]byte(plain))) {
			t.Errorf("%s received the Secret's value: %s", path, body)
		}
	}
}

// waitFor waits until the sink got n requests, or fails.
func waitFor(t *testing.T, s *sink, n int) {
	t.Helper()
	for i := range n {
		select {
		case <-s.seen:
		case <-time.After(10 * time.Second):
			t.Fatalf("%d of %d requests arrived", i, n)
		}
	}
}
