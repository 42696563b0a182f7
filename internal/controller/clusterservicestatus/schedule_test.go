package clusterservicestatus

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

func TestRequestedToken(t *testing.T) {
	cases := []struct {
		name               string
		onSet, onStatus    string
		handled, wantToken string
	}{
		{name: "nothing asked"},
		{name: "new value on the service set", onSet: "a", wantToken: "a"},
		{name: "handled value is not asked again", onSet: "a", handled: "a"},
		{name: "new value on the status object", onSet: "a", onStatus: "b", handled: "a", wantToken: "b"},
		{name: "service set wins when both are new", onSet: "a", onStatus: "b", wantToken: "a"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mcs := &holdfastv1.MultiClusterService{}
			css := &holdfastv1.ClusterServiceStatus{}
			if c.onSet != "" {
				mcs.Annotations = map[string]string{holdfastv1.ReconcileRequestedAtAnnotation: c.onSet}
			}
			if c.onStatus != "" {
				css.Annotations = map[string]string{holdfastv1.ReconcileRequestedAtAnnotation: c.onStatus}
			}
			css.Status.LastHandledReconcileAt = c.handled
			if got := requestedToken(mcs, css); got != c.wantToken {
				t.Fatalf("requestedToken = %q, want %q", got, c.wantToken)
			}
		})
	}
}

// TestRequestsOnBothPlacesAreHandledOnce replays what test/soak found (seed 2037, round 4): a
// request on the status object, handled; then one on the service set, handled. Each is handled
// once: no reconcile after takes the older one as new, which in Report mode would correct drift
// at every reconcile, and lastHandledReconcileAt stays the service set's.
func TestRequestsOnBothPlacesAreHandledOnce(t *testing.T) {
	mcs := &holdfastv1.MultiClusterService{}
	css := &holdfastv1.ClusterServiceStatus{}
	request := func(o metav1.Object, value string) {
		o.SetAnnotations(map[string]string{holdfastv1.ReconcileRequestedAtAnnotation: value})
	}
	// reconcile is one reconcile: what it handles, recorded as computeStatus records it.
	reconcile := func() string {
		token := requestedToken(mcs, css)
		if token != "" {
			css.Status.LastHandledReconcileAt, css.Status.HandledRequests = token, handledRequests(mcs, css)
		}
		return token
	}
	request(css, "soak-2")
	if got := reconcile(); got != "soak-2" {
		t.Fatalf("the status object's request: handled %q", got)
	}
	request(mcs, "soak-4")
	if got := reconcile(); got != "soak-4" {
		t.Fatalf("the service set's request: handled %q", got)
	}
	for i := range 3 {
		if got := reconcile(); got != "" {
			t.Fatalf("reconcile %d after both were handled took %q as a new request", i+1, got)
		}
	}
	if css.Status.LastHandledReconcileAt != "soak-4" {
		t.Fatalf("lastHandledReconcileAt %q, want the service set's soak-4", css.Status.LastHandledReconcileAt)
	}
	request(css, "soak-5")
	if got := reconcile(); got != "soak-5" {
		t.Fatalf("a new request on the status object: handled %q", got)
	}
}

func TestNextFullReconcile(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	last := metav1.NewTime(now.Add(-9*time.Hour - 59*time.Minute))
	cases := []struct {
		name     string
		interval *metav1.Duration
		last     *metav1.Time
		want     time.Time
	}{
		{name: "never ran: due now", want: now},
		{name: "default 10h after the persisted time", last: &last, want: last.Add(10 * time.Hour)},
		{name: "own interval", interval: &metav1.Duration{Duration: time.Hour}, last: &last, want: last.Add(time.Hour)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mcs := &holdfastv1.MultiClusterService{Spec: holdfastv1.MultiClusterServiceSpec{ReconcileInterval: c.interval}}
			css := &holdfastv1.ClusterServiceStatus{Status: holdfastv1.ClusterServiceStatusStatus{LastFullReconcileTime: c.last}}
			if got := nextFullReconcile(mcs, css, now); !got.Equal(c.want) {
				t.Fatalf("nextFullReconcile = %s, want %s", got, c.want)
			}
		})
	}
}
