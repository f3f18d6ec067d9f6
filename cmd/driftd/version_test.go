package main

import (
	"runtime"
	"strings"
	"testing"

	promversion "github.com/prometheus/common/version"
)

func TestVersionFlag(t *testing.T) {
	code, stdout, stderr := driftd(t, "--version")
	if code != exitOK || stderr != "" || !strings.HasPrefix(stdout, "driftd, version "+promversion.Version+" (") || promversion.Version == "" {
		t.Fatalf("--version: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{"revision: " + promversion.GetRevision() + ")", "\n  go version:       go", "\n  platform:         " + runtime.GOOS + "/" + runtime.GOARCH} {
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
}

// What the Makefile stamps reaches --version and driftd_build_info alike.
func TestVersionStamped(t *testing.T) {
	saved := [...]string{promversion.Version, promversion.Revision, promversion.Branch, promversion.BuildUser, promversion.BuildDate}
	t.Cleanup(func() {
		promversion.Version, promversion.Revision, promversion.Branch, promversion.BuildUser, promversion.BuildDate = saved[0], saved[1], saved[2], saved[3], saved[4]
	})
	promversion.Version, promversion.Revision, promversion.Branch = "0.2.0", "0123abc", "main"
	promversion.BuildUser, promversion.BuildDate = "release", "20261207-15:04:05"

	text := versionText()
	want := "driftd, version 0.2.0 (branch: main, revision: 0123abc)\n" +
		"  build user:       release\n" +
		"  build date:       20261207-15:04:05\n" +
		"  go version:       " + runtime.Version() + "\n" +
		"  platform:         " + runtime.GOOS + "/" + runtime.GOARCH + "\n" +
		"  tags:             " + promversion.GetTags()
	if text != want {
		t.Errorf("version text:\n%s\nwant:\n%s", text, want)
	}
	b := buildInfo()
	if b.Version != "0.2.0" || b.Revision != "0123abc" || b.Branch != "main" || b.GoOS != runtime.GOOS || b.GoArch != runtime.GOARCH ||
		b.GoVersion != runtime.Version() || b.Tags != promversion.GetTags() {
		t.Errorf("driftd_build_info %+v disagrees with --version", b)
	}
}

// A binary built without the Makefile still says what it is.
func TestUnstampedVersion(t *testing.T) {
	if v := unstampedVersion(); v == "" || strings.HasPrefix(v, "v") {
		t.Errorf("unstamped version %q: want a module version without its v, or devel", v)
	}
}
