package discovery

import (
	"context"
	"errors"
	"maps"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/driftd/driftd/internal/atomicfile"
	"github.com/driftd/driftd/internal/config"
)

// maxTargetFileBytes bounds one target file.
const maxTargetFileBytes = 16 << 20

// Files is a target_files: glob. Each file matching it is a list of
// targets; a file that does not parse keeps the targets it had.
type Files struct {
	glob string
	// root is the directory every manifest a file names must be under.
	root string
	// Rescan is how often the glob is read without a change seen, for
	// file systems that do not notify.
	rescan time.Duration

	mu    sync.Mutex
	files map[string][]Target // path → its last good targets
}

// NewFiles returns the source for glob (absolute, only the file name may
// hold wildcards) whose files name manifests under root (the main
// config's directory; each file's own directory when empty).
func NewFiles(glob, root string) *Files {
	return &Files{glob: glob, root: root, rescan: config.DefaultSDRescanInterval, files: map[string][]Target{}}
}

// Key implements Source.
func (f *Files) Key() string { return "file:" + f.glob }

// Refresh reads every file the glob matches. Files that went away take
// their targets with them; one that does not parse keeps its last good
// targets and is part of the error, with its file:line. The files are
// read without the lock held, so Targets never waits on a disk.
func (f *Files) Refresh(ctx context.Context) error {
	paths, err := filepath.Glob(f.glob)
	if err != nil {
		return err
	}
	read := make(map[string][]Target, len(paths))
	var errs []error
	var failed []string
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return err
		}
		ts, err := readTargetFile(p, f.root)
		if err != nil {
			errs, failed = append(errs, err), append(failed, p)
			continue
		}
		read[p] = ts
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range failed {
		if old, ok := f.files[p]; ok {
			read[p] = old
		}
	}
	f.files = read
	return errors.Join(errs...)
}

func readTargetFile(path, root string) ([]Target, error) {
	b, err := atomicfile.ReadFile(path, maxTargetFileBytes)
	if err != nil {
		return nil, err
	}
	ts, err := config.ParseTargetFile(b, path, root)
	if err != nil {
		return nil, err
	}
	out := make([]Target, len(ts))
	for i, t := range ts {
		out[i] = Target{Origin: "file:" + path, Target: t}
	}
	return out, nil
}

// Targets implements Source: every file's targets, files in name order.
func (f *Files) Targets() []Target {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Target
	for _, p := range slices.Sorted(maps.Keys(f.files)) {
		out = append(out, f.files[p]...)
	}
	return out
}

// fileSettle gathers the events of one edit (an editor's create, write
// and rename; a ConfigMap's symlink swap) into one refresh, so a bad edit
// is one failure, not three. fileMaxWait bounds how long events that
// keep coming can put the refresh off: a file rewritten every 50 ms is
// still read every second.
const (
	fileSettle  = 100 * time.Millisecond
	fileMaxWait = time.Second
)

// Watch implements Source: a change in the glob's directory (editors
// replace files; a ConfigMap volume swaps a ..data symlink), once it has
// settled, and a rescan now and then.
func (f *Files) Watch(ctx context.Context, changed func()) {
	tick := time.NewTicker(f.rescan)
	defer tick.Stop()
	settle := time.NewTimer(fileSettle)
	settle.Stop()
	defer settle.Stop()
	var events <-chan fsnotify.Event
	var errs <-chan error
	if w, err := fsnotify.NewWatcher(); err == nil {
		defer w.Close()
		if w.Add(filepath.Dir(f.glob)) == nil {
			events, errs = w.Events, w.Errors
		}
	}
	var first time.Time // of the events not yet refreshed
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-events:
			if !ok {
				events = nil
			}
			now := time.Now()
			if first.IsZero() {
				first = now
			}
			settle.Reset(min(fileSettle, max(0, first.Add(fileMaxWait).Sub(now))))
		case <-settle.C:
			first = time.Time{}
			changed()
		case _, ok := <-errs:
			if !ok {
				errs = nil
			}
		case <-tick.C:
			changed()
		}
	}
}
