package web

import (
	"net/http"
)

// RequestHeader is the header every state-changing request must carry
// (docs/security.md): a browser sends a custom header cross-site only
// after a CORS preflight, which driftd never grants, so a page on another
// site cannot forge one with a form or a simple fetch.
const RequestHeader = "X-Driftd-Request"

// maxRequestBody bounds what any state-changing request may send; the
// handlers bound their own bodies further.
const maxRequestBody = 64 << 10

// guardWrites is the one gate of every request that is not GET, HEAD or
// OPTIONS, whatever its route: a cross-site browser request is refused
// (net/http's CrossOriginProtection reads Sec-Fetch-Site, else Origin
// against Host; a client that sends neither, such as curl or the CLI, is
// not a browser and passes), a request without RequestHeader is refused,
// and the body is bounded.
func guardWrites(next http.Handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		text(w, http.StatusForbidden, "Cross-site request refused: state-changing requests must come from driftd's own pages or a non-browser client (docs/security.md).\n")
	}))
	return cop.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
			next.ServeHTTP(w, r)
			return
		}
		if r.Header.Get(RequestHeader) == "" {
			text(w, http.StatusForbidden, "Refused: a state-changing request must carry the header "+RequestHeader+": 1 (docs/security.md).\n")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxRequestBody)
		next.ServeHTTP(w, r)
	}))
}

// contentSecurityPolicy allows the pages only their own files: no inline
// script or style, no framing, no foreign form targets. The pages show
// server-controlled strings; this is the second wall behind escaping.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

// securityHeaders keeps every response from being framed, sniffed or
// leaking its URL in a Referer.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		next.ServeHTTP(w, r)
	})
}
