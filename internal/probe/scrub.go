package probe

import (
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/sanitize"
)

// scrub is the run's border: every server-controlled string on its way
// into the report, and every served definition on its way to capture and
// state, passes here once. Configured secret values are redacted first (a
// server that echoes a request header must not get the credential into
// an artifact), then the one sanitiser bounds the string and makes its
// control characters visible. Fingerprints are taken before, over the
// strings as served, so they do not move.
func (r *run) scrub() {
	sec, rep := r.secrets, r.rep
	name := func(s string) string { return sanitize.Name(sec.Redact(s)) }
	text := func(s string) string { return sanitize.Text(sec.Redact(s)) }
	for i := range r.findings {
		f := &r.findings[i]
		f.Tool, f.Pointer, f.Message = name(f.Tool), text(f.Pointer), text(f.Message)
	}
	rep.FailureMessage = text(rep.FailureMessage)
	if si := rep.ServerInfo; si != nil {
		rep.ServerInfo = &mcp.Implementation{Name: name(si.Name), Version: name(si.Version)}
	}
	if ch := rep.AuthPosture.Challenge; ch != nil {
		c := *ch
		c.Scheme, c.ResourceMetadata, c.Scope = text(c.Scheme), text(c.ResourceMetadata), text(c.Scope)
		rep.AuthPosture.Challenge = &c
	}
	if as := rep.AuthPosture.Surface; as != nil {
		as.ProtectedResourceMetadata = text(as.ProtectedResourceMetadata)
		for i := range as.AuthorizationServers {
			a := &as.AuthorizationServers[i]
			a.Issuer, a.Metadata = text(a.Issuer), text(a.Metadata)
		}
	}
	if inv := rep.Invocation; inv != nil {
		for i := range inv.Planned {
			pc := &inv.Planned[i]
			pc.Tool, pc.Error, pc.Outcome = name(pc.Tool), text(pc.Error), text(pc.Outcome)
		}
		for i := range inv.Reads {
			pr := &inv.Reads[i]
			pr.Name, pr.Error, pr.Outcome = name(pr.Name), text(pr.Error), text(pr.Outcome)
		}
	}
	if sec.Empty() {
		return
	}
	for k, items := range rep.servedItems {
		redacted := make([]mcp.Item, 0, len(items))
		for _, it := range items {
			if raw := sec.RedactBytes(it.Raw); string(raw) != string(it.Raw) {
				it, _ = mcp.ParseItem(k, raw)
			}
			redacted = append(redacted, it)
		}
		rep.servedItems[k] = redacted
	}
	for i, t := range rep.served {
		if raw := sec.RedactBytes(t.Raw); len(raw) != len(t.Raw) || string(raw) != string(t.Raw) {
			if parsed, err := mcp.ParseTool(raw); err == nil {
				rep.served[i] = parsed
			}
		}
	}
}
