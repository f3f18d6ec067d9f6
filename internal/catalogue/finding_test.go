package catalogue

import "testing"

// TestFingerprintGolden pins fingerprints computed before the identity
// fields were defined in one place. State, ignores and alert dedup key on
// these values: a change re-opens every finding in production. Changing an
// expected string here is a documented, visible decision, never a
// side effect of a refactoring.
func TestFingerprintGolden(t *testing.T) {
	cases := []struct {
		target string
		f      Finding
		want   string
	}{
		{"prod-api", Finding{Rule: DriftToolMissing, Tool: "search"}, "ca9c517adcbbe3f2"},
		{"prod-api", Finding{Rule: DriftToolUndeclared, Tool: "search"}, "db8cac1c3ea0dd62"},
		{"staging", Finding{Rule: DriftToolMissing, Tool: "search"}, "2ef9662ceea0d4b7"},
		{"prod-api", Finding{Rule: DriftSchema, Tool: "search", Direction: "input", Pointer: "/required", Change: "CHG-REQUIRED-ADDED"}, "fabd01311579b292"},
		{"prod-api", Finding{Rule: DriftSchemaCompatible, Tool: "search", Direction: "output", Pointer: "/properties/hits", Change: "CHG-PROPERTY-ADDED"}, "9ad639e4248b8110"},
		{"prod-api", Finding{Rule: DriftAnnotation, Tool: "delete_user", Pointer: "/annotations/destructiveHint"}, "6c581769d9e4e226"},
		{"prod-api", Finding{Rule: ConfSchemaInvalid, Tool: "d", Direction: "output"}, "07ad061d02836f01"},
		{"prod-api", Finding{Rule: AuthAnonymousList}, "e65664467cc32db2"},
		{"", Finding{Rule: ConfCacheHints}, "09222df6510f9747"},
		// Fields outside the identity do not move the fingerprint.
		{"prod-api", Finding{Rule: AuthAnonymousList, Severity: Error, Message: "m", Classification: "production", TraceID: "t", SpanID: "s", Grade: "g"}, "e65664467cc32db2"},
	}
	for _, c := range cases {
		if got := Fingerprint(c.target, c.f); got != c.want {
			t.Errorf("Fingerprint(%q, %s/%s/%s/%s/%s) = %q, want %q", c.target, c.f.Rule, c.f.Tool, c.f.Direction, c.f.Pointer, c.f.Change, got, c.want)
		}
	}
}
