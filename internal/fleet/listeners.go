package fleet

import "sync"

// listeners are the functions given to one of the registry's On... methods.
type listeners[T any] struct {
	mu sync.Mutex
	fs []func(T)
}

func (l *listeners[T]) add(f func(T)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.fs = append(l.fs, f)
}

// notify calls every function with v, in the order they were added, on the caller's goroutine.
func (l *listeners[T]) notify(v T) {
	if l == nil { // a Connection not made by a Registry
		return
	}
	l.mu.Lock()
	fs := l.fs
	l.mu.Unlock()
	for _, f := range fs {
		f(v)
	}
}
