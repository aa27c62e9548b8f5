package bytecache

import (
	"sync"
	"testing"
)

func key(b byte) Key { return Key{b} }

// TestCacheBoundedByBytes: the least recently used inputs go first once
// the inputs kept exceed the limit; an input over the limit is not kept;
// adding an input again neither replaces its value nor counts it twice.
func TestCacheBoundedByBytes(t *testing.T) {
	c := New[string](10)
	c.Add(key(1), 4, "a")
	c.Add(key(2), 4, "b")
	if v, ok := c.Get(key(1)); !ok || v != "a" {
		t.Fatalf("Get(1) = %q, %t", v, ok)
	}
	c.Add(key(2), 4, "other") // the same input again
	c.Add(key(3), 4, "c")     // 12 bytes: 2, the least recently used, goes
	for k, want := range map[byte]bool{1: true, 2: false, 3: true} {
		if got := c.Has(key(k)); got != want {
			t.Errorf("Has(%d) = %t, want %t", k, got, want)
		}
	}
	if c.size != 8 {
		t.Errorf("size %d, want 8", c.size)
	}
	c.Add(key(4), 11, "d")
	if c.Has(key(4)) || !c.Has(key(1)) {
		t.Error("an input over the limit displaced others or was kept")
	}
}

// TestCacheConcurrent: releases planned and applied in parallel share the
// cache (run it with -race); its bytes stay within the limit.
func TestCacheConcurrent(t *testing.T) {
	c := New[[]int](64)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				k := key(byte((g*31 + i) % 40))
				if v, ok := c.Get(k); ok && len(v) != int(k[0]%7) {
					t.Errorf("value of %d has %d items", k[0], len(v))
				}
				c.Add(k, 8, make([]int, k[0]%7))
			}
		})
	}
	wg.Wait()
	if c.size > 64 || c.size != 8*c.lru.Len() {
		t.Errorf("size %d for %d entries", c.size, c.lru.Len())
	}
}
