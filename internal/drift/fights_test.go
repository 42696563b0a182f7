package drift

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

func TestFightsCountWithinTheWindow(t *testing.T) {
	var f Fights
	k := ObjectKey{Kind: "ConfigMap", Name: "a"}
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	for i := 0; i < 3; i++ {
		if !f.Correct(k, t0.Add(time.Duration(i)*time.Second), 3, time.Minute) {
			t.Fatalf("correction %d refused", i+1)
		}
	}
	if f.Correct(k, t0.Add(10*time.Second), 3, time.Minute) {
		t.Fatal("a fourth correction within the window was allowed")
	}
	if !f.Correct(k, t0.Add(2*time.Minute), 3, time.Minute) {
		t.Fatal("a correction after the window passed was refused")
	}
	f.Forget(k)
	for i := 0; i < 3; i++ {
		if !f.Correct(k, t0.Add(2*time.Minute), 3, time.Minute) {
			t.Fatal("counting did not restart after forget")
		}
	}
}

func TestFightsForgetObjectsNotCorrectedRecently(t *testing.T) {
	var f Fights
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	for i := range 100 {
		f.Correct(ObjectKey{Kind: "ConfigMap", Name: fmt.Sprint("old-", i)}, t0, 5, 10*time.Minute)
	}
	recent := ObjectKey{Kind: "ConfigMap", Name: "recent"}
	f.Correct(recent, t0.Add(5*time.Minute), 5, time.Minute) // a shorter window elsewhere
	if len(f.corrections) != 101 {
		t.Fatalf("%d objects remembered within the window, want 101", len(f.corrections))
	}
	f.Correct(ObjectKey{Kind: "ConfigMap", Name: "new"}, t0.Add(11*time.Minute), 5, 10*time.Minute)
	if len(f.corrections) != 2 {
		t.Fatalf("%d objects remembered after the longest window passed, want the recent one and the new one", len(f.corrections))
	}
	if _, ok := f.corrections[recent]; !ok {
		t.Fatal("an object corrected within the longest window was forgotten")
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
	f.Correct(a, now, 5, time.Minute)
	f.Correct(b, now, 5, time.Minute)
	f.ForgetStatus(a.Status)
	if f.tracked() != 1 {
		t.Fatalf("%d objects tracked after forgetting one status object, want 1", f.tracked())
	}
}
