package mcp

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"syscall"
)

// Reason is the fixed set of failure classes used in reports and metrics.
type Reason string

// The failure reasons of DESIGN §5. Nothing else is ever emitted.
const (
	ReasonDNS                 Reason = "dns"
	ReasonConnect             Reason = "connect"
	ReasonTLS                 Reason = "tls"
	ReasonTimeout             Reason = "timeout"
	ReasonHTTPStatus          Reason = "http_status"
	ReasonAuthRequired        Reason = "auth_required"
	ReasonInvalidResponse     Reason = "invalid_response"
	ReasonJSONRPCError        Reason = "jsonrpc_error"
	ReasonProtocolUnsupported Reason = "protocol_unsupported"
	ReasonResponseTooLarge    Reason = "response_too_large"
	ReasonConfig              Reason = "config"
)

// Reasons lists every Reason, for metrics that pre-create their series.
var Reasons = []Reason{
	ReasonDNS, ReasonConnect, ReasonTLS, ReasonTimeout, ReasonHTTPStatus,
	ReasonAuthRequired, ReasonInvalidResponse, ReasonJSONRPCError,
	ReasonProtocolUnsupported, ReasonResponseTooLarge, ReasonConfig,
}

// Error is a classified failure of one MCP request. Its message never
// quotes server-provided text or a credential: servers are untrusted and may
// echo what they were sent.
type Error struct {
	Reason Reason
	Method string
	// Status is the HTTP status, 0 when no response arrived.
	Status int
	// RPC is set when the server answered with a JSON-RPC error.
	RPC *RPCError
	// Location is set for redirects (the header as sent, never followed).
	Location string
	// Challenge is set for 401/403.
	Challenge *Challenge
	// Supported is data.supported of an UnsupportedProtocolVersion error.
	Supported []string
	Detail    string
	Err       error
}

func (e *Error) Error() string {
	msg := e.Method
	if e.Status != 0 {
		msg += fmt.Sprintf(": HTTP %d", e.Status)
	}
	if e.RPC != nil {
		msg += fmt.Sprintf(": JSON-RPC error %d", e.RPC.Code)
	}
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// IsRedirect reports whether the server answered with a 3xx.
func (e *Error) IsRedirect() bool { return e.Status >= 300 && e.Status < 400 }

// errResponseTooLarge is returned by the body reader once the limit is hit.
var errResponseTooLarge = errors.New("response exceeds the size limit")

// errRunBudget is returned by the body reader once the run has read its
// whole byte budget (max_run_bytes) across all its responses.
var errRunBudget = errors.New("the run's byte budget (max_run_bytes) is spent")

// errDaemonBudget is returned by the body reader when the daemon's pool of
// bytes in flight is spent and this run holds more than its share.
var errDaemonBudget = errors.New("the daemon's bytes in flight (global.max_inflight_bytes) are spent by the runs in flight, and this run holds more than its share")

// tooLarge reports whether err is one of the body reader's size bounds:
// a response, an SSE event, the run's budget or the daemon's pool.
func tooLarge(err error) bool {
	return errors.Is(err, errResponseTooLarge) || errors.Is(err, errEventTooLarge) ||
		errors.Is(err, errRunBudget) || errors.Is(err, errDaemonBudget)
}

// Classify maps any error from a request to its Reason. It is the one place
// where errors become reasons.
func Classify(err error) Reason {
	if err == nil {
		return ""
	}
	var me *Error
	if errors.As(err, &me) && me.Reason != "" {
		return me.Reason
	}
	if tooLarge(err) {
		return ReasonResponseTooLarge
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return ReasonTimeout
	}
	var pathErr *fs.PathError
	if errors.As(err, &pathErr) {
		return ReasonConfig // a secret or CA file the HTTP client could not read
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return ReasonDNS
	}
	if isTLSError(err) {
		return ReasonTLS
	}
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		return ReasonTimeout
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Op == "dial" {
		return ReasonConnect
	}
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return ReasonConnect
	}
	if isHangUp(err) {
		return ReasonConnect
	}
	return ReasonInvalidResponse
}

// isHangUp reports whether the server closed the connection before
// answering. Depending on timing that surfaces as a reset or a broken pipe
// (classified above), an EOF, or net/http's unexported "server closed idle
// connection" when the close came before the request was written.
// http.Client.Do returns its errors as *url.Error, and all of them happen
// before any response byte; an EOF while reading a body is not wrapped so,
// and stays invalid_response.
func isHangUp(err error) bool {
	var urlErr *url.Error
	if !errors.As(err, &urlErr) {
		return false
	}
	if errors.Is(urlErr, io.EOF) || errors.Is(urlErr, io.ErrUnexpectedEOF) {
		return true
	}
	for e := urlErr.Err; e != nil; e = errors.Unwrap(e) {
		if e.Error() == "http: server closed idle connection" {
			return true
		}
	}
	return false
}

func isTLSError(err error) bool {
	var (
		recErr   tls.RecordHeaderError
		alertErr tls.AlertError
		verErr   *tls.CertificateVerificationError
		uaErr    x509.UnknownAuthorityError
		hostErr  x509.HostnameError
		invErr   x509.CertificateInvalidError
	)
	return errors.As(err, &recErr) || errors.As(err, &alertErr) || errors.As(err, &verErr) ||
		errors.As(err, &uaErr) || errors.As(err, &hostErr) || errors.As(err, &invErr)
}

// transportError is a failed HTTP round trip as an *Error: classified
// with its *url.Error, kept without it, since that error quotes the URL,
// whose query may hold a credential.
func transportError(err error) *Error {
	reason := Classify(err)
	if ue, ok := err.(*url.Error); ok {
		err = ue.Err
	}
	return &Error{Reason: reason, Err: err}
}
