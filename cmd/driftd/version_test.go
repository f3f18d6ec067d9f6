package main

import (
	"strings"
	"testing"

	promversion "github.com/prometheus/common/version"
)

func TestVersionFlag(t *testing.T) {
	code, stdout, stderr := driftd(t, "--version")
	if code != exitOK || stderr != "" || !strings.HasPrefix(stdout, "driftd, version "+version+" (") {
		t.Fatalf("--version: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{"revision: " + promversion.GetRevision() + ")", "\n  go version:       go", "\n  platform:         "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("--version lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "build user") || strings.Contains(stdout, "branch") {
		t.Errorf("--version prints fields that were not set:\n%s", stdout)
	}
	_, sub, _ := driftd(t, "version")
	if sub != stdout {
		t.Errorf("driftd version and --version differ:\n%s\n%s", sub, stdout)
	}
	if b := buildInfo(); b.Version != version || b.Revision != promversion.GetRevision() {
		t.Errorf("driftd_build_info %+v disagrees with --version", b)
	}
}
