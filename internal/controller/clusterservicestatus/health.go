package clusterservicestatus

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/conditions"
)

const (
	// DefaultHealthTimeout is how long a service's objects may take to become healthy after a
	// revision is applied, unless the service says otherwise (spec.services[].healthTimeout).
	DefaultHealthTimeout = 5 * time.Minute
	// healthRetry is how soon a status object with objects still becoming healthy is looked at
	// again; unhealthyRetry how soon one with failed objects is.
	healthRetry    = 5 * time.Second
	unhealthyRetry = time.Minute
)

// health is the verdict on one object, or the least healthy of several: its kstatus status,
// why, and whether the service's health timeout turned its progress into a failure.
type health struct {
	status   holdfastv1.HealthStatus
	message  string
	timedOut bool
	// ref is the object the verdict is about; since when its service's revision was applied
	// (zero when not recorded).
	ref   holdfastv1.ResourceRef
	since time.Time
}

// failed reports a verdict that needs a change to get better: kstatus Failed, or a timeout.
func (h health) failed() bool { return h.status == holdfastv1.HealthFailed || h.timedOut }

// object names the object the verdict is about.
func (h health) object() string { return toRef(h.ref).String() }

// rank orders verdicts from healthy to failed, for the least healthy of several.
func (h health) rank() int {
	switch {
	case h.failed():
		return 4
	case h.status == holdfastv1.HealthCurrent:
		return 0
	case h.status == holdfastv1.HealthInProgress:
		return 2
	case h.status == holdfastv1.HealthUnknown:
		return 1
	}
	return 3 // Terminating, NotFound
}

// worstOf is the least healthy of several verdicts, and how many there were.
type worstOf struct {
	health
	n int
}

// add counts h, keeping the first of the least healthy.
func (w *worstOf) add(h health) {
	if w.n == 0 || h.rank() > w.rank() {
		w.health = h
	}
	w.n++
}

// healthSummary is the least healthy of a set of inventory entries, in all and per service.
type healthSummary struct {
	all       worstOf
	byService map[string]worstOf
}

// healthOf judges each entry once: its recorded health, failed once its service's revision has
// been applied for longer than the service's health timeout without the object becoming
// Current. Entries never applied have no health and are not counted.
func (s *scope) healthOf(entries []holdfastv1.ResourceStatus) healthSummary {
	timeouts := map[string]time.Duration{}
	if s.mcs != nil {
		for _, svc := range s.mcs.Spec.Services {
			if svc.HealthTimeout != nil && svc.HealthTimeout.Duration > 0 {
				timeouts[svc.Name] = svc.HealthTimeout.Duration
			}
		}
	}
	since := map[string]time.Time{}
	for _, st := range s.css.Status.Services {
		if st.RevisionTime != nil {
			since[st.Name] = st.RevisionTime.Time
		}
	}
	sum := healthSummary{all: worstOf{health: health{status: holdfastv1.HealthCurrent}}, byService: map[string]worstOf{}}
	for _, rs := range entries {
		if rs.Health == "" {
			continue
		}
		h := health{status: rs.Health, message: rs.HealthMessage, ref: rs.ResourceRef, since: since[rs.Service]}
		if rs.Health != holdfastv1.HealthCurrent && rs.Health != holdfastv1.HealthFailed && !h.since.IsZero() {
			timeout := timeouts[rs.Service]
			if timeout == 0 {
				timeout = DefaultHealthTimeout
			}
			if age := s.now.Sub(h.since); age > timeout {
				h.timedOut = true
				h.message = fmt.Sprintf("not healthy %s after its revision was applied (healthTimeout %s): %s",
					age.Round(time.Second), timeout, h.message)
			}
		}
		sum.all.add(h)
		w := sum.byService[rs.Service]
		w.add(h)
		sum.byService[rs.Service] = w
	}
	return sum
}

// setHealthy sets the Healthy condition from the inventory's health: True when every applied
// object is Current, Unknown (Progressing) while some are still on their way, False (Unhealthy,
// or HealthTimeout) when one failed; the message names the least healthy object.
func setHealthy(s *scope, sum healthSummary) {
	if !s.deployed {
		keepOrUnknown(s, holdfastv1.HealthyCondition, "objects not applied yet")
		return
	}
	worst := sum.all
	switch {
	case s.checksErr != nil:
		set(s, holdfastv1.HealthyCondition, metav1.ConditionFalse, holdfastv1.InvalidHealthCheckReason,
			s.checksErr.Error()+"; fix spec.healthChecks (kstatus judges every kind until then)")
	case worst.timedOut:
		set(s, holdfastv1.HealthyCondition, metav1.ConditionFalse, holdfastv1.HealthTimeoutReason, worst.object()+": "+worst.message)
	case worst.failed():
		set(s, holdfastv1.HealthyCondition, metav1.ConditionFalse, holdfastv1.UnhealthyReason, worst.object()+": "+worst.message)
	case worst.status != holdfastv1.HealthCurrent:
		set(s, holdfastv1.HealthyCondition, metav1.ConditionUnknown, holdfastv1.ProgressingReason,
			fmt.Sprintf("%s is %s: %s", worst.object(), worst.status, worst.message))
	case s.part != nil:
		// Healthy as recorded (inventory_part.go): the objects not read are, and were counted.
	default:
		set(s, holdfastv1.HealthyCondition, metav1.ConditionTrue, holdfastv1.HealthyReason, fmt.Sprintf("%d objects healthy", worst.n))
	}
}

// setServiceHealth records the least healthy of each service's objects in its status. A service
// none of whose objects were read keeps its health as recorded when only part of the inventory
// was (recorded, see inventory_part.go), else has none.
func setServiceHealth(services []holdfastv1.ServiceStatus, sum healthSummary, recorded []holdfastv1.ServiceStatus) {
	for i := range services {
		worst := sum.byService[services[i].Name]
		services[i].Health, services[i].HealthMessage = "", ""
		if worst.n == 0 {
			services[i].Health, services[i].HealthMessage = recordedHealth(recorded, services[i].Name)
			continue
		}
		services[i].Health = worst.status
		if worst.timedOut {
			services[i].Health = holdfastv1.HealthFailed
		}
		if worst.status != holdfastv1.HealthCurrent || worst.timedOut {
			services[i].HealthMessage = worst.object() + ": " + worst.message
		}
	}
}

// healthWait is how soon the status object should be looked at again for the health of its
// objects: never when all are healthy (0); every unhealthyRetry while one failed; while some are
// becoming healthy, every healthRetry at first, then less often as the revision ages (a sixth of
// its age, at most unhealthyRetry), so that a thousand clusters rolling out a slow Deployment do
// not each compare every few seconds for minutes.
func healthWait(s *scope) time.Duration {
	worst := s.healthOf(s.resources).all
	switch {
	case worst.failed():
		return unhealthyRetry
	case worst.status == holdfastv1.HealthCurrent:
		return 0
	}
	wait := healthRetry
	if !worst.since.IsZero() {
		wait = max(wait, min(s.now.Sub(worst.since)/6, unhealthyRetry))
	}
	return wait
}

// healthPending reports whether the last recorded health of the status object's objects was
// not all healthy: the next visit compares the cluster again, which reads them anew.
func healthPending(css *holdfastv1.ClusterServiceStatus) bool {
	c := conditions.Get(css, holdfastv1.HealthyCondition)
	return c != nil && c.Status != metav1.ConditionTrue
}
