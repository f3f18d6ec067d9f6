package web

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/driftd/driftd/internal/manifest"
)

// maxAcceptBody bounds what POST …/baseline reads of its body.
const maxAcceptBody = 4 << 10

// acceptRequest is the optional body of POST …/baseline.
type acceptRequest struct {
	By     string `json:"by"`
	Reason string `json:"reason"`
}

// baselineAccept is POST /api/v1/targets/{name}/baseline (lifecycle):
// re-baseline a baseline-mode target after a reviewed change. Who accepted
// is the body's "by", else the basic-auth user of --web.config.file, else
// "unknown"; it and "reason" go into the history with the time.
func (h *handler) baselineAccept(w http.ResponseWriter, r *http.Request) {
	var req acceptRequest
	body, err := io.ReadAll(io.LimitReader(r.Body, maxAcceptBody+1))
	switch {
	case err != nil:
		writeJSON(w, http.StatusBadRequest, apiError{"reading the body: " + err.Error()})
		return
	case len(body) > maxAcceptBody:
		writeJSON(w, http.StatusRequestEntityTooLarge, apiError{"body larger than 4 KiB"})
		return
	case len(body) > 0:
		if err := json.Unmarshal(body, &req); err != nil {
			writeJSON(w, http.StatusBadRequest, apiError{`body must be {"by": "...", "reason": "..."}`})
			return
		}
	}
	if req.By == "" {
		req.By, _, _ = r.BasicAuth()
	}
	if req.By == "" {
		req.By = "unknown"
	}
	switch err := h.src.AcceptBaseline(r.PathValue("name"), req.By, req.Reason); {
	case errors.Is(err, ErrUnknownTarget):
		writeJSON(w, http.StatusNotFound, apiError{err.Error()})
	case errors.Is(err, ErrNotBaseline):
		writeJSON(w, http.StatusConflict, apiError{err.Error()})
	case err != nil:
		writeJSON(w, http.StatusInternalServerError, apiError{err.Error()})
	default:
		writeJSON(w, http.StatusAccepted, map[string]string{"status": "accept requested: the target's next run records its served surface as the baseline (a run was started)"})
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
		writeJSON(w, http.StatusNotFound, apiError{err.Error()})
		return
	case errors.Is(err, ErrNotBaseline):
		writeJSON(w, http.StatusConflict, apiError{err.Error()})
		return
	case err != nil:
		writeJSON(w, http.StatusInternalServerError, apiError{err.Error()})
		return
	}
	// Rendered again: the state file stores it re-indented inside itself.
	m, err := manifest.Parse(b.Manifest, ".json")
	var canon []byte
	if err == nil {
		canon, err = m.Canonical()
	}
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, apiError{"baseline: " + err.Error()})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`-baseline.json"`)
	w.Header().Set("Last-Modified", b.RecordedAt.UTC().Format(http.TimeFormat))
	w.Header().Set("X-Driftd-Baseline-Origin", b.Origin)
	_, _ = w.Write(canon)
}
