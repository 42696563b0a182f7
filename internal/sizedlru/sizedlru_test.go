package sizedlru

import "testing"

// TestBounds: past the byte or the entry bound the least recently used go first; a value over
// the byte bound is not kept; Add replaces, Take forgets.
func TestBounds(t *testing.T) {
	c := New[string, int](3, 10)
	c.Add("a", 1, 4)
	c.Add("b", 2, 4)
	c.Get("a") // a is now more recent than b
	c.Add("c", 3, 4)
	if _, ok := c.Get("b"); ok {
		t.Error("the least recently used outlived the byte bound")
	}
	if n, b := c.Size(); n != 2 || b != 8 {
		t.Errorf("%d values of %d bytes kept, want 2 of 8", n, b)
	}
	c.Add("a", 10, 1)
	if v, _ := c.Get("a"); v != 10 {
		t.Errorf("a is %d after its replacement", v)
	}
	if _, b := c.Size(); b != 5 {
		t.Errorf("%d bytes after a replacement, want 5", b)
	}
	c.Add("huge", 4, 11)
	if _, ok := c.Get("huge"); ok {
		t.Error("a value over the byte bound was kept")
	}
	c.Add("d", 4, 1)
	c.Add("e", 5, 1)
	if n, _ := c.Size(); n != 3 {
		t.Errorf("%d values kept, over the entry bound of 3", n)
	}
	if v, ok := c.Take("e"); !ok || v != 5 {
		t.Errorf("take e: %d %v", v, ok)
	}
	if _, ok := c.Get("e"); ok {
		t.Error("a value taken is still kept")
	}
}
