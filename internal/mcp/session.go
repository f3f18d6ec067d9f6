package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Session is an established conversation with one server: the era and
// version to use, and for legacy servers the session id.
type Session struct {
	c          *Client
	Era        Era
	Version    string
	SessionID  string
	ServerInfo *Implementation
	// Discover is the DiscoverResult of a modern server.
	Discover *DiscoverResult
	// FallbackReason says why a legacy fallback happened ("" when modern).
	FallbackReason string
	// Retried is true when server/discover was retried after -32022.
	Retried bool
	// Capabilities are the server's advertised capabilities, by name
	// (tools, prompts, resources, …), from server/discover or initialize.
	Capabilities map[string]json.RawMessage
}

// Advertises reports whether the server advertised the capability that
// lists k.
func (s *Session) Advertises(k Kind) bool {
	v, ok := s.Capabilities[k.Capability()]
	return ok && string(v) != "null"
}

// DiscoverResult is the part of server/discover's result driftd reads.
type DiscoverResult struct {
	SupportedVersions []string                   `json:"supportedVersions"`
	Capabilities      map[string]json.RawMessage `json:"capabilities"`
	ResultMeta
}

// ResultMeta holds the members every modern result carries.
type ResultMeta struct {
	ResultType *string                    `json:"resultType"`
	TTLMs      *json.RawMessage           `json:"ttlMs"`
	CacheScope *json.RawMessage           `json:"cacheScope"`
	Meta       map[string]json.RawMessage `json:"_meta"`
}

// ServerInfo returns _meta's io.modelcontextprotocol/serverInfo, if valid.
func (m ResultMeta) ServerInfo() *Implementation {
	raw, ok := m.Meta[MetaServerInfo]
	if !ok {
		return nil
	}
	var impl Implementation
	if json.Unmarshal(raw, &impl) != nil || impl.Name == "" {
		return nil
	}
	return &impl
}

// Connect establishes the era: server/discover first (retried once on
// -32022 naming a modern version), then, for anything that is not a
// recognised modern answer, the legacy initialize handshake. A Connect that
// fails leaves no connection open: the caller has no Session to close.
func (c *Client) Connect(ctx context.Context) (*Session, error) {
	return c.releaseOnError(c.connect(ctx))
}

// releaseOnError closes c's idle connections when a session could not be
// established; a Session's Close does it otherwise.
func (c *Client) releaseOnError(s *Session, err error) (*Session, error) {
	if err != nil {
		c.CloseIdleConnections()
		return nil, err
	}
	return s, nil
}

func (c *Client) connect(ctx context.Context) (*Session, error) {
	s := &Session{c: c}
	version := ModernVersion
	for attempt := 0; ; attempt++ {
		ex, _, err := c.do(ctx, call{era: EraModern, version: version, method: "server/discover"})
		if err == nil {
			return s.fromDiscover(ctx, ex.Result)
		}
		var me *Error
		errors.As(err, &me)
		switch {
		case me.RPC == nil:
			if me.Reason != ReasonHTTPStatus || me.IsRedirect() {
				return nil, err // transport, auth, size, redirect: not era evidence
			}
			return s.fallback(ctx, DefaultLegacyVersion, fmt.Sprintf("server/discover answered HTTP %d without a JSON-RPC body", me.Status))
		case me.RPC.Code == CodeUnsupportedProtocolVersion:
			supported := supportedVersions(me.RPC.Data)
			me.Supported = supported
			if slices.Contains(supported, ModernVersion) && attempt == 0 {
				s.Retried = true
				continue
			}
			if v := NewestLegacy(supported); v != "" {
				return s.fallback(ctx, v, "server/discover refused 2026-07-28 and listed only legacy versions")
			}
			me.Reason = ReasonProtocolUnsupported
			return nil, me
		case IsModernError(me.RPC.Code):
			return nil, err // a modern server rejected the request: no fallback
		default:
			return s.fallback(ctx, DefaultLegacyVersion, fmt.Sprintf("server/discover answered JSON-RPC error %d", me.RPC.Code))
		}
	}
}

func supportedVersions(data json.RawMessage) []string {
	var d struct {
		Supported []string `json:"supported"`
	}
	_ = json.Unmarshal(data, &d)
	return d.Supported
}

// fromDiscover reads a DiscoverResult. One that lists 2026-07-28 makes the
// server modern. One that names only versions driftd does not speak, or
// none at all ({} is what some 2025 servers answer to any method), is
// legacy evidence, not a refusal: initialize is tried with the newest
// legacy version listed, else 2025-11-25. Only when that fallback fails
// too, and the result did name versions, is the server one that speaks
// nothing driftd does.
func (s *Session) fromDiscover(ctx context.Context, result json.RawMessage) (*Session, error) {
	var d DiscoverResult
	if err := json.Unmarshal(result, &d); err != nil {
		return nil, &Error{Reason: ReasonInvalidResponse, Method: "server/discover", Err: err}
	}
	if slices.Contains(d.SupportedVersions, ModernVersion) {
		s.Era, s.Version, s.Discover, s.ServerInfo = EraModern, ModernVersion, &d, d.ServerInfo()
		s.Capabilities = d.Capabilities
		return s, nil
	}
	if v := NewestLegacy(d.SupportedVersions); v != "" {
		return s.fallback(ctx, v, "server/discover listed only legacy versions")
	}
	why := "server/discover answered a result naming no supported version"
	if len(d.SupportedVersions) > 0 {
		why = "server/discover listed no version driftd speaks"
	}
	sess, err := s.fallback(ctx, DefaultLegacyVersion, why)
	if err != nil && len(d.SupportedVersions) > 0 && Classify(err) != ReasonTimeout && Classify(err) != ReasonAuthRequired {
		return nil, &Error{Reason: ReasonProtocolUnsupported, Method: "server/discover",
			Supported: d.SupportedVersions, Detail: "no version driftd speaks, and initialize failed", Err: err}
	}
	return sess, err
}

// fallback is legacy for Connect: the client's OnFallback hook learns the
// version asked for first.
func (s *Session) fallback(ctx context.Context, version, why string) (*Session, error) {
	if s.c.onFallback != nil {
		s.c.onFallback(version, why)
	}
	return s.legacy(ctx, version, why)
}

// legacy runs the initialize handshake without the 2026 header, keeps the
// session id the server mints, and sends notifications/initialized.
func (s *Session) legacy(ctx context.Context, version, why string) (*Session, error) {
	ex, h, err := s.c.do(ctx, call{era: EraLegacy, version: version, method: "initialize", noVersion: true,
		params: map[string]any{
			"protocolVersion": version,
			"capabilities":    s.c.capabilities(),
			"clientInfo":      s.c.info,
		}})
	if err != nil {
		return nil, fmt.Errorf("legacy fallback (%s): %w", why, err)
	}
	var init struct {
		ProtocolVersion string                     `json:"protocolVersion"`
		ServerInfo      *Implementation            `json:"serverInfo"`
		Capabilities    map[string]json.RawMessage `json:"capabilities"`
	}
	if err := json.Unmarshal(ex.Result, &init); err != nil {
		return nil, &Error{Reason: ReasonInvalidResponse, Method: "initialize", Err: err}
	}
	if !IsLegacyVersion(init.ProtocolVersion) {
		return nil, &Error{Reason: ReasonProtocolUnsupported, Method: "initialize",
			Supported: []string{init.ProtocolVersion}, Detail: "initialize negotiated a version driftd does not speak"}
	}
	s.Era, s.Version, s.FallbackReason = EraLegacy, init.ProtocolVersion, why
	s.SessionID, s.ServerInfo, s.Capabilities = h.Get(HeaderSessionID), init.ServerInfo, init.Capabilities
	_, _, err = s.c.do(ctx, call{era: EraLegacy, version: s.Version, method: "notifications/initialized",
		sessionID: s.SessionID, notify: true})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Open starts a session on c in the era of like, without discovery: for a
// modern server nothing is sent, a legacy server gets its own initialize.
// Like Connect, an Open that fails leaves no connection open.
func (c *Client) Open(ctx context.Context, like *Session) (*Session, error) {
	s := &Session{c: c, Era: like.Era, Version: like.Version, ServerInfo: like.ServerInfo, Capabilities: like.Capabilities}
	if like.Era == EraModern {
		return s, nil
	}
	return c.releaseOnError(s.legacy(ctx, like.Version, like.FallbackReason))
}

// listResult is what ListTools reads of a tools/list result.
type listResult struct {
	Tools      *[]json.RawMessage `json:"tools"`
	NextCursor *json.RawMessage   `json:"nextCursor"`
	ResultMeta
}

// ListPage is one page of tools/list.
type ListPage struct {
	Tools []json.RawMessage
	// Parsed are Tools as ParseTool reads them; an empty Name marks a
	// definition without a usable one.
	Parsed     []Tool
	NextCursor string
	HasNext    bool
	ResultMeta
	Exchange *Exchange
}

// ListTools fetches one page of tools/list; cursor "" asks for the first.
func (s *Session) ListTools(ctx context.Context, cursor string) (*ListPage, error) {
	return s.listTools(ctx, cursor, true, nil)
}

// ListToolsRaw is ListTools without Parsed, for a listing that is only
// compared byte for byte with another.
func (s *Session) ListToolsRaw(ctx context.Context, cursor string) (*ListPage, error) {
	return s.listTools(ctx, cursor, false, nil)
}

// ListToolsKnown is ListTools, or without parse ListToolsRaw, for a
// caller that concluded on an answer before (known, an earlier page's
// Exchange.Answer): a page answered with exactly those bytes to a
// request of that id is left unread, its Exchange.Unread set and nothing
// else, until Read.
func (s *Session) ListToolsKnown(ctx context.Context, cursor string, known Known, parse bool) (*ListPage, error) {
	return s.listTools(ctx, cursor, parse, &known)
}

func (s *Session) listTools(ctx context.Context, cursor string, parse bool, known *Known) (*ListPage, error) {
	params := map[string]any{}
	if cursor != "" {
		params["cursor"] = cursor
	}
	ex, _, err := s.c.do(ctx, call{era: s.Era, version: s.Version, method: "tools/list", params: params, sessionID: s.SessionID, known: known})
	if err != nil || ex.Unread {
		return &ListPage{Exchange: ex}, err
	}
	return s.c.page(ex, parse)
}

// Read decodes a page ListToolsKnown left unread (others are returned as
// they are), as ListTools or, without parse, ListToolsRaw would have.
func (s *Session) Read(p *ListPage, parse bool) (*ListPage, error) {
	ex := p.Exchange
	if ex == nil || !ex.Unread {
		return p, nil
	}
	body := ex.body
	ex.Unread, ex.body = false, nil
	var err error
	if ex.Result, err = s.c.decode(body, ex.Answer.Sum, true, "application/json", ex.ID); err != nil {
		// Not met: the same request answered with the same bytes
		// decoded when the caller concluded on them.
		var me *Error
		if errors.As(err, &me) {
			me.Method = "tools/list"
		}
		ex.Err = err
		return &ListPage{Exchange: ex}, err
	}
	return s.c.page(ex, parse)
}

// page reads the tools/list result of ex.
func (c *Client) page(ex *Exchange, parse bool) (*ListPage, error) {
	page := &ListPage{Exchange: ex}
	dp, ok := c.limits.Decoded.page(ex.Result)
	if !ok {
		var shape listResult
		if json.Unmarshal(ex.Result, &shape) == nil && shape.Tools == nil {
			return page, &Error{Reason: ReasonInvalidResponse, Method: "tools/list", Err: errors.New(`result has no "tools" array`)}
		}
		return page, &Error{Reason: ReasonInvalidResponse, Method: "tools/list", Err: errors.New("result does not have the ListToolsResult shape")}
	}
	// The decoded page may be shared (Decoded): the caller gets slices
	// of its own.
	page.Tools, page.ResultMeta = slices.Clone(dp.tools), dp.meta
	if parse {
		page.Parsed = slices.Clone(dp.parsed)
	}
	raw := listResult{NextCursor: dp.next}
	if raw.NextCursor != nil && string(*raw.NextCursor) != "null" {
		if err := json.Unmarshal(*raw.NextCursor, &page.NextCursor); err != nil {
			return page, &Error{Reason: ReasonInvalidResponse, Method: "tools/list", Err: errors.New(`"nextCursor" is not a string`)}
		}
		page.HasNext = true
	}
	return page, nil
}

// Close ends a legacy session with DELETE, best effort, briefly, and never
// past ctx's deadline: a run that is out of time skips it. It then closes
// the client's idle connection, unless the client keeps it
// (KeepConnections).
func (s *Session) Close(ctx context.Context) {
	if !s.c.keep {
		defer s.c.CloseIdleConnections()
	}
	if s.SessionID == "" || ctx.Err() != nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	s.c.deleteSession(ctx, s.SessionID, s.Version)
}

// CallResult is the part of a tools/call result driftd reads. Content and
// StructuredContent are what the tool returned: they are checked, never
// copied into an artifact.
type CallResult struct {
	Content           []json.RawMessage `json:"content"`
	StructuredContent json.RawMessage   `json:"structuredContent"`
	IsError           bool              `json:"isError"`
	ResultType        *string           `json:"resultType"`
	HasContent        bool              `json:"-"`
	// InputRequests and RequestState are the members of an
	// InputRequiredResult (resultType "input_required"), kept raw so their
	// shape can be checked; driftd never answers or echoes them.
	InputRequests json.RawMessage `json:"inputRequests"`
	RequestState  json.RawMessage `json:"requestState"`
}

// CallTool sends tools/call with arguments; Mcp-Name carries the name,
// encoded when it is not plain ASCII, and in the modern era each argument
// headers names (the served tool's valid x-mcp-header annotations, from
// ParamHeaders) travels in its Mcp-Param-{Name} header too.
func (s *Session) CallTool(ctx context.Context, name string, arguments json.RawMessage, headers []ParamHeader) (*CallResult, *Exchange, error) {
	params := map[string]any{"name": name, "arguments": arguments}
	ex, _, err := s.c.do(ctx, call{era: s.Era, version: s.Version, method: "tools/call", params: params, sessionID: s.SessionID, paramHeaders: headers})
	if err != nil {
		return nil, ex, err
	}
	var res CallResult
	var shape struct {
		Content *json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(ex.Result, &res); err != nil || json.Unmarshal(ex.Result, &shape) != nil {
		return nil, ex, &Error{Reason: ReasonInvalidResponse, Method: "tools/call", Err: errors.New("result does not have the CallToolResult shape")}
	}
	res.HasContent = shape.Content != nil
	return &res, ex, nil
}
