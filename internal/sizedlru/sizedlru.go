// Package sizedlru is a least-recently-used cache bounded both in entries and in bytes, on
// k8s.io/utils/lru: what a cache of values of any size needs so that a few large ones cannot
// take the memory many small ones would share. It is safe for concurrent use.
package sizedlru

import (
	"sync"

	"k8s.io/utils/lru"
)

// Cache holds values of type V by key K, each with the size its caller gives it. The least
// recently used go first past maxEntries or maxBytes; a value larger than maxBytes is not kept.
type Cache[K comparable, V any] struct {
	mu       sync.Mutex
	maxBytes int64
	bytes    int64
	kept     *lru.Cache // K → entry[V]
}

type entry[V any] struct {
	value V
	size  int64
}

// New returns a cache of at most maxEntries values and maxBytes bytes.
func New[K comparable, V any](maxEntries int, maxBytes int64) *Cache[K, V] {
	c := &Cache[K, V]{maxBytes: maxBytes}
	// Called with c.mu held: every change to kept is made under it.
	c.kept = lru.NewWithEvictionFunc(maxEntries, func(_ lru.Key, v any) { c.bytes -= v.(entry[V]).size })
	return c
}

// Add keeps value under key in place of any value before, unless size is over the byte bound,
// and lets the least recently used go past the bounds.
func (c *Cache[K, V]) Add(key K, value V, size int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.kept.Remove(key)
	if size > c.maxBytes {
		return
	}
	c.kept.Add(key, entry[V]{value: value, size: size})
	c.bytes += size
	for c.bytes > c.maxBytes {
		c.kept.RemoveOldest()
	}
}

// Get returns the value under key, if any, as the most recently used.
func (c *Cache[K, V]) Get(key K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.getLocked(key)
}

// Take returns the value under key, if any, and forgets it.
func (c *Cache[K, V]) Take(key K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.getLocked(key)
	if ok {
		c.kept.Remove(key)
	}
	return v, ok
}

func (c *Cache[K, V]) getLocked(key K) (V, bool) {
	v, ok := c.kept.Get(key)
	if !ok {
		var zero V
		return zero, false
	}
	return v.(entry[V]).value, true
}

// Remove forgets the value under key.
func (c *Cache[K, V]) Remove(key K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.kept.Remove(key)
}

// Size returns how many values are kept and their bytes.
func (c *Cache[K, V]) Size() (int, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.kept.Len(), c.bytes
}
