package daemon_test

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/driftd/driftd/internal/benchgen"
)

// TestDiscoveryScale measures a reconcile of 1,000 discovered targets (make
// bench): a target file of 1,000 is rewritten with 500 of them kept, 500
// removed and 500 added. It prints the reconcile's own time (the daemon
// logs it) and the time from the write to the new set being served, which
// adds the file watch, the 250 ms debounce and the file's parse. It
// asserts no timing.
func TestDiscoveryScale(t *testing.T) {
	if os.Getenv("DRIFTD_BENCH") == "" {
		t.Skip("a measurement: DRIFTD_BENCH=1 (make bench)")
	}
	const n = 1000
	e := newSDEnv(t)
	file := func(from int) string {
		var b strings.Builder
		for i := from; i < from+n; i++ {
			fmt.Fprintf(&b, "- {name: f%05d, url: \"http://127.0.0.1:1/mcp\", baseline: first_seen}\n", i)
		}
		return b.String()
	}
	e.targetFile("fleet.yml", file(0))
	e.config("global: {schedule: \"@every 1h\", timeout: 1s, state_dir: state}\ntarget_files: [\"targets/*.yml\"]\n")
	_, e.base = e.start(false)
	waitMetric(t, e.base, "driftd_targets", n)
	re := regexp.MustCompile(`msg="discovered targets reconciled" targets=1000 rejected=0 took=(\S+)`)
	before := len(re.FindAllStringSubmatch(e.log.String(), -1))
	start := time.Now()
	e.targetFile("fleet.yml", file(n/2))
	eventually(t, 60*time.Second, "the new set", func() bool {
		_, body := get(t, e.base+"/metrics")
		return strings.Contains(body, fmt.Sprintf(`target="f%05d"`, n+n/2-1)) && !strings.Contains(body, `target="f00000"`)
	})
	served := time.Since(start)
	var m [][]string
	eventually(t, 10*time.Second, "the reconcile's log line", func() bool {
		m = re.FindAllStringSubmatch(e.log.String(), -1)
		return len(m) > before
	})
	took, err := time.ParseDuration(m[len(m)-1][1])
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	benchgen.Budget(&out, "discovery reconcile, 1,000 targets", "< 1 s", took.Round(time.Millisecond).String(), took < time.Second)
	fmt.Print(out.String())
	fmt.Printf("  file write to the new set on /metrics: %v (watch, 250 ms debounce, parse, reconcile)\n", served.Round(time.Millisecond))
}
