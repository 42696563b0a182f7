package chartsource

import (
	"fmt"
	"testing"
	"time"
)

func TestLRUBounds(t *testing.T) {
	kib := func(n int) []byte { return make([]byte, n<<10) }
	tests := []struct {
		name      string
		max       int
		maxBytes  int64
		adds      []int // sizes in KiB, keys k0, k1, ...
		wantKeys  []string
		wantBytes int64
	}{
		{"under both bounds", 10, 100 << 10, []int{10, 20, 30}, []string{"k0", "k1", "k2"}, 60 << 10},
		{"byte budget evicts oldest", 10, 50 << 10, []int{20, 20, 20}, []string{"k1", "k2"}, 40 << 10},
		{"one large entry evicts several", 10, 50 << 10, []int{10, 10, 10, 40}, []string{"k2", "k3"}, 50 << 10},
		{"entry count still bounds", 2, 1 << 30, []int{1, 1, 1}, []string{"k1", "k2"}, 2 << 10},
		{"entry over the budget is not kept", 10, 50 << 10, []int{10, 60}, []string{"k0"}, 10 << 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newLRU(tt.max, tt.maxBytes)
			for i, size := range tt.adds {
				c.add(fmt.Sprint("k", i), kib(size))
			}
			n, b := c.size()
			if n != len(tt.wantKeys) || b != tt.wantBytes {
				t.Errorf("size = %d entries, %d bytes; want %d, %d", n, b, len(tt.wantKeys), tt.wantBytes)
			}
			if b > tt.maxBytes {
				t.Errorf("holds %d bytes, over its budget of %d", b, tt.maxBytes)
			}
			for _, k := range tt.wantKeys {
				if _, ok := c.get(k); !ok {
					t.Errorf("%s was evicted", k)
				}
			}
		})
	}
}

func TestLRUEvictsLeastRecentlyUsed(t *testing.T) {
	c := newLRU(10, 100)
	c.add("a", make([]byte, 40))
	c.add("b", make([]byte, 40))
	c.get("a")
	c.add("c", make([]byte, 40))
	if _, ok := c.get("b"); ok {
		t.Errorf("b, the least recently used, was kept")
	}
	if _, ok := c.get("a"); !ok {
		t.Errorf("a, read after b was added, was evicted")
	}
}

func TestLRUReplaceAccountsBytes(t *testing.T) {
	c := newLRU(10, 100)
	c.add("a", make([]byte, 60))
	c.add("a", make([]byte, 30))
	if n, b := c.size(); n != 1 || b != 30 {
		t.Errorf("after replace: %d entries, %d bytes; want 1, 30", n, b)
	}
	// Replacing with an archive over the budget drops the stale one too.
	c.add("a", make([]byte, 200))
	if n, b := c.size(); n != 0 || b != 0 {
		t.Errorf("after oversize replace: %d entries, %d bytes; want 0, 0", n, b)
	}
}

func TestTTLCacheBounds(t *testing.T) {
	now := time.Unix(1000, 0)
	clock := func() time.Time { return now }
	c := newTTLCache[string](time.Minute, 10, 100, clock)
	c.add("a", "a", 40)
	c.add("b", "b", 40)
	c.add("c", "c", 40) // over 100 bytes: one of a and b goes
	if c.bytes > 100 || len(c.items) != 2 {
		t.Errorf("%d entries, %d bytes; want 2 within 100", len(c.items), c.bytes)
	}
	if _, ok := c.get("c"); !ok {
		t.Errorf("the value just added is missing")
	}

	// Expired entries go before live ones.
	now = now.Add(2 * time.Minute)
	c.add("d", "d", 40)
	c.add("e", "e", 40)
	for _, k := range []string{"d", "e"} {
		if _, ok := c.get(k); !ok {
			t.Errorf("%s was dropped for an expired entry", k)
		}
	}
	if c.bytes != 80 {
		t.Errorf("%d bytes after expired entries were dropped, want 80", c.bytes)
	}

	// Replacing a key reweighs it; a value over the whole budget is not kept.
	c.add("d", "d2", 10)
	c.add("huge", "huge", 101)
	if _, ok := c.get("huge"); ok || c.bytes != 50 {
		t.Errorf("huge kept %v, %d bytes; want not kept, 50", ok, c.bytes)
	}
}
