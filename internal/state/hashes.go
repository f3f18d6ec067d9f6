package state

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"runtime"
	"slices"
	"strings"
	"sync"
	"weak"

	"github.com/driftd/driftd/internal/jsonscan"
)

// Hashes maps a served tool's name to the SHA-256 of its raw definition
// as last served. On disk it is the JSON object {name: hex hash}.
//
// It is what a target keeps of its served set between runs (DESIGN §14:
// hashes in memory, snapshots on disk), so it is as small as that allows:
// one sorted slice of names and 32-byte digests, some 70 bytes a tool, 2
// KiB for a target of 30 tools. A fleet of distinct servers shares
// nothing here; a fleet of replicas shares whole sets: a Hashes is
// immutable once built, and equal sets are one set, held by every target
// that serves it. A set no target holds any more is freed, and forgotten
// by the interning table.
type Hashes struct{ s *hashSet }

type hashSet struct {
	tools []toolHash // sorted by name, names unique
}

type toolHash struct {
	name string
	sum  [sha256.Size]byte
}

func (h Hashes) tools() []toolHash {
	if h.s == nil {
		return nil
	}
	return h.s.tools
}

// Get returns the digest recorded for name.
func (h Hashes) Get(name string) ([sha256.Size]byte, bool) {
	ts := h.tools()
	i, ok := slices.BinarySearchFunc(ts, name, func(t toolHash, name string) int { return strings.Compare(t.name, name) })
	if !ok {
		return [sha256.Size]byte{}, false
	}
	return ts[i].sum, true
}

// Len is the number of tools recorded.
func (h Hashes) Len() int { return len(h.tools()) }

// Names returns the names, sorted.
func (h Hashes) Names() []string {
	out := make([]string, 0, h.Len())
	for _, t := range h.tools() {
		out = append(out, t.name)
	}
	return out
}

// MarshalJSON writes the object {name: hex hash}, keys sorted.
func (h Hashes) MarshalJSON() ([]byte, error) {
	m := make(map[string]string, h.Len())
	for _, t := range h.tools() {
		m[t.name] = hex.EncodeToString(t.sum[:])
	}
	return json.Marshal(m)
}

// UnmarshalJSON reads the object {name: hex hash}. A value that is not a
// hex SHA-256 (a hand-edited file) reads as a digest no definition has:
// the next run finds the tool changed and compares its snapshot, which
// is what a wrong hash should cost.
func (h *Hashes) UnmarshalJSON(b []byte) error {
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	hb := newHashesBuilder(len(m))
	for k, v := range m {
		var sum [sha256.Size]byte
		if n, err := hex.Decode(sum[:], []byte(v)); err != nil || n != sha256.Size || len(v) != 2*sha256.Size {
			sum = [sha256.Size]byte{}
		}
		hb.set(k, sum)
	}
	*h = hb.done()
	return nil
}

// hashesBuilder builds a Hashes: the first digest set for a name stays.
type hashesBuilder struct {
	tools []toolHash
	seen  map[string]struct{}
}

func newHashesBuilder(n int) *hashesBuilder {
	return &hashesBuilder{tools: make([]toolHash, 0, n), seen: make(map[string]struct{}, n)}
}

func (b *hashesBuilder) has(name string) bool {
	_, ok := b.seen[name]
	return ok
}

func (b *hashesBuilder) set(name string, sum [sha256.Size]byte) {
	if b.has(name) {
		return
	}
	// The name is copied: it may point into a listing's body, which the
	// set would otherwise keep alive.
	name = strings.Clone(name)
	b.seen[name] = struct{}{}
	b.tools = append(b.tools, toolHash{name, sum})
}

// done returns the built set: the one already held by a target, if an
// equal one is.
func (b *hashesBuilder) done() Hashes {
	if len(b.tools) == 0 {
		return Hashes{}
	}
	slices.SortFunc(b.tools, func(x, y toolHash) int { return strings.Compare(x.name, y.name) })
	return Hashes{internSet(slices.Clip(b.tools))}
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

func internSet(tools []toolHash) *hashSet {
	var content bytes.Buffer
	for _, t := range tools {
		content.WriteString(t.name)
		content.WriteByte(0)
		content.Write(t.sum[:])
	}
	key := jsonscan.SumOf(content.Bytes())
	sets.Lock()
	defer sets.Unlock()
	if s := sets.m[key].Value(); s != nil && slices.Equal(s.tools, tools) {
		return s
	}
	s := &hashSet{tools: tools}
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
