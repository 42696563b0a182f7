package main

import (
	"testing"
	"time"
)

func TestDeletionOf(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 1, 12, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	obs := []observation{
		{at: at(0), rv: 10, exists: true},
		{at: at(54), rv: 20},               // deleted by another change before the namespace
		{at: at(67), rv: 30, exists: true}, // recreated by Holdfast
		{at: at(80), rv: 40},               // deleted again, long after
	}
	for _, c := range []struct {
		name   string
		sent   time.Time
		wantRV int64
		found  bool
	}{
		{"already absent when sent: that absence", at(56), 20, true},
		{"present when sent: the next deletion", at(1), 20, true},
		{"present when sent, deleted later", at(70), 40, true},
		{"absent at the end", at(90), 40, true},
		{"sent before anything was seen", at(-1), 20, true},
	} {
		got, ok := deletionOf(obs, c.sent)
		if ok != c.found || got.rv != c.wantRV {
			t.Errorf("%s: got rv %d (found %v), want rv %d (found %v)", c.name, got.rv, ok, c.wantRV, c.found)
		}
	}
	if _, ok := deletionOf(obs[:1], at(1)); ok {
		t.Error("a deletion found where none was observed")
	}
}
