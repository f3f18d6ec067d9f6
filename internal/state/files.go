package state

import (
	"fmt"
	"os"
	"strings"
	"time"
)

// File is a target's state file in the store's directory.
type File struct {
	Target  string
	ModTime time.Time
}

// Files lists the targets that have a state file, with the time it was
// last written: what the daemon's retention of vanished targets looks at.
// Temp files, files moved aside as corrupt and directories are not
// targets'.
func (s *Store) Files() ([]File, error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("state: %w", err)
	}
	var out []File
	for _, e := range entries {
		target, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !e.Type().IsRegular() || checkName(target) != nil {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // gone since the listing
		}
		out = append(out, File{Target: target, ModTime: info.ModTime()})
	}
	return out, nil
}
