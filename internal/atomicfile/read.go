package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// ErrTooLarge is ReadFile's error for a file over its limit.
var ErrTooLarge = errors.New("file too large")

// OpenRegular opens path for reading if it is a regular file (a symlink
// to one, as a ConfigMap or Secret volume has, is followed). A FIFO,
// device or socket is refused before any read: opened with O_NONBLOCK, a
// FIFO without a writer returns at once instead of blocking the caller,
// and fstat then names what it is.
func OpenRegular(path string) (*os.File, error) {
	fh, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := fh.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s: not a regular file (%s)", path, fi.Mode().Type())
	}
	if err != nil {
		fh.Close()
		return nil, err
	}
	return fh, nil
}

// ReadFile reads path, at most limit bytes, if it is a regular file
// (OpenRegular). A file over limit is ErrTooLarge.
func ReadFile(path string, limit int64) ([]byte, error) {
	fh, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	b, err := io.ReadAll(io.LimitReader(fh, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: %w: over %d bytes", path, ErrTooLarge, limit)
	}
	return b, nil
}
