package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/driftd/driftd/internal/atomicfile"
	"github.com/driftd/driftd/internal/catalogue"
)

// Adopt moves the state and snapshot recorded under the target name from
// to the name to, when to has none: a discovered target that an earlier
// release named otherwise keeps its baseline, first-seen times and
// history instead of starting again. Active findings are keyed anew
// (a fingerprint hashes the target's name). It reports whether it moved
// anything; a corrupt file under from is left where it is.
func (s *Store) Adopt(to, from string) (bool, error) {
	if err := errors.Join(checkName(to), checkName(from)); err != nil {
		return false, err
	}
	if _, err := os.Lstat(s.statePath(to)); !errors.Is(err, fs.ErrNotExist) {
		return false, err // to has a state (or cannot be read): nothing to adopt
	}
	b, err := atomicfile.ReadFile(s.statePath(from), maxFileBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		return false, fmt.Errorf("state: adopt %s: %w", from, err)
	}
	if err := checkHeader(st.Version, st.Target, from); err != nil {
		return false, fmt.Errorf("state: adopt %s: %w", from, err)
	}
	st.Target = to
	findings := make(map[string]ActiveFinding, len(st.Findings))
	for _, af := range st.Findings {
		fp := catalogue.Fingerprint(to, catalogue.Finding{Rule: af.Rule, Tool: af.Tool, Kind: af.ItemKind,
			Direction: af.Direction, Pointer: af.Pointer, Change: af.Change})
		findings[fp] = af
	}
	st.Findings = findings
	if snap, err := s.LoadSnapshot(from); err == nil {
		if err := s.writeAtomic(filepath.Join(s.snapDir, to+".json"), encodeSnapshot(to, snap)); err != nil {
			return false, err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	hist, _, err := s.fileHistory(from)
	if err != nil {
		return false, err
	}
	if err := s.writeHistory(to, hist); err != nil {
		return false, err
	}
	st.History = nil
	out, err := encodeFile(&st)
	if err != nil {
		return false, fmt.Errorf("state: adopt %s: %w", from, err)
	}
	if err := s.writeAtomic(s.statePath(to), out); err != nil {
		return false, err
	}
	return true, s.Remove(from)
}
