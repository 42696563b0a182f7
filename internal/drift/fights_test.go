package drift

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// stopRules and backoffRules: 3 corrections a minute make an object Contested.
var (
	stopRules    = FightRules{Limit: 3, Window: time.Minute, FirstBackoff: 10 * time.Second, MaxBackoff: 5 * time.Minute, Stop: true}
	backoffRules = FightRules{Limit: 3, Window: time.Minute, FirstBackoff: 10 * time.Second, MaxBackoff: 45 * time.Second}
)

func TestFightsCountWithinTheWindow(t *testing.T) {
	var f Fights
	k := ObjectKey{Kind: "ConfigMap", Name: "a"}
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	for i := 0; i < 3; i++ {
		if d := f.Decide(k, t0.Add(time.Duration(i)*time.Second), stopRules, false); !d.Correct || d.Contested {
			t.Fatalf("correction %d: %+v, want it to go ahead", i+1, d)
		}
	}
	if d := f.Decide(k, t0.Add(10*time.Second), stopRules, false); d.Correct || !d.NewlyContested || !d.Next.IsZero() {
		t.Fatalf("a fourth correction within the window: %+v, want newly Contested and no correction with Stop", d)
	}
	if d := f.Decide(k, t0.Add(20*time.Second), stopRules, false); d.Correct || !d.Contested || d.NewlyContested {
		t.Fatalf("Contested with Stop: %+v, want no correction", d)
	}
	f.Forget(k)
	for i := 0; i < 3; i++ {
		if !f.Decide(k, t0.Add(2*time.Minute), stopRules, false).Correct {
			t.Fatal("counting did not restart after forget")
		}
	}
	other := ObjectKey{Kind: "ConfigMap", Name: "b"}
	for i := 0; i < 5; i++ {
		// Corrections a window apart never add up to a fight.
		if !f.Decide(other, t0.Add(time.Duration(i)*time.Minute), stopRules, false).Correct {
			t.Fatalf("correction %d, a window after the one before, refused", i+1)
		}
	}
}

// TestFightsBackOff plays a fight: another manager changes the object back a second after each
// correction. With Backoff, correction never stops: the waits double up to the cap, and a
// correction that stays for a window ends the fight.
func TestFightsBackOff(t *testing.T) {
	var f Fights
	k := ObjectKey{Kind: "ConfigMap", Name: "a"}
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	var waits []time.Duration
	var lastCorrection time.Time
	for range 9 {
		d := f.Decide(k, now, backoffRules, false)
		if !d.Correct {
			if !d.Contested || d.Next.IsZero() {
				t.Fatalf("at %s: %+v, want a correction or a wait for the backoff", now, d)
			}
			waits = append(waits, d.Next.Sub(lastCorrection))
			now = d.Next
			if d = f.Decide(k, now, backoffRules, false); !d.Correct || !d.Contested {
				t.Fatalf("at the time the backoff named: %+v, want the correction to go ahead", d)
			}
		}
		lastCorrection = now
		now = now.Add(time.Second) // changed back
	}
	want := []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 45 * time.Second, 45 * time.Second, 45 * time.Second}
	if fmt.Sprint(waits) != fmt.Sprint(want) {
		t.Fatalf("waits between corrections once Contested: %v, want %v", waits, want)
	}
	if next := f.Next(k.Status); !next.Equal(lastCorrection.Add(backoffRules.Window)) {
		t.Fatalf("Next = %s after a correction while Contested, want the end of the fight a window later", next)
	}
	d := f.Decide(k, now, backoffRules, false)
	if next := f.Next(k.Status); !next.Equal(d.Next) || f.TakeDue(k.Status, now) {
		t.Fatalf("Next = %s (or due at once) while a correction waits until %s", next, d.Next)
	}
	if !f.TakeDue(k.Status, d.Next) || f.tracked() != 1 {
		t.Fatal("the waiting correction is not due at the time it waits for, or was forgotten")
	}
	if d := f.Decide(k, d.Next, backoffRules, false); !d.Correct {
		t.Fatalf("%+v, want the waiting correction", d)
	}
	quiet := f.Next(k.Status)
	if f.Due(k.Status, quiet.Add(-time.Millisecond)) || !f.Due(k.Status, quiet) || f.tracked() != 1 {
		t.Fatal("Due does not say the end of the fight is due exactly a window after the last correction, or forgot the fight")
	}
	if f.TakeDue(k.Status, quiet.Add(-time.Millisecond)) || !f.TakeDue(k.Status, quiet) || f.tracked() != 0 {
		t.Fatal("the end of the fight is not due exactly a window after the last correction, or the fight was not forgotten then")
	}
	if d := f.Decide(k, quiet.Add(time.Minute), backoffRules, false); !d.Correct || d.Contested {
		t.Fatalf("a drift after the fight ended: %+v, want a plain correction", d)
	}
}

func TestFightsResumeContestedFromStatus(t *testing.T) {
	var f Fights
	k := ObjectKey{Kind: "ConfigMap", Name: "a"}
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	// After a restart nothing is remembered, but status says Contested: the backoff starts over.
	d := f.Decide(k, now, backoffRules, true)
	if d.Correct || !d.Contested || d.NewlyContested || !d.Next.Equal(now.Add(10*time.Second)) {
		t.Fatalf("%+v, want a wait of the first backoff", d)
	}
}

func TestFightsForgetObjectsNotCorrectedRecently(t *testing.T) {
	var f Fights
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	long := FightRules{Limit: 5, Window: 10 * time.Minute, FirstBackoff: time.Second, MaxBackoff: time.Minute}
	short := long
	short.Window = time.Minute
	for i := range 100 {
		f.Decide(ObjectKey{Kind: "ConfigMap", Name: fmt.Sprint("old-", i)}, t0, long, false)
	}
	recent := ObjectKey{Kind: "ConfigMap", Name: "recent"}
	f.Decide(recent, t0.Add(5*time.Minute), short, false) // a shorter window elsewhere
	waiting := ObjectKey{Kind: "ConfigMap", Name: "waiting"}
	f.Decide(waiting, t0, long, true) // Contested, its correction waits
	if f.tracked() != 102 {
		t.Fatalf("%d objects remembered within the window, want 102", f.tracked())
	}
	f.Decide(ObjectKey{Kind: "ConfigMap", Name: "new"}, t0.Add(11*time.Minute), long, false)
	if f.tracked() != 3 {
		t.Fatalf("%d objects remembered after the longest window passed, want the recent one, the waiting one and the new one", f.tracked())
	}
	for _, k := range []ObjectKey{recent, waiting} {
		if _, ok := f.objects[k]; !ok {
			t.Fatalf("%s was forgotten", k.Name)
		}
	}
}

func nn(namespace, name string) types.NamespacedName {
	return types.NamespacedName{Namespace: namespace, Name: name}
}

func TestFightsForgetStatus(t *testing.T) {
	var f Fights
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	a := ObjectKey{Status: nn("fleet", "a.c1"), Kind: "ConfigMap", Name: "x"}
	b := ObjectKey{Status: nn("fleet", "b.c1"), Kind: "ConfigMap", Name: "x"}
	f.Decide(a, now, stopRules, false)
	f.Decide(b, now, stopRules, false)
	f.ForgetStatus(a.Status)
	if f.tracked() != 1 {
		t.Fatalf("%d objects tracked after forgetting one status object, want 1", f.tracked())
	}
}

func TestFightsForgo(t *testing.T) {
	var f Fights
	k := ObjectKey{Kind: "ConfigMap", Name: "a"}
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	for i := range 3 {
		at := now.Add(time.Duration(i) * time.Second)
		f.Decide(k, at, stopRules, false)
		f.Forgo(k, at) // refused by the API server: not a correction
	}
	if d := f.Decide(k, now.Add(5*time.Second), stopRules, false); !d.Correct {
		t.Fatalf("%+v: refused corrections were counted as a fight", d)
	}
}

// TestFightsForgoWhileContested: corrections of a Contested object that the API server refuses
// (its namespace terminating) do not double the backoff: once they are possible again, the
// object is corrected after the backoff it had, not after one doubled by each refusal.
func TestFightsForgoWhileContested(t *testing.T) {
	var f Fights
	k := ObjectKey{Kind: "ConfigMap", Name: "a"}
	rules := FightRules{Limit: 2, Window: time.Hour, FirstBackoff: 10 * time.Second, MaxBackoff: time.Hour}
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	for i := range 2 {
		f.Decide(k, now.Add(time.Duration(i)*time.Second), rules, false)
	}
	at := now.Add(2 * time.Second)
	if d := f.Decide(k, at, rules, false); d.Correct || !d.NewlyContested || !d.Next.Equal(now.Add(11*time.Second)) {
		t.Fatalf("third correction: %+v, want Contested, the next correction 10s after the last", d)
	}
	at = now.Add(11 * time.Second)
	for i := range 4 {
		if d := f.Decide(k, at, rules, false); !d.Correct {
			t.Fatalf("attempt %d at %s: %+v, want the correction to go ahead: the ones before were refused", i, at, d)
		}
		f.Forgo(k, at)
		at = at.Add(5 * time.Second)
	}
	if d := f.Decide(k, at, rules, false); !d.Correct {
		t.Fatalf("%+v: after refused corrections the object waits again", d)
	}
	// This one happened: the next waits twice as long.
	if d := f.Decide(k, at.Add(time.Second), rules, false); d.Correct || !d.Next.Equal(at.Add(20*time.Second)) {
		t.Fatalf("%+v, want a wait until %s", d, at.Add(20*time.Second))
	}
}
