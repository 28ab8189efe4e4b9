package bearer

import (
	"crypto/sha256"
	"sync"
	"time"
)

// DefaultCacheSize is how many verified tokens a verifier remembers
// (about 1 KiB each, with their claims), unless its config says.
const DefaultCacheSize = 10_000

// digest names a token in a cache: its SHA-256, so that the cache holds
// no token.
type digest [sha256.Size]byte

// cache remembers verified tokens by digest, each until its time is up or
// the generation it was verified in has passed (the JWT verifier's key
// set changed), so that a token already seen costs a hash and a lookup
// instead of a signature check (about 50 µs for RS256) or a round trip to
// the authorization server. It holds at most max entries: when full, it
// drops those past their time, then others.
type cache struct {
	max int

	mu      sync.RWMutex
	entries map[digest]cached
}

type cached struct {
	info  *Info
	until time.Time
	gen   uint64
}

func newCache(size int) *cache {
	if size <= 0 {
		size = DefaultCacheSize
	}
	return &cache{max: size, entries: map[digest]cached{}}
}

// get returns the Info of d if it is remembered, valid at now and of
// generation gen.
func (c *cache) get(d digest, now time.Time, gen uint64) *Info {
	c.mu.RLock()
	e, ok := c.entries[d]
	c.mu.RUnlock()
	if !ok || e.gen != gen || !now.Before(e.until) {
		return nil
	}
	return e.info
}

// put remembers info for d until until, as verified in generation gen.
func (c *cache) put(d digest, info *Info, until time.Time, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= c.max {
		now := time.Now()
		for k, e := range c.entries {
			if e.gen != gen || !now.Before(e.until) {
				delete(c.entries, k)
			}
		}
		// Still full of live entries: drop a quarter, whichever the
		// map's order gives; they are verified again when next seen.
		for k := range c.entries {
			if len(c.entries) < c.max*3/4 {
				break
			}
			delete(c.entries, k)
		}
	}
	c.entries[d] = cached{info: info, until: until, gen: gen}
}
