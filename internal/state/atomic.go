package state

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

// staleTemp is the age after which Open treats a temp file as abandoned.
// A Save takes milliseconds; a minute leaves room for a slow disk.
const staleTemp = time.Minute

const tempInfix = ".tmp-"

// writeAtomic replaces dir/name with data so that a crash at any point
// leaves either the old or the new file: the data goes to a temp file in
// the same directory (rename is atomic only within one file system), is
// fsynced before the rename so the rename cannot expose unwritten blocks,
// and the directory is fsynced after it so the rename itself survives.
func (s *Store) writeAtomic(dir, name string, data []byte) (err error) {
	f, err := os.CreateTemp(dir, "."+name+tempInfix+"*")
	if err != nil {
		return fmt.Errorf("state: write %s: %w", name, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(tmp) // a failed write must not fill the disk further
			err = fmt.Errorf("state: write %s: %w", name, err)
		}
	}()
	write := s.write
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
	if err = os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		return err
	}
	return syncDir(dir)
}

// syncDir makes a rename in dir durable. File systems that cannot fsync a
// directory say so with EINVAL or ENOTSUP; there the rename is as durable
// as it gets, so that is not an error.
func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil // directories cannot be opened for sync there
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("state: sync %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, errors.ErrUnsupported) {
		return fmt.Errorf("state: sync %s: %w", dir, err)
	}
	return nil
}

// cleanTemps removes the temp files in dir of the file name (of any file
// when name is empty) last modified before cutoff. Errors are ignored:
// a leftover temp file is never read, only wasted space.
func cleanTemps(dir, name string, cutoff time.Time) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !isTemp(e.Name(), name) {
			continue
		}
		if info, err := e.Info(); err == nil && info.ModTime().Before(cutoff) {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// isTemp reports whether file is a temp file of name ("" for any): a dot,
// the name, ".tmp-" and CreateTemp's random digits. Target names cannot
// start with a dot, so no state file matches.
func isTemp(file, name string) bool {
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
