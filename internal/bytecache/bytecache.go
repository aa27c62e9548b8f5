// Package bytecache is a least-recently-used cache bounded by the bytes of
// what it keeps, for values derived from large inputs (decoded manifests)
// that one process reads more than once.
package bytecache

import (
	"crypto/sha256"
	"sync"

	lru "github.com/hashicorp/golang-lru/v2/simplelru"
)

// Key names an input: the SHA-256 of everything the value depends on.
type Key [sha256.Size]byte

type entry[V any] struct {
	size  int
	value V
}

// Cache keeps values of inputs up to Limit bytes of inputs together, the
// least recently used dropped first. It is safe for concurrent use.
type Cache[V any] struct {
	limit int
	mu    sync.Mutex
	lru   *lru.LRU[Key, entry[V]]
	size  int
}

// New returns a cache of up to limit bytes of inputs.
func New[V any](limit int) *Cache[V] {
	c := &Cache[V]{limit: limit}
	// Bounded by bytes, not by count: the count is only a ceiling.
	c.lru, _ = lru.NewLRU[Key, entry[V]](1<<16, func(_ Key, e entry[V]) { c.size -= e.size })
	return c
}

// Get is the value of k, if kept.
func (c *Cache[V]) Get(k Key) (v V, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.lru.Get(k)
	return e.value, ok
}

// Add keeps v for k, an input of size bytes; an input over the limit is
// not kept.
func (c *Cache[V]) Add(k Key, size int, v V) {
	if size > c.limit {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lru.Contains(k) {
		return // the same input: the same value
	}
	c.lru.Add(k, entry[V]{size: size, value: v})
	c.size += size
	for c.size > c.limit {
		c.lru.RemoveOldest()
	}
}

// Has reports whether k's value is kept, without marking it used.
func (c *Cache[V]) Has(k Key) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Contains(k)
}
