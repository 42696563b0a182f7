package chartsource

import (
	"container/list"
	"context"
	"sync"
	"time"
)

// lru is a size-bounded least-recently-used cache of chart archives.
type lru struct {
	mu    sync.Mutex
	max   int
	ll    *list.List
	items map[string]*list.Element
}

type lruEntry struct {
	key  string
	data []byte
}

func newLRU(max int) *lru {
	return &lru{max: max, ll: list.New(), items: map[string]*list.Element{}}
}

func (c *lru) get(key string) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[key]
	if !ok {
		return nil, false
	}
	c.ll.MoveToFront(e)
	return e.Value.(*lruEntry).data, true
}

func (c *lru) add(key string, data []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[key]; ok {
		e.Value.(*lruEntry).data = data
		c.ll.MoveToFront(e)
		return
	}
	c.items[key] = c.ll.PushFront(&lruEntry{key: key, data: data})
	for c.ll.Len() > c.max {
		last := c.ll.Back()
		c.ll.Remove(last)
		delete(c.items, last.Value.(*lruEntry).key)
	}
}

func (c *lru) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ll.Len()
}

// ttlCache keeps values (parsed indexes, tag lists) for a short time.
type ttlCache[V any] struct {
	mu    sync.Mutex
	ttl   time.Duration
	max   int
	now   func() time.Time
	items map[string]ttlEntry[V]
}

type ttlEntry[V any] struct {
	v       V
	expires time.Time
}

func newTTLCache[V any](ttl time.Duration, max int, now func() time.Time) *ttlCache[V] {
	return &ttlCache[V]{ttl: ttl, max: max, now: now, items: map[string]ttlEntry[V]{}}
}

func (c *ttlCache[V]) get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[key]
	if !ok || !c.now().Before(e.expires) {
		var zero V
		return zero, false
	}
	return e.v, true
}

func (c *ttlCache[V]) add(key string, v V) {
	if c.ttl <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if len(c.items) >= c.max {
		for k, e := range c.items {
			if !now.Before(e.expires) {
				delete(c.items, k)
			}
		}
		if len(c.items) >= c.max {
			clear(c.items)
		}
	}
	c.items[key] = ttlEntry[V]{v: v, expires: now.Add(c.ttl)}
}

// flights collapses concurrent calls with the same key into one: the first
// caller runs fn, the others wait for its result or for their own context.
type flights[V any] struct {
	mu sync.Mutex
	m  map[string]*flight[V]
}

type flight[V any] struct {
	done chan struct{}
	v    V
	err  error
}

func (g *flights[V]) do(ctx context.Context, key string, fn func() (V, error)) (V, error) {
	g.mu.Lock()
	if g.m == nil {
		g.m = map[string]*flight[V]{}
	}
	if f, ok := g.m[key]; ok {
		g.mu.Unlock()
		select {
		case <-f.done:
			return f.v, f.err
		case <-ctx.Done():
			var zero V
			return zero, ctx.Err()
		}
	}
	f := &flight[V]{done: make(chan struct{})}
	g.m[key] = f
	g.mu.Unlock()

	f.v, f.err = fn()
	close(f.done)
	g.mu.Lock()
	delete(g.m, key)
	g.mu.Unlock()
	return f.v, f.err
}
