package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/probe"
	"github.com/driftd/driftd/internal/sanitize"
)

// Reasons a changed tool's previous definition is unavailable.
var (
	// ErrNoSnapshot: Apply was given no loader.
	ErrNoSnapshot = errors.New("state: no snapshot loader")
	// ErrSnapshotStale: the snapshot's definition does not hash to the
	// stored hash, as after a crash between writing the snapshot and the
	// state file. Diffing it would report the wrong change.
	ErrSnapshotStale = errors.New("state: snapshot does not match the stored hashes")
)

// diffServed compares served against prev.ToolHashes, appends the served
// changes to tr and, when the set changed, records the new hashes and the
// snapshot to write in next. It reports whether the set changed.
func diffServed(c *probe.Caches, prev, next *State, now time.Time, served []Tool, loadPrev func() ([]Tool, error), tr *Transition) bool {
	first := prev.NeverListed()
	hashes := newHashesBuilder(len(served))
	cur := make([]Tool, 0, len(served))
	var added []string
	var changed []Tool // current definitions of tools whose hash moved
	for _, t := range served {
		if hashes.has(t.Name) {
			continue
		}
		sum := digest(c, t.Raw)
		hashes.set(t.Name, sum)
		cur = append(cur, t)
		if first {
			continue
		}
		switch old, ok := prev.ToolHashes.Get(t.Name); {
		case !ok:
			added = append(added, t.Name)
		case old != sum:
			changed = append(changed, t)
		}
	}
	var removed []string
	for _, name := range prev.ToolHashes.Names() {
		if !hashes.has(name) {
			removed = append(removed, name)
		}
	}
	if !first && len(added)+len(removed)+len(changed) == 0 {
		return false
	}
	slices.Sort(added)
	slices.SortFunc(changed, func(a, b Tool) int { return strings.Compare(a.Name, b.Name) })
	for _, name := range added {
		tr.ServedChanges = append(tr.ServedChanges, Event{Time: now, Kind: KindServedChange,
			Tool: name, Change: catalogue.ChgToolAdded, Message: "tool added to the served set"})
	}
	for _, name := range removed {
		tr.ServedChanges = append(tr.ServedChanges, Event{Time: now, Kind: KindServedChange,
			Tool: name, Change: catalogue.ChgToolRemoved, Message: "tool removed from the served set"})
	}
	if len(changed) > 0 {
		tr.SnapshotErr = diffChanged(c, prev, now, changed, loadPrev, tr)
	}
	slices.SortFunc(cur, func(a, b Tool) int { return strings.Compare(a.Name, b.Name) })
	for i, t := range cur {
		// The snapshot outlives the run, whose bodies the definitions are
		// read from (mcp.Bodies): it keeps copies.
		cur[i] = Tool{Name: t.Name, Raw: bytes.Clone(t.Raw)}
	}
	next.ToolHashes = hashes.done()
	next.ServedLastChange = now
	next.snap, next.snapPending = cur, true
	return true
}

// diffChanged emits one event per CompareTool finding between the previous
// and the current definition of each changed tool. Only here is the
// previous snapshot needed, so only here is it loaded.
func diffChanged(c *probe.Caches, prev *State, now time.Time, changed []Tool, loadPrev func() ([]Tool, error), tr *Transition) error {
	before, err := previousDefs(c, prev, changed, loadPrev)
	missing := 0
	for _, t := range changed {
		old, ok := before[t.Name]
		d, okOld := decodeDef(old)
		s, okNew := decodeDef(t.Raw)
		if !ok || !okOld || !okNew {
			missing++
			continue
		}
		for _, f := range catalogue.CompareServed(c.Schema(), d, s) {
			tr.ServedChanges = append(tr.ServedChanges, Event{
				Time: now, Kind: KindServedChange, Rule: f.Rule, Severity: f.Severity, Tool: t.Name,
				Pointer: sanitize.Text(f.Pointer), Direction: f.Direction, Change: catalogue.ServedChangeID(f), Message: sanitize.Text(f.Message),
			})
		}
	}
	if missing == 0 {
		return nil
	}
	if err == nil {
		err = ErrSnapshotStale
	}
	return fmt.Errorf("previous definition of %d changed tool(s) unavailable: %w", missing, err)
}

// previousDefs returns the previous raw definitions of the named tools
// whose bytes still hash to prev.ToolHashes. A snapshot that Save has not
// yet written (a failed write) is newer than the file, so it wins.
func previousDefs(c *probe.Caches, prev *State, changed []Tool, loadPrev func() ([]Tool, error)) (map[string]json.RawMessage, error) {
	tools := prev.snap
	if !prev.snapPending {
		if loadPrev == nil {
			return nil, ErrNoSnapshot
		}
		var err error
		if tools, err = loadPrev(); err != nil {
			return nil, err
		}
	}
	want := make(map[string]bool, len(changed))
	for _, t := range changed {
		want[t.Name] = true
	}
	out := make(map[string]json.RawMessage, len(changed))
	for _, t := range tools {
		if !want[t.Name] {
			continue
		}
		if old, ok := prev.ToolHashes.Get(t.Name); ok && digest(c, t.Raw) == old {
			out[t.Name] = t.Raw
		}
	}
	return out, nil
}

// decodeDef reads the compared part of a definition as the probe does. A
// field of the wrong type is left empty (the probe reports that); bytes
// that are not JSON, or a definition without a usable name, cannot be
// compared at all.
func decodeDef(raw json.RawMessage) (mcp.Tool, bool) {
	if !json.Valid(raw) {
		return mcp.Tool{}, false
	}
	t, err := mcp.ParseTool(raw)
	return t, err == nil
}
