package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/alecthomas/kingpin/v2"
)

// TestLogFormats: logfmt and json through promslog, text through tint;
// --log.level filters whichever it is.
func TestLogFormats(t *testing.T) {
	for _, tc := range []struct{ format, want string }{
		{"logfmt", `level=INFO source=logging_test.go:`},
		{"json", `"level":"INFO","source":"logging_test.go:`},
		{"text", "INF shown k=v"},
	} {
		t.Run(tc.format, func(t *testing.T) {
			app := kingpin.New("t", "")
			cmd := app.Command("x", "")
			f := addLogFlags(cmd, tc.format)
			if _, err := app.Parse([]string{"x", "--log.level=info"}); err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			log := f.logger(&b)
			log.Debug("hidden")
			log.Info("shown", "k", "v")
			if !strings.Contains(b.String(), tc.want) || strings.Contains(b.String(), "hidden") || strings.Contains(b.String(), "\x1b[") {
				t.Errorf("want %q, no debug line, no colour:\n%s", tc.want, b.String())
			}
		})
	}
}

// TestColourHonoursNoColor: a character device (/dev/null stands in for
// a terminal) gets colour unless NO_COLOR is set to anything; a pipe or
// buffer never does.
func TestColourHonoursNoColor(t *testing.T) {
	dev, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Skip(err)
	}
	defer dev.Close()
	t.Setenv("NO_COLOR", "")
	if !colour(dev) || colour(&bytes.Buffer{}) {
		t.Fatalf("colour(%s) = %v, colour(buffer) = %v", os.DevNull, colour(dev), colour(&bytes.Buffer{}))
	}
	for _, v := range []string{"1", "0", "false"} {
		t.Setenv("NO_COLOR", v)
		if colour(dev) {
			t.Errorf("NO_COLOR=%s: colour on", v)
		}
	}
}
