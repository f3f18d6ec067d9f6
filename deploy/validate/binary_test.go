package validate

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// The driftd binary the tests run, built once per test process from the
// repository the way `make build` does (static, stamped).
var (
	binOnce sync.Once
	binDir  string
	binPath string
	binErr  error
)

const testVersion = "0.0.0-validate"

// promVersion is the package whose variables the Makefile, the Dockerfile
// and promu stamp with -X.
const promVersion = "github.com/prometheus/common/version"

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// driftdBinary builds ./cmd/driftd with CGO_ENABLED=0 and -trimpath,
// version testVersion; skipped with -short or without a go command.
func driftdBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds driftd; skipped with -short")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	binOnce.Do(func() {
		root, err := filepath.Abs(repoRoot)
		if err != nil {
			binErr = err
			return
		}
		if binDir, binErr = os.MkdirTemp("", "driftd-validate-"); binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "driftd")
		b := exec.Command(goBin, "build", "-trimpath", "-ldflags", "-s -w -X "+promVersion+".Version="+testVersion+" -X "+promVersion+".Revision=validate", "-o", binPath, "./cmd/driftd")
		b.Dir = root
		b.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := b.CombinedOutput(); err != nil {
			binErr = &buildError{err, out}
		}
	})
	if binErr != nil {
		t.Fatalf("go build ./cmd/driftd: %v", binErr)
	}
	return binPath
}

type buildError struct {
	err error
	out []byte
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + string(e.out) }
