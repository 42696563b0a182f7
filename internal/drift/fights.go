package drift

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// ObjectKey identifies one managed object of one status object, whatever API version it is
// declared at.
type ObjectKey struct {
	// Status is the ClusterServiceStatus that manages the object.
	Status                       types.NamespacedName
	Group, Kind, Namespace, Name string
}

// Fights remembers recent corrections per object, to notice another field manager reverting
// them again and again (then the object is Contested: see Policy.Respond). It lives in memory:
// after a restart, counting starts again (objects already Contested stay so, from status).
// Objects not corrected within the longest window asked for are dropped, at most once per such
// window, so it holds only recent corrections. The zero value is ready; it is safe for
// concurrent use.
type Fights struct {
	mu          sync.Mutex
	corrections map[ObjectKey][]time.Time
	longest     time.Duration
	swept       time.Time
}

// Correct records a correction of k at now and reports whether it may go ahead: false when
// the object was already corrected limit times within window before it (then it is contested,
// and no correction is recorded).
func (f *Fights) Correct(k ObjectKey, now time.Time, limit int, window time.Duration) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.corrections == nil {
		f.corrections = map[ObjectKey][]time.Time{}
	}
	f.longest = max(f.longest, window)
	if now.Sub(f.swept) >= f.longest {
		for other, times := range f.corrections {
			if len(times) == 0 || now.Sub(times[len(times)-1]) >= f.longest {
				delete(f.corrections, other)
			}
		}
		f.swept = now
	}
	recent := f.corrections[k][:0:0]
	for _, t := range f.corrections[k] {
		if now.Sub(t) < window {
			recent = append(recent, t)
		}
	}
	if len(recent) >= limit {
		f.corrections[k] = recent
		return false
	}
	f.corrections[k] = append(recent, now)
	return true
}

// Forget drops the corrections of an object, after a manual request resumed it.
func (f *Fights) Forget(k ObjectKey) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.corrections, k)
}

// ForgetStatus drops the corrections of every object of a status object that is gone.
func (f *Fights) ForgetStatus(status types.NamespacedName) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for k := range f.corrections {
		if k.Status == status {
			delete(f.corrections, k)
		}
	}
}

// tracked is how many objects f remembers corrections of.
func (f *Fights) tracked() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.corrections)
}

// Forgo takes back the correction of k recorded at at: it did not happen (the API server
// refused it), so it is no sign of a fight.
func (f *Fights) Forgo(k ObjectKey, at time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	times := f.corrections[k]
	for i := len(times) - 1; i >= 0; i-- {
		if times[i].Equal(at) {
			f.corrections[k] = append(times[:i:i], times[i+1:]...)
			return
		}
	}
}
