package alerting

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/metrics"
	"holdfast.dev/holdfast/internal/notify"
	"holdfast.dev/holdfast/internal/tenancy"
)

// Router sends events to the AlertRules that select them. Its zero value is not usable: set
// Rules, Secrets and Notifier.
type Router struct {
	// Rules lists AlertRules: the manager's cache.
	Rules client.Reader
	// Secrets reads the rules' target Secrets: the API server (Secrets are never cached).
	Secrets client.Reader
	// Notifier delivers.
	Notifier *notify.Dispatcher
	// Tenancy decides which service sets a rule may see.
	Tenancy tenancy.Policy
	// Clock times the rate limit; the real clock by default.
	Clock clock.PassiveClock

	once     sync.Once
	limits   *limiter
	mu       sync.Mutex
	compiled map[types.NamespacedName]*Rule
}

func (r *Router) init() {
	r.once.Do(func() {
		r.limits = newLimiter()
		r.compiled = map[types.NamespacedName]*Rule{}
		if r.Clock == nil {
			r.Clock = clock.RealClock{}
		}
	})
}

// Route sends each of events, of the service set mcs, to every AlertRule that may see mcs and
// selects the event, within the rule's rate limit. It never blocks on a receiver: sends are
// queued. A rule or target that cannot be used is skipped (its Ready condition says why).
func (r *Router) Route(ctx context.Context, mcs *holdfastv1.MultiClusterService, events []notify.Event) {
	if r == nil || mcs == nil || len(events) == 0 {
		return
	}
	r.init()
	log := ctrl.LoggerFrom(ctx)
	list := &holdfastv1.AlertRuleList{}
	if err := r.Rules.List(ctx, list); err != nil {
		log.Error(err, "Listing AlertRules failed; events not sent to them", "events", len(events))
		return
	}
	now := r.Clock.Now()
	for i := range list.Items {
		ar := &list.Items[i]
		if !r.Tenancy.AlertRuleSees(ar.Namespace, mcs) {
			continue
		}
		rule, err := r.rule(ar)
		if err != nil {
			continue
		}
		var targets []notify.Target
		for _, e := range events {
			e = notify.Redact(e)
			if !rule.Selects(mcs, e) {
				continue
			}
			ok, held := r.limits.allow(limitKey(rule, e), now, rule.window)
			if !ok {
				metrics.AlertHeldBack(ar.Namespace, ar.Name)
				continue
			}
			if targets == nil {
				if targets = r.targets(ctx, rule); len(targets) == 0 {
					break
				}
			}
			e.Summary = rule.summary
			if held > 0 {
				e.Message = heldNote(e.Message, held, rule.window)
			}
			for _, t := range targets {
				if !r.Notifier.Send(t, e) {
					log.Info("Notification queue full; event dropped", "alertRule", ar.Namespace+"/"+ar.Name, "target", t.Name, "event", e.Type)
				}
			}
		}
	}
}

// rule is ar compiled, once per generation.
func (r *Router) rule(ar *holdfastv1.AlertRule) (*Rule, error) {
	key := types.NamespacedName{Namespace: ar.Namespace, Name: ar.Name}
	r.mu.Lock()
	defer r.mu.Unlock()
	if c := r.compiled[key]; c != nil && c.Generation == ar.Generation {
		return c, nil
	}
	c, err := Compile(ar)
	if err != nil {
		delete(r.compiled, key)
		return nil, err
	}
	r.compiled[key] = c
	return c, nil
}

// targets resolves the rule's targets from their Secrets, in the rule's namespace. Those that
// cannot be used are left out.
func (r *Router) targets(ctx context.Context, rule *Rule) []notify.Target {
	var out []notify.Target
	for _, spec := range rule.targets {
		t, err := ResolveTarget(ctx, r.Secrets, rule.Namespace, rule.Name, spec)
		if err != nil {
			ctrl.LoggerFrom(ctx).Info("Alert target not usable; skipped", "alertRule", rule.Namespace+"/"+rule.Name, "target", spec.Name, "error", err.Error())
			continue
		}
		out = append(out, t)
	}
	return out
}

// ResolveTarget reads the Secret of an AlertRule's target, in the rule's namespace, and
// resolves the target with it. Its errors name the target, Secret and key, never a value. The
// Dispatcher queues per target name, so the name says whose target it is.
func ResolveTarget(ctx context.Context, secrets client.Reader, namespace, rule string, spec holdfastv1.AlertTarget) (notify.Target, error) {
	nt := holdfastv1.NotificationTarget{Name: spec.Name, Type: spec.Type,
		SecretRef: holdfastv1.SecretReference{Namespace: namespace, Name: spec.SecretRef.Name}}
	sec := &corev1.Secret{}
	key := client.ObjectKey{Namespace: namespace, Name: spec.SecretRef.Name}
	if err := secrets.Get(ctx, key, sec); err != nil {
		return notify.Target{}, fmt.Errorf("reading Secret %s of target %q: %w", key, spec.Name, err)
	}
	t, err := notify.TargetFromSecret(nt, sec)
	if err != nil {
		return notify.Target{}, err
	}
	t.Name = "alertrule/" + namespace + "/" + rule + "/" + spec.Name
	return t, nil
}

// heldNote adds to message how many events like it were held back in the window before.
func heldNote(message string, held int, window time.Duration) string {
	note := fmt.Sprintf("%d more like this in the %s before were not sent (rate limit)", held, window)
	if message == "" {
		return note
	}
	return message + "; " + note
}
