package schema

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/driftd/driftd/internal/jsonscan"
)

// testCache is the tests' Cache, as a program's would be: one for all.
var testCache = NewCache(64 << 20)

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

// TestCacheStaysWithinBudget replays the incident that made the caches
// byte-weighted: many changing schemas of up to 256 KiB, far more bytes than
// the budget, through a 4 MiB cache.
func TestCacheStaysWithinBudget(t *testing.T) {
	const budget = 4 << 20
	c := NewCache(budget)
	fed := 0
	for i := range 400 {
		raw := sizedSchema(i, []int{512, 4 << 10, 32 << 10, 256 << 10}[i%4])
		fed += parsedWeight(raw)
		if _, err := c.parse(raw); err != nil {
			t.Fatal(err)
		}
		_ = c.check(jsonscan.SumOf(raw), func() error { return nil })
		if c.Used() > budget {
			t.Fatalf("after %d schemas %d bytes accounted, budget %d", i+1, c.Used(), budget)
		}
	}
	if fed < 10*budget {
		t.Fatalf("fed only %d bytes; the test needs far more than the budget", fed)
	}
	if c.Len() == 0 {
		t.Fatal("nothing was cached")
	}
	t.Logf("fed %d MiB, holding %d entries, %d KiB", fed>>20, c.Len(), c.Used()>>10)
}

// TestCacheKeepsHotEntry: a schema read all the time survives a stream of
// others a hundred times the budget, mostly as a hit.
func TestCacheKeepsHotEntry(t *testing.T) {
	c := NewCache(1 << 20)
	hot := sizedSchema(-1, 2<<10)
	computed := 0
	get := func() {
		_ = remember(c, kindParse, jsonscan.SumOf(hot), func() parsed { computed++; v, err := parse(hot); return parsed{v, err} },
			func(parsed) int { return parsedWeight(hot) })
	}
	get()
	reads := 1
	for i := range 2000 { // about 100 MiB of weight through a 1 MiB cache
		if _, err := c.parse(sizedSchema(i, 8<<10)); err != nil {
			t.Fatal(err)
		}
		get()
		reads++
	}
	if c.Used() > c.Budget() {
		t.Fatalf("%d bytes accounted, budget %d", c.Used(), c.Budget())
	}
	// Random eviction drops the hot entry only when it is the one picked:
	// with some 20 entries kept, about one read in twenty misses.
	if computed > reads/4 {
		t.Fatalf("the hot schema was parsed %d times in %d reads", computed, reads)
	}
}

func TestCacheSkipsOversizedEntry(t *testing.T) {
	c := NewCache(1 << 20)
	small := sizedSchema(1, 1<<10)
	_, _ = c.parse(small)
	big := sizedSchema(2, (1<<20)/16) // weighs several times its length
	_, _ = c.parse(big)
	if _, ok := c.m.Get(cacheKey{kindParse, jsonscan.SumOf(big)}); ok {
		t.Fatal("an entry above a sixteenth of the budget was cached")
	}
	if _, ok := c.m.Get(cacheKey{kindParse, jsonscan.SumOf(small)}); !ok {
		t.Fatal("an oversized entry evicted a small one")
	}
}

// TestCacheKindsAndNilErrors: a parse and a check of the same bytes are
// different entries, and a cached nil error comes back as nil.
func TestCacheKindsAndNilErrors(t *testing.T) {
	c := NewCache(1 << 20)
	raw := []byte(`{"type":"string"}`)
	for range 2 {
		if err := c.Check(raw); err != nil {
			t.Fatal(err)
		}
		if v, err := c.parse(raw); err != nil || v.(map[string]any)["type"] != "string" {
			t.Fatalf("parse = %v, %v", v, err)
		}
	}
	if c.Len() != 2 {
		t.Fatalf("%d entries, want a parse and a check", c.Len())
	}
}

// TestNilCache: a nil Cache answers as a kept one does, keeping nothing.
func TestNilCache(t *testing.T) {
	var c *Cache
	d, s := []byte(`{"type":"string"}`), []byte(`{"type":"integer"}`)
	if got, want := c.Diff(d, s), testCache.Diff(d, s); len(got) == 0 || len(got) != len(want) || got[0] != want[0] {
		t.Errorf("nil Diff = %v, want %v", got, want)
	}
	if err := c.Check([]byte(`{"$schema":"https://example.com/unknown"}`)); err == nil {
		t.Error("nil Check passed a bad schema")
	}
	if _, err := c.Generate(d, 1); err != nil {
		t.Error(err)
	}
	if c.Len() != 0 || c.Used() != 0 || c.Budget() != 0 {
		t.Error("a nil Cache reports something kept")
	}
	c.Reset()
}

// TestCachesApart: two Caches (two daemons in one process) share nothing.
func TestCachesApart(t *testing.T) {
	a, b := NewCache(1<<20), NewCache(1<<20)
	a.Diff([]byte(`{"type":"string"}`), []byte(`{"type":"integer"}`))
	if a.Len() != 1 || b.Len() != 0 {
		t.Fatalf("entries %d and %d, want 1 and 0", a.Len(), b.Len())
	}
}

func TestCacheConcurrent(t *testing.T) {
	c := NewCache(256 << 10)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 300 {
				raw := sizedSchema((g*7+i)%40, 4<<10)
				v, err := c.parse(raw)
				if err != nil || v.(map[string]any)["title"] != fmt.Sprintf("s%d", (g*7+i)%40) {
					t.Errorf("wrong value for schema %d: %v", (g*7+i)%40, err)
					return
				}
				_ = c.Diff(raw, sizedSchema(i%3, 512))
			}
		})
	}
	wg.Wait()
	if c.Used() > c.Budget() {
		t.Fatalf("%d bytes accounted, budget %d", c.Used(), c.Budget())
	}
}
