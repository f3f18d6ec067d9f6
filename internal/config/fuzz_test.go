package config

import (
	"errors"
	"testing"
)

// FuzzParse: no input panics; every error is an *Error naming the file;
// a config that parses prints a redacted form that parses again.
func FuzzParse(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Parse(b, "fuzz.yml")
		if err != nil {
			errs := []error{err}
			if j, ok := err.(interface{ Unwrap() []error }); ok {
				errs = j.Unwrap()
			}
			for _, e := range errs {
				var ce *Error
				if !errors.As(e, &ce) || ce.File != "fuzz.yml" {
					t.Fatalf("%T %v: want an *Error for fuzz.yml", e, e)
				}
			}
			return
		}
		out, err := c.Redacted()
		if err != nil {
			t.Fatalf("Redacted: %v", err)
		}
		if _, err := Parse(out, "fuzz.yml"); err != nil {
			t.Fatalf("redacted config does not parse: %v\n%s", err, out)
		}
	})
}
