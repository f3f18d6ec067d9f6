package main

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/probe"
)

// ANSI styles of the human output; used only when colour(w) says so.
const (
	ansiReset  = "\x1b[0m"
	ansiDim    = "\x1b[2m"
	ansiRed    = "\x1b[1;31m"
	ansiYellow = "\x1b[33m"
	ansiBlue   = "\x1b[34m"
)

var severityStyle = map[string]string{"ERROR": ansiRed, "WARN": ansiYellow, "INFO": ansiBlue}

var (
	// A group heading of probe.WriteFindings, "ERROR (3)". Server text is
	// always indented and has its newlines escaped, so it never matches.
	headingLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(ERROR|WARN|INFO) \(\d+\)$`) })
	// Its last line, "1 ERROR, 0 WARN, 2 INFO".
	summaryLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(\d+) ERROR, (\d+) WARN, (\d+) INFO$`) })
	countWord   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`([1-9]\d*) (ERROR|WARN|INFO)`) })
)

// writeCheckText prints probe.WriteText's rendering of rep for a person,
// with the severity words coloured when paint is set. When the probe
// failed, the summary of counts (which would read "0 ERROR, 0 WARN, 0
// INFO", all clear) gives way to a last line saying nothing was compared.
func writeCheckText(w io.Writer, rep *probe.Report, paint bool) error {
	var buf bytes.Buffer
	if err := probe.WriteText(&buf, rep); err != nil {
		return err
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if rep.Success {
		return writeLines(w, lines, paint)
	}
	notProbed := "not probed:"
	if paint {
		notProbed = style(ansiRed, notProbed)
	}
	lines = append(dropFailureEcho(lines, rep),
		fmt.Sprintf("%s %s (reason: %s) — nothing was compared", notProbed, rep.FailureMessage, rep.FailureReason))
	return writeLines(w, lines, paint)
}

// writeFindingsText is probe.WriteFindings with writeCheckText's colours.
func writeFindingsText(w io.Writer, rep *probe.Report, paint bool) error {
	var buf bytes.Buffer
	if err := probe.WriteFindings(&buf, rep); err != nil {
		return err
	}
	return writeLines(w, strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n"), paint)
}

// writeLines writes lines, colouring the severity words of group headings
// and of the counts when paint is set.
func writeLines(w io.Writer, lines []string, paint bool) error {
	var b strings.Builder
	for _, l := range lines {
		switch {
		case !paint:
		case headingLine().MatchString(l):
			word, rest, _ := strings.Cut(l, " ")
			l = style(severityStyle[word], word) + " " + rest
		case summaryLine().MatchString(l):
			l = countWord().ReplaceAllStringFunc(l, func(s string) string {
				n, word, _ := strings.Cut(s, " ")
				return n + " " + style(severityStyle[word], word)
			})
		}
		b.WriteString(l + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// dropFailureEcho removes what the last line now says: the header's
// "probe failed (reason): message" and the trailing counts.
func dropFailureEcho(lines []string, rep *probe.Report) []string {
	echo := fmt.Sprintf("probe failed (%s): %s", rep.FailureReason, rep.FailureMessage)
	out := lines[:0:0]
	for _, l := range lines {
		if l != echo {
			out = append(out, l)
		}
	}
	if n := len(out); n > 0 && summaryLine().MatchString(out[n-1]) {
		out = out[:n-1]
	}
	return out
}

func style(code, s string) string { return code + s + ansiReset }

// checkHint is the "next:" line for a person after check's text output:
// what to do about the outcome. Empty when there is nothing to do.
func checkHint(rep *probe.Report, threshold catalogue.Severity, manifestPath string) string {
	if !rep.Success {
		return "next: " + failureHint(rep.FailureReason)
	}
	if rep.MaxSeverity() < threshold.Rank() {
		return ""
	}
	for _, f := range rep.Findings {
		if f.Severity.Rank() >= threshold.Rank() && strings.HasPrefix(f.Rule, "MCP-DRIFT-") {
			return fmt.Sprintf("next: driftd capture --base-url %s -o %s to accept the served tools, or --json for CI",
				shellQuote(rep.BaseURL), shellQuote(manifestPath))
		}
	}
	return "next: driftd rules explains each rule; --ignore-file accepts a finding, or --json for CI"
}

// failureHint says what to check for each failure reason.
func failureHint(r mcp.Reason) string {
	switch r {
	case mcp.ReasonDNS:
		return "check the host name in --base-url"
	case mcp.ReasonConnect:
		return "is the server running, and are the host and port in --base-url right?"
	case mcp.ReasonTLS:
		return "check the server's certificate, or use http:// if it does not serve TLS"
	case mcp.ReasonTimeout:
		return "the server did not answer within --timeout: check it is up, or raise --timeout"
	case mcp.ReasonAuthRequired:
		return "the server wants credentials: --bearer-token-file PATH, or --header NAME=VALUE"
	case mcp.ReasonHTTPStatus, mcp.ReasonInvalidResponse, mcp.ReasonJSONRPCError:
		return "is --base-url the server's MCP endpoint (often …/mcp), and are the credentials right? --json shows what it answered"
	case mcp.ReasonProtocolUnsupported:
		return "the server speaks no MCP revision driftd knows (docs/probe.md); --json lists the ones it offered"
	case mcp.ReasonResponseTooLarge:
		return "a response was larger than --max-response-bytes (or the run than --max-run-bytes): raise it if that is expected"
	}
	return "check --base-url and the credentials; docs/probe.md explains each failure reason"
}

// shellQuote quotes s for a POSIX shell when it needs quoting.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:@%+=,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
