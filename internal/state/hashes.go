package state

import (
	"encoding/json"
	"maps"
	"runtime"
	"slices"
	"sync"
	"unique"
	"weak"

	"github.com/driftd/driftd/internal/jsonscan"
)

// Hashes maps a served tool's name to the hex SHA-256 of its raw
// definition as last served. On disk it is the JSON object {name: hash}.
//
// The targets of a fleet mostly serve the same tools, often exactly the
// same set: the replicas of one server. So a Hashes is immutable once
// built, and equal sets are one set, held by every target that serves it
// (a few hundred bytes a target otherwise, for 37 tools a map of some
// 1 KB; DESIGN §14 gives a target 20 KiB in all). Names and hashes are
// interned too, for sets that differ in a tool or two. A set no target
// holds any more is freed, and forgotten by the interning table.
type Hashes struct{ s *hashSet }

type hashSet struct {
	m map[unique.Handle[string]]unique.Handle[string]
}

// names is the set's map; nil, which reads as empty, for the empty set.
func (h Hashes) names() map[unique.Handle[string]]unique.Handle[string] {
	if h.s == nil {
		return nil
	}
	return h.s.m
}

// Get returns the hash recorded for name.
func (h Hashes) Get(name string) (string, bool) {
	v, ok := h.names()[unique.Make(name)]
	if !ok {
		return "", false // a zero Handle has no value
	}
	return v.Value(), true
}

// Len is the number of tools recorded.
func (h Hashes) Len() int { return len(h.names()) }

// Names returns the names, sorted.
func (h Hashes) Names() []string {
	out := make([]string, 0, h.Len())
	for k := range h.names() {
		out = append(out, k.Value())
	}
	slices.Sort(out)
	return out
}

// MarshalJSON writes the object {name: hash}, keys sorted.
func (h Hashes) MarshalJSON() ([]byte, error) {
	m := make(map[string]string, h.Len())
	for k, v := range h.names() {
		m[k.Value()] = v.Value()
	}
	return json.Marshal(m)
}

// UnmarshalJSON reads the object {name: hash}.
func (h *Hashes) UnmarshalJSON(b []byte) error {
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	hb := newHashesBuilder(len(m))
	for k, v := range m {
		hb.set(k, v)
	}
	*h = hb.done()
	return nil
}

// hashesBuilder builds a Hashes.
type hashesBuilder struct {
	m map[unique.Handle[string]]unique.Handle[string]
}

func newHashesBuilder(n int) hashesBuilder {
	return hashesBuilder{m: make(map[unique.Handle[string]]unique.Handle[string], n)}
}

func (b hashesBuilder) has(name string) bool {
	_, ok := b.m[unique.Make(name)]
	return ok
}

func (b hashesBuilder) set(name, sum string) { b.m[unique.Make(name)] = unique.Make(sum) }

// done returns the built set: the one already held by a target, if an
// equal one is.
func (b hashesBuilder) done() Hashes {
	if len(b.m) == 0 {
		return Hashes{}
	}
	return Hashes{internSet(b.m)}
}

// sets is the interning table: a set's content Sum to the set, weakly, so
// that holding a set here never keeps it alive. It is not a cache, and so
// not in the program's probe.Caches: it keeps no answer alive and has no
// budget to evict from, only says whether an equal set is already held by
// some target, as unique.Make does for strings; it is as large as the
// sets targets hold. It is package-level for the reason unique's table
// is: a set read from a state file (UnmarshalJSON) must find the set a
// run built, whoever built it.
var sets = struct {
	sync.Mutex
	m map[jsonscan.Sum]weak.Pointer[hashSet]
}{m: map[jsonscan.Sum]weak.Pointer[hashSet]{}}

func internSet(m map[unique.Handle[string]]unique.Handle[string]) *hashSet {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k.Value())
	}
	slices.Sort(names)
	var content []byte
	for _, n := range names {
		content = append(append(content, n...), 0)
		content = append(append(content, m[unique.Make(n)].Value()...), 0)
	}
	key := jsonscan.SumOf(content)
	sets.Lock()
	defer sets.Unlock()
	if s := sets.m[key].Value(); s != nil && maps.Equal(s.m, m) {
		return s
	}
	s := &hashSet{m: m}
	sets.m[key] = weak.Make(s)
	runtime.AddCleanup(s, forgetSet, key)
	return s
}

// forgetSet drops a freed set's entry, unless an equal set took it since.
func forgetSet(key jsonscan.Sum) {
	sets.Lock()
	defer sets.Unlock()
	if sets.m[key].Value() == nil {
		delete(sets.m, key)
	}
}
