package chartsource

import (
	"container/list"
	"context"
	"sync"
	"time"
)

// lru is a least-recently-used cache of chart archives, bounded both in
// entries and in bytes: a count alone let 64 archives of up to 64 MiB each
// hold 4 GiB. Adding evicts the least recently used archives until both
// bounds hold; an archive larger than the byte bound is not kept at all.
type lru struct {
	mu       sync.Mutex
	max      int
	maxBytes int64
	bytes    int64
	ll       *list.List
	items    map[string]*list.Element
}

type lruEntry struct {
	key  string
	data []byte
}

func newLRU(max int, maxBytes int64) *lru {
	return &lru{max: max, maxBytes: maxBytes, ll: list.New(), items: map[string]*list.Element{}}
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
		c.remove(e)
	}
	if int64(len(data)) > c.maxBytes {
		return
	}
	c.items[key] = c.ll.PushFront(&lruEntry{key: key, data: data})
	c.bytes += int64(len(data))
	for c.ll.Len() > c.max || c.bytes > c.maxBytes {
		c.remove(c.ll.Back())
	}
}

func (c *lru) remove(e *list.Element) {
	entry := c.ll.Remove(e).(*lruEntry)
	delete(c.items, entry.key)
	c.bytes -= int64(len(entry.data))
}

// size returns how many archives the cache holds and their total bytes.
func (c *lru) size() (int, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ll.Len(), c.bytes
}

// ttlCache keeps values (parsed indexes, tag lists) for a short time. It is
// bounded in entries and in bytes, each value weighed by the caller (an
// index by the size of its index.yaml): a count alone let 256 indexes of up
// to 64 MiB each stay in memory.
type ttlCache[V any] struct {
	mu       sync.Mutex
	ttl      time.Duration
	max      int
	maxBytes int64
	bytes    int64
	now      func() time.Time
	items    map[string]ttlEntry[V]
}

type ttlEntry[V any] struct {
	v       V
	size    int64
	expires time.Time
}

func newTTLCache[V any](ttl time.Duration, max int, maxBytes int64, now func() time.Time) *ttlCache[V] {
	return &ttlCache[V]{ttl: ttl, max: max, maxBytes: maxBytes, now: now, items: map[string]ttlEntry[V]{}}
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

// add keeps v, which weighs size bytes, for the TTL. A value heavier than the
// whole budget is not kept. To make room it drops expired entries first,
// then any.
func (c *ttlCache[V]) add(key string, v V, size int64) {
	if c.ttl <= 0 || size > c.maxBytes {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.delete(key)
	full := func() bool { return len(c.items) >= c.max || c.bytes+size > c.maxBytes }
	now := c.now()
	if full() {
		for k, e := range c.items {
			if !now.Before(e.expires) {
				c.delete(k)
			}
		}
	}
	for k := range c.items {
		if !full() {
			break
		}
		c.delete(k)
	}
	c.items[key] = ttlEntry[V]{v: v, size: size, expires: now.Add(c.ttl)}
	c.bytes += size
}

func (c *ttlCache[V]) delete(key string) {
	if e, ok := c.items[key]; ok {
		c.bytes -= e.size
		delete(c.items, key)
	}
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
