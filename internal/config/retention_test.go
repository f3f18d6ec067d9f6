package config

import (
	"strings"
	"testing"
	"time"
)

func TestStateRetention(t *testing.T) {
	for _, tc := range []struct {
		yaml string
		want time.Duration
		err  string
	}{
		{"", 7 * 24 * time.Hour, ""},
		{"global: {state_retention: 2s}\n", 2 * time.Second, ""},
		{"global: {state_retention: 30d}\n", 30 * 24 * time.Hour, ""},
		{"global: {state_retention: 0s}\n", 0, ""},
		{"global: {state_retention: -1d}\n", 0, "state_retention"},
		{"global: {state_retention: soon}\n", 0, "state_retention"},
	} {
		cfg, err := Parse([]byte(tc.yaml), "driftd.yml")
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "driftd.yml:1") {
				t.Errorf("%q: err %v, want one at driftd.yml:1 naming %s", tc.yaml, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.yaml, err)
			continue
		}
		if got := cfg.Global.StateRetention.Duration(); got != tc.want {
			t.Errorf("%q: retention %v, want %v", tc.yaml, got, tc.want)
		}
	}
}
