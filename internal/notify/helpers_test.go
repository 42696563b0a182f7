package notify

import (
	"context"
	"encoding/base64"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

var detected = time.Date(2025, 3, 1, 10, 0, 0, 123456000, time.UTC)

// deploymentDrift is a drift of a Deployment's replicas by kubectl.
func deploymentDrift() Event {
	return Event{
		Type:                DriftDetected,
		Time:                detected.Add(time.Millisecond),
		MultiClusterService: "web",
		Cluster:             types.NamespacedName{Namespace: "fleet", Name: "eu-1"},
		Service:             "frontend",
		Object:              holdfastv1.ResourceRef{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "web", Name: "frontend"},
		Drift: &holdfastv1.DriftDetail{
			Type:         holdfastv1.DriftChanged,
			Fields:       []holdfastv1.FieldChange{{Path: ".spec.replicas", Old: "3", New: "5"}},
			Manager:      "kubectl-edit",
			Operation:    "Update",
			DetectedTime: metav1.NewMicroTime(detected),
		},
	}
}

// secretDrift is a drift of a Secret's password from old to the plain value plain, passed
// unredacted (as a careless caller would) and quoted in the message.
func secretDrift(plain string) Event {
	e := deploymentDrift()
	e.Object = holdfastv1.ResourceRef{Version: "v1", Kind: "Secret", Namespace: "web", Name: "db"}
	encoded := `"` + base64.StdEncoding.EncodeToString([]byte(plain)) + `"`
	e.Drift.Fields = []holdfastv1.FieldChange{
		{Path: ".data.password", Old: `"b2xkLXZhbHVl"`, New: encoded},
		{Path: ".data.token", New: `"` + plain + `"`},
	}
	e.Message = "password set to " + plain + " (" + encoded + ")"
	return e
}

type result struct {
	target string
	event  Event
	err    error
}

// logBuffer collects log lines, V(1) included, so tests can search them for secrets.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.b.WriteString(prefix + " " + args + "\n")
	}, funcr.Options{Verbosity: 1})
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

type harness struct {
	d       *Dispatcher
	results chan result
	logs    *logBuffer
	stop    func()
}

// start runs a Dispatcher with tiny backoffs until the test ends or stop is called. Start it
// after the test's receivers, so that it stops (and aborts hanging requests) before they close.
func start(t *testing.T, opts Options) *harness {
	t.Helper()
	h := &harness{results: make(chan result, 100), logs: &logBuffer{}}
	opts.OnResult = func(target string, e Event, err error) { h.results <- result{target, e, err} }
	opts.Logger = h.logs.logger()
	if opts.InitialBackoff == 0 {
		opts.InitialBackoff = time.Millisecond
	}
	if opts.MaxBackoff == 0 {
		opts.MaxBackoff = 5 * time.Millisecond
	}
	h.d = New(opts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.d.Start(ctx) }()
	var once sync.Once
	h.stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Start returned %v", err)
			}
		})
	}
	t.Cleanup(h.stop)
	return h
}

// next waits for the next outcome.
func (h *harness) next(t *testing.T) result {
	t.Helper()
	select {
	case r := <-h.results:
		return r
	case <-time.After(10 * time.Second):
		t.Fatalf("no notification outcome after 10s")
		return result{}
	}
}

// notifications reads holdfast_notifications_total{target,result} from the manager's registry.
func notifications(t *testing.T, target, res string) float64 {
	t.Helper()
	mfs, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "holdfast_notifications_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			if got["target"] == target && got["result"] == res {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}
