package mcp

import "testing"

func TestHeaderValueSpecExamples(t *testing.T) {
	// The examples of the 2026-07-28 Streamable HTTP "Value Encoding" section.
	for _, tc := range []struct{ in, want string }{
		{"Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="},
		{" padded ", "=?base64?IHBhZGRlZCA=?="},
		{"line1\nline2", "=?base64?bGluZTEKbGluZTI=?="},
		{"get_weather", "get_weather"},
		{"admin.tools.list", "admin.tools.list"},
		{"with inner space", "with inner space"},
		// A plain value that looks like the sentinel must be encoded too.
		{"=?base64?abc?=", "=?base64?PT9iYXNlNjQ/YWJjPz0=?="},
		{"tab\tinside", "tab\tinside"},
		{"\x7f", "=?base64?fw==?="},
	} {
		got := EncodeHeaderValue(tc.in)
		if got != tc.want {
			t.Errorf("EncodeHeaderValue(%q) = %q, want %q", tc.in, got, tc.want)
		}
		back, err := DecodeHeaderValue(got)
		if err != nil || back != tc.in {
			t.Errorf("DecodeHeaderValue(%q) = %q, %v; want %q", got, back, err, tc.in)
		}
	}
}

func TestDecodeHeaderValueRejects(t *testing.T) {
	for _, in := range []string{
		"Hello, 世界",             // raw non-ASCII
		"a\x01b",                // control byte
		"=?base64?not base64?=", // broken payload
		"=?base64?SGVsbG8?=",    // unpadded
		" lead",
	} {
		if got, err := DecodeHeaderValue(in); err == nil {
			t.Errorf("DecodeHeaderValue(%q) = %q, want an error", in, got)
		}
	}
}

func FuzzHeaderValue(f *testing.F) {
	for _, s := range []string{"Hello, 世界", " padded ", "line1\nline2", "=?base64?x?=", "plain", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		enc := EncodeHeaderValue(s)
		for i := 0; i < len(enc); i++ {
			if c := enc[i]; c != ' ' && c != '\t' && (c < 0x21 || c > 0x7e) {
				t.Fatalf("encoded %q contains byte %#x", enc, c)
			}
		}
		dec, err := DecodeHeaderValue(enc)
		if err != nil || dec != s {
			t.Fatalf("round trip of %q: %q, %v", s, dec, err)
		}
		_, _ = DecodeHeaderValue(s) // must not panic on arbitrary input
	})
}
