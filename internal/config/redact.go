package config

import (
	"net/url"
	"strings"

	"github.com/driftd/driftd/internal/sanitize"
)

// redactedValue stands in for every value RedactedURL hides: the marker
// of every other redaction.
const redactedValue = sanitize.Redacted

// RedactedURL is a target URL as every artifact shows it (report, logs,
// status pages, API, /config): each query and fragment value is replaced
// by <redacted>, keeping the key names, and any userinfo is replaced whole
// (a username can be a token too). A part without "=" is taken for a value.
// An unparseable URL keeps only what comes before its userinfo, query and
// fragment.
func RedactedURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return redactUnparsed(raw)
	}
	var b strings.Builder
	if u.Scheme != "" {
		b.WriteString(u.Scheme + ":")
	}
	if u.Opaque != "" {
		b.WriteString(redactedValue)
	} else {
		if u.Host != "" || u.User != nil {
			b.WriteString("//")
		}
		if u.User != nil {
			b.WriteString(redactedValue + "@")
		}
		b.WriteString(u.Host)
		b.WriteString(u.EscapedPath())
	}
	if u.ForceQuery || u.RawQuery != "" {
		b.WriteString("?" + redactPairs(u.RawQuery))
	}
	if u.Fragment != "" {
		b.WriteString("#" + redactPairs(u.EscapedFragment()))
	}
	return b.String()
}

// redactPairs keeps the keys of a key=value list separated by & or ;.
func redactPairs(s string) string {
	if s == "" {
		return s
	}
	parts := strings.FieldsFunc(s, func(r rune) bool { return r == '&' || r == ';' })
	for i, p := range parts {
		if key, _, ok := strings.Cut(p, "="); ok {
			parts[i] = key + "=" + redactedValue
		} else {
			parts[i] = redactedValue
		}
	}
	return strings.Join(parts, "&")
}

// redactUnparsed cuts an unparseable URL at its query or fragment and drops
// everything between the scheme and a userinfo's "@".
func redactUnparsed(raw string) string {
	s, _, cut := strings.Cut(raw, "?")
	if i := strings.IndexByte(s, '#'); i >= 0 {
		s, cut = s[:i], true
	}
	if at := strings.LastIndexByte(s, '@'); at >= 0 {
		scheme, _, ok := strings.Cut(s, "//")
		if !ok {
			return redactedValue
		}
		s = scheme + "//" + redactedValue + s[at:]
	}
	if cut {
		s += "?" + redactedValue
	}
	return s
}
