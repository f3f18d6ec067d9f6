package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/driftd/driftd/internal/atomicfile"
	"github.com/driftd/driftd/internal/mcp"
)

// Store keeps one state file per target in a directory, and the served
// snapshots in its snapshots/ subdirectory. The snapshot is not
// <target>.snapshot.json beside the state file: target names may contain
// dots, so a target named "orders.snapshot" would own that file.
//
// A Store is safe for concurrent use on different targets; one target's
// Apply and Save must not run concurrently (the scheduler never overlaps
// runs of a target).
type Store struct {
	dir, snapDir, histDir string
	// write writes b to f; tests replace it to simulate a full disk.
	write func(f *os.File, b []byte) (int, error)
}

// maxFileBytes bounds a state or snapshot file read back: far above what
// a run can store (a snapshot holds at most a run's max_run_bytes), so it
// only stops a file that is not driftd's from filling memory.
const maxFileBytes = 1 << 30

// CorruptError reports a state or snapshot file that could not be read or
// decoded. The file was moved to MovedTo (empty when even that failed) and
// the target starts fresh: the caller logs and counts it, and keeps going.
type CorruptError struct {
	Path    string
	MovedTo string
	Err     error
}

func (e *CorruptError) Error() string {
	if e.MovedTo == "" {
		return fmt.Sprintf("state: %s is corrupt (%v) and could not be moved aside; starting fresh", e.Path, e.Err)
	}
	return fmt.Sprintf("state: %s is corrupt (%v); moved to %s, starting fresh", e.Path, e.Err, e.MovedTo)
}

// Unwrap returns the read or decode error.
func (e *CorruptError) Unwrap() error { return e.Err }

// NewerError reports a state file written by a newer driftd (a rollback):
// the file is left where it is, and the State Load returns is never saved
// over it (ErrReadOnly), so the newer release finds it intact.
type NewerError struct {
	Path    string
	Version int
}

func (e *NewerError) Error() string {
	return fmt.Sprintf("state: %s has format version %d, newer than this driftd's %d; left untouched and not overwritten", e.Path, e.Version, FormatVersion)
}

// ErrReadOnly is Save's error for a State loaded from a newer file.
var ErrReadOnly = errors.New("state: the state file was written by a newer driftd; not overwritten")

// Open returns the store in dir, creating it (and snapshots/ and
// history/) with mode
// 0750. It removes temp files that an interrupted Save left behind more
// than a minute ago: younger ones may belong to a live process sharing the
// directory.
func Open(dir string) (*Store, error) {
	s := &Store{dir: dir, snapDir: filepath.Join(dir, "snapshots"), histDir: filepath.Join(dir, "history")}
	for _, d := range []string{s.dir, s.snapDir, s.histDir} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			return nil, fmt.Errorf("state: %w", err)
		}
		atomicfile.CleanTemps(d, "", time.Now().Add(-atomicfile.StaleTemp))
	}
	return s, nil
}

// Load returns target's state. A missing file is a fresh State and no
// error. An unreadable or corrupt one is moved aside to
// <target>.json.corrupt-<unix-nanos>: Load then returns a fresh State and
// a *CorruptError. A file of a newer format is left in place: Load returns
// a fresh State that Save refuses to write, and a *NewerError.
func (s *Store) Load(target string) (*State, error) {
	if err := checkName(target); err != nil {
		return nil, err
	}
	path := s.statePath(target)
	b, err := atomicfile.ReadFile(path, maxFileBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return NewState(target), nil
	}
	if err == nil {
		var st State
		if err = json.Unmarshal(b, &st); err == nil && st.Version > FormatVersion {
			fresh := NewState(target)
			fresh.readOnly = true
			return fresh, &NewerError{Path: path, Version: st.Version}
		}
		if err == nil {
			err = checkHeader(st.Version, st.Target, target)
		}
		if err == nil {
			if st.Findings == nil {
				st.Findings = map[string]ActiveFinding{}
			}
			st.History = nil // on disk, read by History when asked
			return st.index(), nil
		}
	}
	return NewState(target), moveAside(path, err)
}

// Save writes st atomically: the snapshot first when the served set
// changed, then the state file. On failure (full disk, permissions) the
// previous files are intact, st stays Dirty, and the next Apply reports
// Changed so the write is retried; the caller counts the error.
func (s *Store) Save(st *State) error {
	if err := checkName(st.Target); err != nil {
		return err
	}
	if st.readOnly {
		return ErrReadOnly
	}
	if st.snapPending {
		if err := s.writeAtomic(filepath.Join(s.snapDir, st.Target+".json"), encodeSnapshot(st.Target, st.snap)); err != nil {
			return err
		}
		// The file now holds it; a later Apply reads it back from disk.
		st.snap, st.snapPending = nil, false
	}
	c := *st
	c.Version = FormatVersion
	hist, moved, err := s.fileHistory(st.Target)
	var syntax *json.SyntaxError
	if errors.As(err, &syntax) || errors.As(err, new(*json.UnmarshalTypeError)) {
		// Edited since it was read: kept aside for the operator, as Load
		// keeps a corrupt file, and written anew from this State.
		_ = moveAside(s.historyPath(st.Target), err)
		hist = nil
	} else if err != nil {
		return err
	}
	if len(st.pending) > 0 || moved {
		// The history first: a crash between the two writes leaves a
		// history that has this run's events and a state that does not,
		// which the next run's Save writes again; never a state whose
		// events are lost.
		if err := s.writeHistory(st.Target, appendHistory(hist, st.historyLimit, st.pending)); err != nil {
			return err
		}
	}
	c.History = nil
	// Empty collections are written as such, not as null, for readers
	// other than this package (jq, an operator).
	if c.Findings == nil {
		c.Findings = map[string]ActiveFinding{}
	}
	b, err := encodeFile(&c)
	if err != nil {
		return fmt.Errorf("state: encode %s: %w", st.Target, err)
	}
	if err := s.writeAtomic(filepath.Join(s.dir, st.Target+".json"), b); err != nil {
		return err
	}
	st.dirty, st.pending = false, nil
	return nil
}

// History returns st's history, newest last: what its history file holds
// and the events st has not yet written (after a failed Save), bounded as
// Apply bounds it. An unreadable file is an error; a missing one is an
// empty history.
func (s *Store) History(st *State) ([]Event, error) {
	var hist []Event
	if checkName(st.Target) == nil {
		var err error
		if hist, _, err = s.fileHistory(st.Target); err != nil {
			return nil, err
		}
	}
	return appendHistory(hist, st.historyLimit, st.pending), nil
}

// Remove deletes target's state and snapshot (a target removed from the
// config), and its temp files. Files moved aside as corrupt are kept for
// the operator. Missing files are not an error.
func (s *Store) Remove(target string) error {
	if err := checkName(target); err != nil {
		return err
	}
	var errs []error
	for _, d := range []string{s.dir, s.snapDir} {
		err := os.Remove(filepath.Join(d, target+".json"))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("state: %w", err))
		}
		atomicfile.CleanTemps(d, target+".json", time.Now())
		errs = append(errs, atomicfile.SyncDir(d))
	}
	errs = append(errs, s.removeHistory(target))
	// A login session (config: <state_dir>/sessions/<target>.json) is a
	// credential: it goes with the rest.
	sessions := filepath.Join(s.dir, "sessions")
	if err := os.Remove(filepath.Join(sessions, target+".json")); err == nil {
		atomicfile.CleanTemps(sessions, target+".json", time.Now())
		errs = append(errs, atomicfile.SyncDir(sessions))
	} else if !errors.Is(err, fs.ErrNotExist) {
		errs = append(errs, fmt.Errorf("state: %w", err))
	}
	return errors.Join(errs...)
}

// LoadSnapshot returns the served set last saved for target, sorted by
// name. A missing file is an error wrapping fs.ErrNotExist; a corrupt one
// is moved aside and reported as *CorruptError.
func (s *Store) LoadSnapshot(target string) ([]Tool, error) {
	if err := checkName(target); err != nil {
		return nil, err
	}
	path := filepath.Join(s.snapDir, target+".json")
	b, err := atomicfile.ReadFile(path, maxFileBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("state: no snapshot for %s: %w", target, err)
	}
	if err == nil {
		var snap struct {
			Version int                        `json:"version"`
			Target  string                     `json:"target"`
			Tools   map[string]json.RawMessage `json:"tools"`
		}
		if err = json.Unmarshal(b, &snap); err == nil {
			err = checkHeader(snap.Version, snap.Target, target)
		}
		if err == nil {
			out := make([]Tool, 0, len(snap.Tools))
			for _, name := range sortedKeys(snap.Tools) {
				out = append(out, snapshotTool(name, snap.Tools[name]))
			}
			return out, nil
		}
	}
	return nil, moveAside(path, err)
}

// snapshotTool is a snapshot's definition of name, parsed as a listing's
// is (the schema view reads its schemas); a definition that does not
// parse (a run recorded it as null) keeps only its name and bytes.
func snapshotTool(name string, raw json.RawMessage) Tool {
	t, err := mcp.ParseTool(raw)
	if err != nil {
		return Tool{Name: name, Raw: raw}
	}
	t.Name = name
	return t
}

func (s *Store) writeAtomic(path string, data []byte) error {
	if err := atomicfile.WriteFunc(path, data, s.write); err != nil {
		return fmt.Errorf("state: %w", err)
	}
	return nil
}

func (s *Store) statePath(target string) string { return filepath.Join(s.dir, target+".json") }

// encodeSnapshot writes each definition verbatim: encoding/json would
// compact a RawMessage, and the bytes must hash as they did when served.
// Bytes that are not JSON are stored as null, which then fails the hash
// check instead of corrupting the file.
func encodeSnapshot(target string, tools []Tool) []byte {
	var buf bytes.Buffer
	name, _ := json.Marshal(target)
	fmt.Fprintf(&buf, "{\n  \"version\": %d,\n  \"target\": %s,\n  \"tools\": {", FormatVersion, name)
	for i, t := range tools {
		if i > 0 {
			buf.WriteByte(',')
		}
		name, _ := json.Marshal(t.Name)
		buf.WriteString("\n    ")
		buf.Write(name)
		buf.WriteString(": ")
		if json.Valid(t.Raw) {
			buf.Write(bytes.TrimSpace(t.Raw))
		} else {
			buf.WriteString("null")
		}
	}
	buf.WriteString("\n  }\n}\n")
	return buf.Bytes()
}

// checkHeader rejects a file of another format version or another target:
// neither was written for this target by this code.
func checkHeader(version int, got, want string) error {
	if version != FormatVersion {
		return fmt.Errorf("format version %d, want %d", version, FormatVersion)
	}
	if got != want {
		return fmt.Errorf("file is for target %q", got)
	}
	return nil
}

// moveAside renames a corrupt file out of the way so that the next Save
// does not destroy what an operator may want to inspect.
func moveAside(path string, cause error) error {
	to := path + ".corrupt-" + strconv.FormatInt(time.Now().UnixNano(), 10)
	if err := os.Rename(path, to); err != nil {
		return &CorruptError{Path: path, Err: errors.Join(cause, err)}
	}
	_ = atomicfile.SyncDir(filepath.Dir(path)) // best effort: the move is not data
	return &CorruptError{Path: path, MovedTo: to, Err: cause}
}

// checkName refuses a target name that is not a plain file name: it would
// write outside the directory or collide with temp files (which start
// with a dot).
func checkName(target string) error {
	if target == "" || strings.ContainsAny(target, "/\\\x00") || strings.HasPrefix(target, ".") {
		return fmt.Errorf("state: invalid target name %q", target)
	}
	return nil
}
