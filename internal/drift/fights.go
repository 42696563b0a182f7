package drift

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// ObjectKey identifies one managed object of one status object, whatever API version it is
// declared at.
type ObjectKey struct {
	// Status is the ClusterServiceStatus that manages the object.
	Status                       types.NamespacedName
	Group, Kind, Namespace, Name string
}

// FightRules are a policy's fight detection: Limit corrections within Window make an object
// Contested; then, unless Stop, it is corrected again after FirstBackoff, and after each further
// correction twice as long as before, up to MaxBackoff. An object Contested that stays as
// corrected for a Window is no longer Contested.
type FightRules struct {
	Limit        int
	Window       time.Duration
	FirstBackoff time.Duration
	MaxBackoff   time.Duration
	Stop         bool
}

// backoff is the wait before the correction that follows n corrections made while Contested.
func (r FightRules) backoff(n int) time.Duration {
	d := r.FirstBackoff
	for range n {
		if d >= r.MaxBackoff {
			break
		}
		d *= 2
	}
	return min(d, r.MaxBackoff)
}

// FightDecision is what Fights.Decide says about one correction.
type FightDecision struct {
	// Correct: the correction goes ahead now (it is counted).
	Correct bool
	// Contested: another manager keeps changing the object back; NewlyContested: since this
	// decision.
	Contested, NewlyContested bool
	// Next, when the correction waits for the backoff, is when it may go ahead.
	Next time.Time
}

// fight is what Fights remembers of one object.
type fight struct {
	// corrections made within the window before the object was Contested.
	corrections []time.Time
	contested   bool
	// backoffs counts the corrections made while Contested; last is the time of the latest
	// correction of either kind, and before what last and quiet were until the latest
	// correction made while Contested (for Forgo).
	backoffs int
	last     time.Time
	before   struct{ last, quiet time.Time }
	// next is set while a correction waits for the backoff; quiet, once a correction was made
	// while Contested, is when the fight is over if nobody changes the object back before.
	next, quiet time.Time
}

// due is the earliest time something is due about the object: its waiting correction, or the
// end of its fight.
func (e *fight) due() time.Time {
	if !e.next.IsZero() {
		return e.next
	}
	return e.quiet
}

// Fights remembers recent corrections per object, to notice another field manager reverting
// them again and again (then the object is Contested: see Policy.Respond) and to space out
// corrections of Contested objects. It lives in memory: after a restart an object Contested in
// status starts its backoff again from the first step. Objects neither corrected within the
// longest window asked for nor waiting for a correction are dropped, at most once per such
// window, so it holds only recent fights. The zero value is ready; it is safe for concurrent use.
type Fights struct {
	mu      sync.Mutex
	objects map[ObjectKey]*fight
	longest time.Duration
	swept   time.Time
}

// Decide records a correction of k at now if it may go ahead under r. contestedBefore says that
// status already shows the object Contested (what a restart left of a fight).
func (f *Fights) Decide(k ObjectKey, now time.Time, r FightRules, contestedBefore bool) FightDecision {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sweep(now, r.Window)
	e := f.objects[k]
	if e == nil {
		e = &fight{}
		if contestedBefore {
			e.contested, e.last = true, now
		}
		f.objects[k] = e
	}
	if e.contested && e.next.IsZero() && now.Sub(e.last) >= r.Window {
		// It stayed as corrected for a window: the fight is over, and this is a new drift.
		*e = fight{}
	}
	var d FightDecision
	if !e.contested {
		recent := e.corrections[:0:0]
		for _, t := range e.corrections {
			if now.Sub(t) < r.Window {
				recent = append(recent, t)
			}
		}
		if len(recent) < r.Limit {
			e.corrections, e.last = append(recent, now), now
			return FightDecision{Correct: true}
		}
		e.contested, e.corrections, d.NewlyContested = true, nil, true
	}
	d.Contested = true
	if r.Stop {
		return d
	}
	if next := e.last.Add(r.backoff(e.backoffs)); now.Before(next) {
		e.next, e.quiet, d.Next = next, time.Time{}, next
		return d
	}
	e.backoffs++
	e.before.last, e.before.quiet = e.last, e.quiet
	e.last, e.next, e.quiet, d.Correct = now, time.Time{}, now.Add(r.Window), true
	return d
}

// sweep drops, at most once per longest window, the objects neither corrected within it nor
// Contested with something due.
func (f *Fights) sweep(now time.Time, window time.Duration) {
	if f.objects == nil {
		f.objects = map[ObjectKey]*fight{}
	}
	f.longest = max(f.longest, window)
	if now.Sub(f.swept) < f.longest {
		return
	}
	for k, e := range f.objects {
		if e.due().IsZero() && now.Sub(e.last) >= f.longest {
			delete(f.objects, k)
		}
	}
	f.swept = now
}

// Next returns the earliest time something is due about a Contested object of status: a
// correction that waits for its backoff, or the end of a fight (the object stayed as corrected
// for a window, so it is no longer Contested); zero when nothing is.
func (f *Fights) Next(status types.NamespacedName) time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	var next time.Time
	for k, e := range f.objects {
		if due := e.due(); k.Status == status && !due.IsZero() && (next.IsZero() || due.Before(next)) {
			next = due
		}
	}
	return next
}

// Due reports whether something is due at now about a Contested object of status (see Next),
// without taking it (TakeDue).
func (f *Fights) Due(status types.NamespacedName, now time.Time) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for k, e := range f.objects {
		if k.Status == status && !e.due().IsZero() && !now.Before(e.due()) {
			return true
		}
	}
	return false
}

// TakeDue reports whether something is due at now about a Contested object of status (see
// Next): the caller then compares the cluster with the declaration, which corrects the waiting
// objects and finds the others back in sync. Fights that are over are forgotten.
func (f *Fights) TakeDue(status types.NamespacedName, now time.Time) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	due := false
	for k, e := range f.objects {
		if k.Status != status || e.due().IsZero() || now.Before(e.due()) {
			continue
		}
		due = true
		if e.next.IsZero() {
			delete(f.objects, k)
		}
	}
	return due
}

// Live reports whether k is in a fight that is not over at now: Contested, with a correction
// waiting for its backoff, corrected less than a window ago (it has not stayed as corrected for
// a window yet), or left as it is (Stop). While it is, the object shows Contested even when the
// latest correction put it back.
func (f *Fights) Live(k ObjectKey, now time.Time) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	e := f.objects[k]
	return e != nil && e.contested && (!e.next.IsZero() || now.Before(e.quiet) || e.quiet.IsZero())
}

// Forget drops what is known of an object, after a manual request resumed it.
func (f *Fights) Forget(k ObjectKey) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.objects, k)
}

// ForgetStatus drops the corrections of every object of a status object that is gone.
func (f *Fights) ForgetStatus(status types.NamespacedName) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for k := range f.objects {
		if k.Status == status {
			delete(f.objects, k)
		}
	}
}

// tracked is how many objects f remembers.
func (f *Fights) tracked() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.objects)
}

// Forgo takes back the correction of k recorded at at: it did not happen (the API server
// refused it), so it is no sign of a fight, and, made while Contested, it does not double the
// backoff either: an object whose corrections are refused for a while (its namespace
// terminating) would otherwise wait minutes once they are possible again.
func (f *Fights) Forgo(k ObjectKey, at time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e := f.objects[k]
	if e == nil {
		return
	}
	if e.contested && e.backoffs > 0 && e.last.Equal(at) && e.next.IsZero() {
		e.backoffs--
		e.last, e.quiet = e.before.last, e.before.quiet
		return
	}
	for i := len(e.corrections) - 1; i >= 0; i-- {
		if e.corrections[i].Equal(at) {
			e.corrections = append(e.corrections[:i:i], e.corrections[i+1:]...)
			return
		}
	}
}

// fightRules are the policy's fight rules.
func (p *Policy) fightRules() FightRules {
	return FightRules{Limit: p.FightMax, Window: p.FightWindow, FirstBackoff: holdfastv1.FightFirstBackoff,
		MaxBackoff: p.FightMaxBackoff, Stop: p.FightStop}
}
