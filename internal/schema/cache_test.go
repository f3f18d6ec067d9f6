package schema

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/driftd/driftd/internal/jsonscan"
)

// sizedSchema returns a distinct schema of about n bytes.
func sizedSchema(id, n int) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `{"title":"s%d","type":"object","properties":{`, id)
	for i := 0; b.Len() < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"p%d":{"type":"string","description":"field %d of schema %d"}`, i, i, id)
	}
	b.WriteString("}}")
	return []byte(b.String())
}

// checkAccounting asserts that used is the sum of the entries' weights,
// within the budget, and that the map and the recency ring agree.
func checkAccounting(t *testing.T, c *lru) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	sum, n := 0, 0
	for e := c.ring.next; e != &c.ring; e = e.next {
		sum += e.weight
		n++
	}
	if sum != c.used || n != len(c.m) || c.used > c.budget {
		t.Fatalf("accounted %d bytes (entries sum to %d), %d in the ring, %d in the map, budget %d", c.used, sum, n, len(c.m), c.budget)
	}
}

func parseThrough(c *lru, raw []byte) (any, error) {
	p := cached(c, kindParse, raw, parsedWeight, func(b []byte) parsed { v, err := parse(b); return parsed{v, err} })
	return p.v, p.err
}

// TestCacheStaysWithinBudget replays the incident that made the caches
// byte-weighted: many changing schemas of up to 256 KiB, far more bytes than
// the budget, through a 4 MiB cache.
func TestCacheStaysWithinBudget(t *testing.T) {
	const budget = 4 << 20
	c := newLRU(budget)
	fed := 0
	for i := range 400 {
		raw := sizedSchema(i, []int{512, 4 << 10, 32 << 10, 256 << 10}[i%4])
		fed += parsedWeight(raw)
		if _, err := parseThrough(c, raw); err != nil {
			t.Fatal(err)
		}
		_ = checkCached(c, jsonscan.SumOf(raw), func() error { return nil })
		checkAccounting(t, c)
	}
	if fed < 10*budget {
		t.Fatalf("fed only %d bytes; the test needs far more than the budget", fed)
	}
	if len(c.m) == 0 {
		t.Fatal("nothing was cached")
	}
	t.Logf("fed %d MiB, holding %d entries, %d KiB", fed>>20, len(c.m), c.used>>10)
}

func TestCacheKeepsHotEntry(t *testing.T) {
	c := newLRU(1 << 20)
	hot := sizedSchema(-1, 2<<10)
	computed := 0
	get := func() {
		_ = cached(c, kindParse, hot, parsedWeight, func(b []byte) parsed { computed++; v, err := parse(b); return parsed{v, err} })
	}
	get()
	for i := range 2000 { // about 100 MiB of weight through a 1 MiB cache
		if _, err := parseThrough(c, sizedSchema(i, 8<<10)); err != nil {
			t.Fatal(err)
		}
		if i%10 == 0 {
			get()
		}
	}
	checkAccounting(t, c)
	if computed != 1 {
		t.Fatalf("the hot schema was parsed %d times, want once", computed)
	}
}

func TestCacheSkipsOversizedEntry(t *testing.T) {
	c := newLRU(1 << 20)
	small := sizedSchema(1, 1<<10)
	_, _ = parseThrough(c, small)
	big := sizedSchema(2, (1<<20)/maxEntryFraction) // weighs several times its length
	_, _ = parseThrough(c, big)
	if _, ok := c.get(kindParse, big); ok {
		t.Fatal("an entry above the size limit was cached")
	}
	if _, ok := c.get(kindParse, small); !ok {
		t.Fatal("an oversized entry evicted a small one")
	}
}

// TestCacheKindsAndNilErrors: a parse and a check of the same bytes are
// different entries, and a cached nil error comes back as nil.
func TestCacheKindsAndNilErrors(t *testing.T) {
	c := newLRU(1 << 20)
	raw := []byte(`{"type":"string"}`)
	for range 2 {
		if err := checkCached(c, jsonscan.SumOf(raw), func() error { return check(raw) }); err != nil {
			t.Fatal(err)
		}
		if v, err := parseThrough(c, raw); err != nil || v.(map[string]any)["type"] != "string" {
			t.Fatalf("parse = %v, %v", v, err)
		}
	}
	if len(c.m) != 2 {
		t.Fatalf("%d entries, want a parse and a check", len(c.m))
	}
}

func TestCacheConcurrent(t *testing.T) {
	c := newLRU(256 << 10)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 300 {
				raw := sizedSchema((g*7+i)%40, 4<<10)
				v, err := parseThrough(c, raw)
				if err != nil || v.(map[string]any)["title"] != fmt.Sprintf("s%d", (g*7+i)%40) {
					t.Errorf("wrong value for schema %d: %v", (g*7+i)%40, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	checkAccounting(t, c)
}
