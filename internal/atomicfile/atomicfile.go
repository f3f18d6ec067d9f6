// Package atomicfile writes files so that a crash at any point leaves
// either the old or the new file, never a torn one: driftd's one atomic
// writer, for state files, snapshots and captured manifests.
package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// StaleTemp is the age after which a temp file is abandoned: a write
// takes milliseconds; a minute leaves room for a slow disk.
const StaleTemp = time.Minute

const tempInfix = ".tmp-"

// Write replaces path with data so that a crash at any point leaves
// either the old or the new file: the data goes to a temp file in the
// same directory (rename is atomic only within one file system), is
// fsynced before the rename so the rename cannot expose unwritten blocks,
// and the directory is fsynced after it so the rename itself survives.
// The file has mode 0600: state, snapshots and manifests may hold what a
// server said.
func Write(path string, data []byte) error { return WriteFunc(path, data, nil) }

// WriteReport is Write for a file a user asked for (a report or a
// captured manifest given with -o): it keeps the mode of the file it
// replaces, and a new file is 0644 like any file a command writes for its
// user, so a CI job's later steps and other users can read it.
func WriteReport(path string, data []byte) error {
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		mode = fi.Mode().Perm()
	}
	return WriteFunc(path, data, func(f *os.File, b []byte) (int, error) {
		if err := f.Chmod(mode); err != nil {
			return 0, err
		}
		return f.Write(b)
	})
}

// WriteFunc is Write with the data written by write (nil: (*os.File).Write),
// for tests that simulate a full disk.
func WriteFunc(path string, data []byte, write func(f *os.File, b []byte) (int, error)) (err error) {
	dir, name := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+name+tempInfix+"*")
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(tmp) // a failed write must not fill the disk further
			err = fmt.Errorf("write %s: %w", name, err)
		}
	}()
	if write == nil {
		write = (*os.File).Write
	}
	if _, err = write(f, data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	return SyncDir(dir)
}

// SyncDir makes a rename in dir durable. File systems that cannot fsync a
// directory say so with EINVAL or ENOTSUP; there the rename is as durable
// as it gets, so that is not an error.
func SyncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil // directories cannot be opened for sync there
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, errors.ErrUnsupported) {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// CleanTemps removes the temp files in dir of the file name (of any file
// when name is empty) last modified before cutoff. Errors are ignored:
// a leftover temp file is never read, only wasted space.
func CleanTemps(dir, name string, cutoff time.Time) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !IsTemp(e.Name(), name) {
			continue
		}
		if info, err := e.Info(); err == nil && info.ModTime().Before(cutoff) {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// IsTemp reports whether file is a temp file of name ("" for any): a dot,
// the name, ".tmp-" and CreateTemp's random digits. Names that cannot
// start with a dot (target names) never match.
func IsTemp(file, name string) bool {
	if !strings.HasPrefix(file, ".") {
		return false
	}
	i := strings.LastIndex(file, tempInfix)
	if i < 0 || (name != "" && file[1:i] != name) {
		return false
	}
	digits := file[i+len(tempInfix):]
	return digits != "" && strings.Trim(digits, "0123456789") == ""
}
