package clusterservicestatus_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/notify"
)

// cloudEventSink keeps the CloudEvents it receives, decoded with the CloudEvents SDK.
type cloudEventSink struct {
	mu     sync.Mutex
	events []received
	bad    []string
}

func (s *cloudEventSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e, err := cehttp.NewEventFromHTTPRequest(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.bad = append(s.bad, err.Error())
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	s.events = append(s.events, received{header: http.Header{"Ce-Type": {e.Type()}, "Ce-Subject": {e.Subject()}}, body: e.Data()})
	w.WriteHeader(http.StatusAccepted)
}

// about returns the events received whose subject ends with object.
func (s *cloudEventSink) about(object string) []received {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []received
	for _, e := range s.events {
		if strings.HasSuffix(e.header.Get("Ce-Subject"), "/"+object) {
			out = append(out, e)
		}
	}
	return out
}

// TestAlertRuleSendsCloudEventsOncePerWindow: an AlertRule selecting a service set by label
// sends one CloudEvent for an edit put back on a target, and for an object edited again and
// again one per rate-limit window, the next one saying how many were held back.
func TestAlertRuleSendsCloudEventsOncePerWindow(t *testing.T) {
	name, ns := deployWatched(t, "dev", "cluster-1")
	ctx := context.Background()
	sink := &cloudEventSink{}
	srv := httptest.NewServer(sink)
	defer srv.Close()
	g := NewWithT(t)
	g.Expect(hub.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name + "-ce", Namespace: templateNamespace},
		StringData: map[string]string{notify.SecretKeyURL: srv.URL + "/events"}})).To(Succeed())
	const window = 8 * time.Second
	rule := &holdfastv1.AlertRule{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: templateNamespace}, Spec: holdfastv1.AlertRuleSpec{
		ServiceSetSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"alerts": name}},
		EventTypes:         []holdfastv1.AlertEventType{holdfastv1.AlertEventType(notify.DriftCorrected)},
		RateLimit:          &metav1.Duration{Duration: window},
		Summary:            "e2e fleet",
		Targets:            []holdfastv1.AlertTarget{{Name: "sink", Type: holdfastv1.NotificationCloudEvents, SecretRef: holdfastv1.LocalObjectReference{Name: name + "-ce"}}},
	}}
	g.Expect(hub.Create(ctx, rule)).To(Succeed())
	t.Cleanup(func() { _ = hub.Delete(context.Background(), rule) })
	expectAlertRuleReady(t, rule)
	labelServiceSet(t, name, "alerts", name)

	// One edit, one CloudEvent.
	editConfigMap(t, "cluster-1", ns, "a", "kubectl-edit", "cluster", "edited-once")
	eventually(t, func(g Gomega) { g.Expect(sink.about("a")).To(HaveLen(1)) })

	// An object edited five times within the window: one CloudEvent.
	began := time.Now()
	for i := range 5 {
		editConfigMap(t, "cluster-1", ns, "b", "kubectl-edit", "cluster", "flap-"+string(rune('0'+i)))
		eventually(t, func(g Gomega) { g.Expect(getConfigMap(g, "cluster-1", ns, "b").Data["cluster"]).To(Equal("cluster-1")) })
	}
	if time.Since(began) > window-time.Second {
		t.Skipf("five edits took %s, too close to the %s window to tell one message per window on this machine", time.Since(began), window)
	}
	eventually(t, func(g Gomega) { g.Expect(sink.about("b")).To(HaveLen(1)) })
	consistently(t, time.Until(began.Add(window)), func(g Gomega) { g.Expect(sink.about("b")).To(HaveLen(1)) })

	// After the window, the next edit is sent, with the count of those held back.
	time.Sleep(time.Until(began.Add(window + time.Second)))
	editConfigMap(t, "cluster-1", ns, "b", "kubectl-edit", "cluster", "after-the-window")
	eventually(t, func(g Gomega) { g.Expect(sink.about("b")).To(HaveLen(2)) })
	second := string(sink.about("b")[1].body)
	g.Expect(second).To(ContainSubstring("more like this"), "the first event after the window")
	g.Expect(second).To(ContainSubstring(`"summary":"e2e fleet"`))
	for _, e := range append(sink.about("a"), sink.about("b")...) {
		g.Expect(e.header.Get("Ce-Type")).To(Equal(notify.CloudEventTypePrefix + string(notify.DriftCorrected)))
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	g.Expect(sink.bad).To(BeEmpty(), "requests that were not CloudEvents")
}
