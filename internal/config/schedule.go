package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	"gopkg.in/yaml.v3"
)

// Schedule is a robfig/cron spec compiled: 5-field cron ("*/2 * * * *"),
// a descriptor ("@hourly") or "@every 90s". It prints back as written.
// The zero Schedule never fires; in a target it means "inherit".
type Schedule struct {
	spec  string
	sched cron.Schedule
}

// ParseSchedule compiles spec. It rejects what robfig/cron would silently
// change: "@every" under 1s or with a fraction of a second (cron rounds
// both), and a step larger than its field ("*/61" means "minute 0", not
// "every 61 minutes").
func ParseSchedule(spec string) (Schedule, error) {
	if rest, ok := strings.CutPrefix(spec, "@every "); ok {
		if d, err := time.ParseDuration(rest); err == nil {
			switch {
			case d < time.Second:
				return Schedule{}, fmt.Errorf("interval %v is under 1s", d)
			case d%time.Second != 0:
				return Schedule{}, fmt.Errorf("interval %v must be a whole number of seconds", d)
			}
		}
	}
	if err := checkSteps(spec); err != nil {
		return Schedule{}, err
	}
	s, err := cron.ParseStandard(spec)
	if err != nil {
		return Schedule{}, err
	}
	return Schedule{spec: spec, sched: s}, nil
}

func defaultSchedule() Schedule {
	s, err := ParseSchedule(DefaultSchedule)
	if err != nil {
		panic(err) // a constant: caught by any test
	}
	return s
}

var cronFields = [...]struct {
	name     string
	min, max int
}{{"minute", 0, 59}, {"hour", 0, 23}, {"day-of-month", 1, 31}, {"month", 1, 12}, {"day-of-week", 0, 6}}

// checkSteps rejects steps wider than their field; everything else is
// left to cron.ParseStandard.
func checkSteps(spec string) error {
	fields := strings.Fields(spec)
	if len(fields) > 0 && (strings.HasPrefix(fields[0], "TZ=") || strings.HasPrefix(fields[0], "CRON_TZ=")) {
		fields = fields[1:]
	}
	if len(fields) != len(cronFields) {
		return nil
	}
	for i, f := range fields {
		b := cronFields[i]
		for part := range strings.SplitSeq(f, ",") {
			_, step, ok := strings.Cut(part, "/")
			if n, err := strconv.Atoi(step); ok && err == nil && n > b.max-b.min {
				return fmt.Errorf("step /%d is wider than the %s field (%d-%d)", n, b.name, b.min, b.max)
			}
		}
	}
	return nil
}

// String returns the spec as written.
func (s Schedule) String() string { return s.spec }

// IsZero reports whether the schedule is unset.
func (s Schedule) IsZero() bool { return s.sched == nil }

// Next returns the first activation after t, or the zero time for the zero
// Schedule.
func (s Schedule) Next(t time.Time) time.Time {
	if s.sched == nil {
		return time.Time{}
	}
	return s.sched.Next(t)
}

// UnmarshalYAML compiles the spec while decoding, so a bad one is an error
// with its line.
func (s *Schedule) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return nodeError(n, "want a cron spec string")
	}
	if n.Value == "" {
		*s = Schedule{}
		return nil
	}
	p, err := ParseSchedule(n.Value)
	if err != nil {
		return nodeError(n, "%q: %v", n.Value, err)
	}
	*s = p
	return nil
}

// MarshalYAML prints the spec as written.
func (s Schedule) MarshalYAML() (any, error) { return s.spec, nil }

// MarshalText prints the spec as written, for JSON.
func (s Schedule) MarshalText() ([]byte, error) { return []byte(s.spec), nil }
