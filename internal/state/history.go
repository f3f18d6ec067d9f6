package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/driftd/driftd/internal/atomicfile"
)

// A target's history lives in a file of its own, history/<target>.json,
// beside its state file: the status pages and the API read it on every
// view, and a state file holds a baseline that can be megabytes, which a
// view would otherwise read whole for a hundred events. Files of releases
// before this one keep the history in the state file; it is read from
// there until the next Save moves it.

// historyFile is the history file's shape: one event a line.
type historyFile struct {
	Version int     `json:"version"`
	Target  string  `json:"target"`
	History []Event `json:"history"`
}

func (s *Store) historyPath(target string) string {
	return filepath.Join(s.histDir, target+".json")
}

// fileHistory reads target's history; moved is true when it still sits
// in the state file, as older releases wrote it. A missing history has no
// events.
func (s *Store) fileHistory(target string) (hist []Event, moved bool, err error) {
	b, err := atomicfile.ReadFile(s.historyPath(target), maxFileBytes)
	if errors.Is(err, fs.ErrNotExist) {
		hist, err := s.stateFileHistory(target)
		return hist, len(hist) > 0, err
	}
	if err != nil {
		return nil, false, fmt.Errorf("state: %w", err)
	}
	var f historyFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, false, fmt.Errorf("state: %s: %w", s.historyPath(target), err)
	}
	if err := checkHeader(f.Version, f.Target, target); err != nil {
		return nil, false, fmt.Errorf("state: %s: %w", s.historyPath(target), err)
	}
	return f.History, false, nil
}

// stateFileHistory is the history an older release kept in the state file.
func (s *Store) stateFileHistory(target string) ([]Event, error) {
	b, err := atomicfile.ReadFile(s.statePath(target), maxFileBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("state: %w", err)
	}
	var f struct {
		History []Event `json:"history"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("state: %s: %w", s.statePath(target), err)
	}
	return f.History, nil
}

// writeHistory writes target's history file, one event a line.
func (s *Store) writeHistory(target string, hist []Event) error {
	name, _ := json.Marshal(target)
	out := fmt.Appendf(nil, "{\"version\": %d, \"target\": %s, \"history\": [", FormatVersion, name)
	for i, e := range hist {
		b, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("state: encode %s's history: %w", target, err)
		}
		if i > 0 {
			out = append(out, ',')
		}
		out = append(append(out, "\n  "...), b...)
	}
	out = append(out, "\n]}\n"...)
	return s.writeAtomic(s.historyPath(target), out)
}

// removeHistory deletes target's history file and its temp files.
func (s *Store) removeHistory(target string) error {
	err := os.Remove(s.historyPath(target))
	atomicfile.CleanTemps(s.histDir, target+".json", time.Now())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("state: %w", err)
	}
	return atomicfile.SyncDir(s.histDir)
}
