package faults_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
)

// report is the part of the report artifact the suite reads.
type report struct {
	Success        bool   `json:"success"`
	FailureReason  string `json:"failure_reason"`
	FailureMessage string `json:"failure_message"`
	Findings       []struct {
		Rule     string `json:"rule"`
		Severity string `json:"severity"`
	} `json:"findings"`
}

func (r *report) has(rule string) bool {
	for _, f := range r.Findings {
		if f.Rule == rule {
			return true
		}
	}
	return false
}

func (r *report) rules() string {
	seen := map[string]bool{}
	var out []string
	for _, f := range r.Findings {
		if !seen[f.Rule] {
			seen[f.Rule] = true
			out = append(out, f.Rule+"/"+f.Severity)
		}
	}
	return strings.Join(out, ",")
}

// slowMockTimeout is the deadline of the rows marked slowMock.
const slowMockTimeout = 10 * time.Second

// parallelChecks bounds the children run at once (the machine has 2 cores).
const parallelChecks = 3

// TestCheck runs `driftd check --timeout 2s --json` with the marker as its
// bearer token against every behaviour and asserts the exit code, the
// failure reason or finding, the wall time (deadline + 1 s, plus process
// start), the child's peak RSS, the report's size, and that the marker
// appears nowhere in stdout or stderr.
func TestCheck(t *testing.T) {
	needBinary(t)
	dir := t.TempDir()
	token := writeFile(t, dir, "token", []byte(marker+"\n"))
	manifest := writeFile(t, dir, "declared.json", []byte(`{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}`))
	runKnown := os.Getenv("DRIFTD_FAULTS_KNOWN") != ""
	sem := make(chan struct{}, parallelChecks)
	for _, b := range behaviours() {
		t.Run(b.name, func(t *testing.T) {
			if b.knownFailure != "" && !runKnown {
				t.Skip("known failure: " + b.knownFailure)
			}
			t.Parallel()
			sem <- struct{}{}
			defer func() { <-sem }()
			url := b.srv(t)
			timeout := probeTimeout
			if b.slowMock {
				timeout = slowMockTimeout
			}
			if b.timeout > 0 {
				timeout = b.timeout
			}
			res := runDriftd(t, "check", manifest, "--base-url", url, "--target", "faults",
				"--bearer-token-file", token, "--timeout", timeout.String(), "--json")
			var rep report
			jsonErr := json.Unmarshal([]byte(res.stdout.String()), &rep)
			t.Logf("exit %d, %v, peak RSS %d MiB, report %d B, stderr %d B, reason %q, rules %s",
				res.code, res.wall.Round(10e6), res.maxRSSKiB>>10, res.stdout.Total(), res.stderr.Total(), rep.FailureReason, rep.rules())
			if jsonErr != nil {
				t.Errorf("stdout is not a report: %v\n%.2000s\nstderr:\n%.2000s", jsonErr, res.stdout.String(), res.stderr.String())
			}
			if b.mayTimeOut && rep.FailureReason == "timeout" {
				b.code, b.reason, b.rule = exitNoProbe, "timeout", ""
			}
			if res.code != b.code {
				t.Errorf("exit %d, want %d (reason %q: %.300s)", res.code, b.code, rep.FailureReason, rep.FailureMessage)
			}
			if rep.FailureReason != b.reason {
				t.Errorf("failure_reason %q, want %q (%.300s)", rep.FailureReason, b.reason, rep.FailureMessage)
			}
			if b.rule != "" && !rep.has(b.rule) {
				t.Errorf("no %s finding; got %s", b.rule, rep.rules())
			}
			checkBounded(t, res, timeout)
		})
	}
}

// checkBounded asserts what holds for every behaviour.
func checkBounded(t *testing.T, res result, timeout time.Duration) {
	t.Helper()
	if res.wall > timeout+wallSlack {
		t.Errorf("took %v, more than the %v deadline plus one second (+%v slack for process start)", res.wall, timeout, wallSlack-time.Second)
	}
	if res.maxRSSKiB > maxRSSKiB {
		t.Errorf("peak RSS %d MiB, bound %d MiB", res.maxRSSKiB>>10, maxRSSKiB>>10)
	}
	if res.stdout.Total() > maxReportBytes {
		t.Errorf("report is %d bytes, bound %d", res.stdout.Total(), maxReportBytes)
	}
	if res.stderr.Total() > maxLogLine {
		t.Errorf("stderr is %d bytes, bound %d", res.stderr.Total(), maxLogLine)
	}
	for name, out := range map[string]string{"stdout": res.stdout.String(), "stderr": res.stderr.String()} {
		if strings.Contains(out, marker) {
			i := strings.Index(out, marker)
			t.Errorf("the marker secret is in %s: …%q…", name, out[max(0, i-80):min(len(out), i+len(marker)+20)])
		}
		if bad := unsafeText(out); bad != "" {
			t.Errorf("%s carries a raw %s", name, bad)
		}
	}
}

// unsafeText names the first terminal-control or bidi character in s that
// output must never carry raw (JSON escapes the C0 controls; U+202E and
// friends it does not).
func unsafeText(s string) string {
	for _, r := range s {
		switch {
		case r == 0x1b:
			return "ESC"
		case r == 0:
			return "NUL"
		case r == '\r':
			return "CR"
		case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			return "bidi control " + string(rune(r))
		}
	}
	return ""
}
