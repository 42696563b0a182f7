package fleet

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

func TestRecoveryIsRecordedAndReported(t *testing.T) {
	key := types.NamespacedName{Namespace: "fleet", Name: "c1"}
	r := NewRegistry(Options{})
	defer r.Close()
	var reported []types.NamespacedName
	r.OnRecovered(func(cluster types.NamespacedName) { reported = append(reported, cluster) })
	c := &Connection{key: key, recoveries: &r.recoveries}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

	steps := []struct {
		name          string
		ok            bool
		at            time.Time
		wantRecovered time.Time
		wantReported  int
	}{
		{name: "first success", ok: true, at: at(0)},
		{name: "success", ok: true, at: at(10)},
		{name: "failure"},
		{name: "failure again"},
		{name: "success after failures is a recovery", ok: true, at: at(24), wantRecovered: at(24), wantReported: 1},
		{name: "success after a success is not", ok: true, at: at(34), wantRecovered: at(24), wantReported: 1},
		{name: "failure", wantRecovered: at(24), wantReported: 1},
		{name: "second recovery", ok: true, at: at(46), wantRecovered: at(46), wantReported: 2},
	}
	for _, s := range steps {
		if s.ok {
			c.MarkConnected(s.at)
		} else {
			c.MarkProbeFailed()
		}
		if got := c.Recovered(); !got.Equal(s.wantRecovered) {
			t.Errorf("%s: Recovered() = %v, want %v", s.name, got, s.wantRecovered)
		}
		if len(reported) != s.wantReported {
			t.Errorf("%s: %d recoveries reported, want %d", s.name, len(reported), s.wantReported)
		}
	}
	if got := c.LastConnected(); !got.Equal(at(46)) {
		t.Errorf("LastConnected() = %v, want %v", got, at(46))
	}
	for _, k := range reported {
		if k != key {
			t.Errorf("recovery reported for %v, want %v", k, key)
		}
	}
}

func TestRecoveryOfAConnectionWithoutRegistry(t *testing.T) {
	c := &Connection{}
	c.MarkProbeFailed()
	now := time.Now()
	c.MarkConnected(now)
	if !c.Recovered().Equal(now) {
		t.Errorf("Recovered() = %v, want %v", c.Recovered(), now)
	}
}
