package config

import (
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/driftd/driftd/internal/scheduler"
)

func TestSchedulePeriodAndNext(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 30, 500, time.UTC)
	for _, tc := range []struct {
		spec   string
		period time.Duration
		next   time.Time
	}{
		{"@every 90s", 90 * time.Second, now.Add(90*time.Second - 500)},
		{"*/2 * * * *", 2 * time.Minute, time.Date(2026, 12, 2, 12, 2, 0, 0, time.UTC)},
		{"@hourly", time.Hour, time.Date(2026, 12, 2, 13, 0, 0, 0, time.UTC)},
	} {
		s, err := ParseSchedule(tc.spec)
		if err != nil {
			t.Fatalf("%s: %v", tc.spec, err)
		}
		if got := scheduler.Period(s, now); got != tc.period {
			t.Errorf("%s: Period = %v, want %v", tc.spec, got, tc.period)
		}
		if got := s.Next(now); !got.Equal(tc.next) {
			t.Errorf("%s: Next = %v, want %v", tc.spec, got, tc.next)
		}
		if s.String() != tc.spec {
			t.Errorf("String = %q, want %q", s, tc.spec)
		}
	}
	var zero Schedule
	if !zero.IsZero() || !zero.Next(now).IsZero() || scheduler.Period(zero, now) != 0 {
		t.Error("the zero Schedule must never fire")
	}
}

func TestParseScheduleRejects(t *testing.T) {
	for spec, want := range map[string]string{
		"@every 500ms": "under 1s",
		"@every 0s":    "under 1s",
		"@every -1m":   "under 1s",
		"@every 2.5s":  "whole number of seconds",
		"*/61 * * * *": "wider than the minute field",
		"0 */24 * * *": "wider than the hour field",
		"* * * * * *":  "expected exactly 5 fields",
		"@fortnightly": "unrecognized descriptor",
	} {
		if _, err := ParseSchedule(spec); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseSchedule(%q) = %v, want %q", spec, err, want)
		}
	}
}

func TestValuesPrintBackAsWritten(t *testing.T) {
	var v struct {
		S Schedule `yaml:"s"`
		B ByteSize `yaml:"b"`
		R Regexp   `yaml:"r"`
	}
	in := "s: '@every 90s'\nb: 1.5MiB\nr: ^a\\.b$\n"
	if err := yaml.Unmarshal([]byte(in), &v); err != nil {
		t.Fatal(err)
	}
	if v.B.Bytes() != 3<<19 || !v.R.MatchString("a.b") || v.R.MatchString("xa.b") {
		t.Errorf("decoded %+v", v)
	}
	out, err := yaml.Marshal(v)
	if err != nil || string(out) != in {
		t.Errorf("Marshal = %q, %v; want %q", out, err, in)
	}
	if b, err := ParseByteSize("2048"); err != nil || b.Bytes() != 2048 {
		t.Errorf("bare bytes: %v, %v", b, err)
	}
	if got := (ByteSize{n: 16 << 20}).String(); got != "16MiB" {
		t.Errorf("canonical String = %q", got)
	}
}
