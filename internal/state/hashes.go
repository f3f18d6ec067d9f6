package state

import (
	"encoding/json"
	"slices"
	"unique"
)

// Hashes maps a served tool's name to the hex SHA-256 of its raw
// definition as last served. Names and hashes are interned: the targets
// of a fleet mostly serve the same tools, and with each name and hash
// held once for all of them a target pays two pointers a tool instead of
// its own copies (about 6 KB a target for 50 tools; DESIGN §14 gives a
// target 20 KiB in all). Interned values are freed when no target holds
// them. On disk it is the JSON object {name: hash}.
type Hashes map[unique.Handle[string]]unique.Handle[string]

// Get returns the hash recorded for name.
func (h Hashes) Get(name string) (string, bool) {
	v, ok := h[unique.Make(name)]
	if !ok {
		return "", false // a zero Handle has no value
	}
	return v.Value(), true
}

// set records name's hash.
func (h Hashes) set(name, sum string) { h[unique.Make(name)] = unique.Make(sum) }

// has reports whether name has a hash.
func (h Hashes) has(name string) bool {
	_, ok := h[unique.Make(name)]
	return ok
}

// Names returns the names, sorted.
func (h Hashes) Names() []string {
	out := make([]string, 0, len(h))
	for k := range h {
		out = append(out, k.Value())
	}
	slices.Sort(out)
	return out
}

// MarshalJSON writes the object {name: hash}, keys sorted.
func (h Hashes) MarshalJSON() ([]byte, error) {
	m := make(map[string]string, len(h))
	for k, v := range h {
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
	if m == nil {
		*h = nil
		return nil
	}
	out := make(Hashes, len(m))
	for k, v := range m {
		out.set(k, v)
	}
	*h = out
	return nil
}
