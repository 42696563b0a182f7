package sharding

import "time"

// liveness tells live members from dead ones by when this replica saw each Lease change, on
// its own clock, as client-go's leader election does: the renew time written in a Lease comes
// from another machine's clock, and clocks disagree; how long a Lease has gone unchanged does
// not depend on them.
type liveness struct {
	seen map[string]sighting
}

type sighting struct {
	version string
	at      time.Time
}

// observe records that the Lease name is at version now and reports whether it changed within
// duration. A Lease seen for the first time counts as just changed: a replica that starts waits
// one duration before it counts a silent member dead.
func (l *liveness) observe(name, version string, duration time.Duration, now time.Time) (live bool, silent time.Duration) {
	if l.seen == nil {
		l.seen = map[string]sighting{}
	}
	s, ok := l.seen[name]
	if !ok || s.version != version {
		s = sighting{version: version, at: now}
		l.seen[name] = s
	}
	silent = now.Sub(s.at)
	return silent < duration, silent
}

// keep forgets the Leases not in names (deleted).
func (l *liveness) keep(names map[string]bool) {
	for n := range l.seen {
		if !names[n] {
			delete(l.seen, n)
		}
	}
}
