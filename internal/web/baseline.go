package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/driftd/driftd/internal/manifest"
	"github.com/driftd/driftd/internal/state"
)

// maxAcceptBody bounds what POST …/baseline reads of its body.
const maxAcceptBody = 4 << 10

// AcceptRequest is an accept as the API received it: what the body says
// (the digest of the reviewed surface, why, and who it claims to be) and
// who the request came from as the TLS layer verified it, or as its
// basic-auth header names it — which the Source counts as an identity
// only when the web config makes the server check it.
type AcceptRequest struct {
	Digest    string
	Reason    string
	ClaimedBy string
	// BasicAuthUser is the request's basic-auth user name, if any.
	BasicAuthUser string
	// CertSubject is the subject of the client certificate the TLS
	// handshake verified, if any.
	CertSubject string
}

// DigestError is an accept whose digest is not the surface digest the
// target's last successful run served; Current is that digest (empty
// before any successful run).
type DigestError struct{ Current string }

func (e *DigestError) Error() string {
	if e.Current == "" {
		return "no surface served yet: nothing to accept"
	}
	return fmt.Sprintf("the served surface has digest %s: review it and accept that digest", e.Current)
}

// acceptBody is the body of POST …/baseline.
type acceptBody struct {
	Digest string `json:"digest"`
	Reason string `json:"reason"`
	By     string `json:"by"`
}

// AcceptAnswer is the data of what POST …/baseline answers: the accept
// as recorded and what happens next, or, with a refusal, the current
// digest.
type AcceptAnswer struct {
	Message string        `json:"message,omitempty"`
	Digest  string        `json:"digest,omitempty"`
	Accept  *state.Accept `json:"accept,omitempty"`
}

// baselineAccept is POST /api/v1/targets/{name}/baseline (lifecycle):
// re-baseline a baseline-mode target after a reviewed change. The body
// names the surface digest that was reviewed (the target page and
// /api/v1/targets show it); the accept is refused with 409 and the
// current digest unless the target's last successful run served it, and
// is applied by the next successful run that serves it, within 24 h
// (docs/security.md#baseline-approval). The history records the
// authenticated identity; a "by" in the body is kept apart as a claim.
func (h *handler) baselineAccept(w http.ResponseWriter, r *http.Request) {
	var body acceptBody
	b, err := io.ReadAll(io.LimitReader(r.Body, maxAcceptBody+1))
	switch {
	case err != nil:
		apiFail(w, http.StatusBadRequest, "reading the body: "+err.Error())
		return
	case len(b) > maxAcceptBody:
		apiFail(w, http.StatusRequestEntityTooLarge, "body larger than 4 KiB")
		return
	case len(b) > 0:
		if err := json.Unmarshal(b, &body); err != nil {
			apiFail(w, http.StatusBadRequest, `body must be {"digest": "sha256:...", "reason": "...", "by": "..."}`)
			return
		}
	}
	req := AcceptRequest{Digest: body.Digest, Reason: body.Reason, ClaimedBy: body.By}
	req.BasicAuthUser, _, _ = r.BasicAuth()
	if r.TLS != nil && len(r.TLS.VerifiedChains) > 0 && len(r.TLS.VerifiedChains[0]) > 0 {
		req.CertSubject = r.TLS.VerifiedChains[0][0].Subject.String()
	}
	acc, err := h.src.AcceptBaseline(r.PathValue("name"), req)
	var de *DigestError
	switch {
	case errors.Is(err, ErrUnknownTarget):
		apiFail(w, http.StatusNotFound, err.Error())
	case errors.Is(err, ErrNotBaseline):
		apiFail(w, http.StatusConflict, err.Error())
	case errors.As(err, &de):
		msg := err.Error()
		if body.Digest == "" && de.Current != "" {
			msg = "no digest given: " + msg
		}
		apiFailData(w, http.StatusConflict, msg, AcceptAnswer{Digest: de.Current})
	case err != nil:
		apiFail(w, http.StatusInternalServerError, err.Error())
	default:
		apiOK(w, http.StatusAccepted, AcceptAnswer{Message: "accept recorded: the next successful run that serves " + acc.Digest +
			" records it as the baseline (a run was started); it expires at " + acc.Expires.Format("2006-01-02 15:04:05Z"), Digest: acc.Digest, Accept: acc})
	}
}

// baselineDownload is GET /api/v1/targets/{name}/baseline: the recorded
// baseline as a canonical manifest, which `driftd check` and `driftd
// diff` read as they read any manifest.
func (h *handler) baselineDownload(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	b, err := h.src.Baseline(name)
	switch {
	case errors.Is(err, ErrUnknownTarget), errors.Is(err, ErrNoBaseline):
		apiFail(w, http.StatusNotFound, err.Error())
		return
	case errors.Is(err, ErrNotBaseline):
		apiFail(w, http.StatusConflict, err.Error())
		return
	case err != nil:
		apiFail(w, http.StatusInternalServerError, err.Error())
		return
	}
	// Rendered again: the state file stores it compact, on one line.
	m, err := manifest.Parse(b.Manifest, ".json")
	var canon []byte
	if err == nil {
		canon, err = m.Canonical()
	}
	if err != nil {
		apiFail(w, http.StatusInternalServerError, "baseline: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`-baseline.json"`)
	w.Header().Set("Last-Modified", b.RecordedAt.UTC().Format(http.TimeFormat))
	w.Header().Set("X-Driftd-Baseline-Origin", b.Origin)
	if b.Digest != "" {
		w.Header().Set("X-Driftd-Baseline-Digest", b.Digest)
	}
	_, _ = w.Write(canon)
}
