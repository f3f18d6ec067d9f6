// Package catalogue is the single source of truth for every rule driftd can
// emit: id, family, default severity and one-line doc, plus the Finding type
// and its fingerprint.
package catalogue

import "strings"

// Family groups rules by what they compare.
type Family string

// The rule families.
const (
	FamilyDrift Family = "MCP-DRIFT" // the manifest against the server
	FamilyConf  Family = "MCP-CONF"  // the server against the specification
	FamilyAuth  Family = "MCP-AUTH"  // who the server will talk to
	FamilySec   Family = "MCP-SEC"   // what the server's texts say to a model (docs/security.md)
)

// Families lists the rule families in the order they are documented.
var Families = []Family{FamilyDrift, FamilyConf, FamilyAuth, FamilySec}

// Rule ids. Names here are what alert rules and dashboards depend on.
const (
	DriftToolMissing         = "MCP-DRIFT-TOOL-MISSING"
	DriftToolUndeclared      = "MCP-DRIFT-TOOL-UNDECLARED"
	DriftProtocolUnsupported = "MCP-DRIFT-PROTOCOL-UNSUPPORTED"
	DriftLegacyServer        = "MCP-DRIFT-LEGACY-SERVER"
	DriftPaginationCapped    = "MCP-DRIFT-PAGINATION-CAPPED"
	DriftBaselineBounds      = "MCP-DRIFT-BASELINE-BOUNDS"
	DriftBaselineReview      = "MCP-DRIFT-BASELINE-REVIEW"
	DriftSchema              = "MCP-DRIFT-SCHEMA"
	DriftSchemaCompatible    = "MCP-DRIFT-SCHEMA-COMPATIBLE"
	DriftAnnotation          = "MCP-DRIFT-ANNOTATION"
	DriftDescription         = "MCP-DRIFT-DESCRIPTION"
	DriftTitle               = "MCP-DRIFT-TITLE"
	DriftCallOutputSchema    = "MCP-DRIFT-CALL-OUTPUT-SCHEMA"
	DriftCallNoStructured    = "MCP-DRIFT-CALL-NO-STRUCTURED-CONTENT"
	DriftCallErrorShape      = "MCP-DRIFT-CALL-ERROR-SHAPE"
	DriftCallInputRequired   = "MCP-DRIFT-CALL-INPUT-REQUIRED"

	DriftPromptMissing              = "MCP-DRIFT-PROMPT-MISSING"
	DriftPromptUndeclared           = "MCP-DRIFT-PROMPT-UNDECLARED"
	DriftPromptArgument             = "MCP-DRIFT-PROMPT-ARGUMENT"
	DriftPromptArgumentCompatible   = "MCP-DRIFT-PROMPT-ARGUMENT-COMPATIBLE"
	DriftResourceMissing            = "MCP-DRIFT-RESOURCE-MISSING"
	DriftResourceUndeclared         = "MCP-DRIFT-RESOURCE-UNDECLARED"
	DriftResourceTemplateMissing    = "MCP-DRIFT-RESOURCE-TEMPLATE-MISSING"
	DriftResourceTemplateUndeclared = "MCP-DRIFT-RESOURCE-TEMPLATE-UNDECLARED"
	DriftURITemplate                = "MCP-DRIFT-URI-TEMPLATE"
	DriftMimeType                   = "MCP-DRIFT-MIME-TYPE"

	ConfCacheHints     = "MCP-CONF-CACHE-HINTS"
	ConfResultType     = "MCP-CONF-RESULT-TYPE"
	ConfToolName       = "MCP-CONF-TOOL-NAME"
	ConfToolNameFormat = "MCP-CONF-TOOL-NAME-FORMAT"
	ConfDuplicateTool  = "MCP-CONF-DUPLICATE-TOOL"
	ConfInputSchema    = "MCP-CONF-INPUT-SCHEMA"
	ConfSchemaInvalid  = "MCP-CONF-SCHEMA-INVALID"
	ConfToolsetVaries  = "MCP-CONF-TOOLSET-VARIES"
	ConfOrderVaries    = "MCP-CONF-ORDER-VARIES"
	ConfPaginationLoop = "MCP-CONF-PAGINATION-LOOP"
	ConfServerInfo     = "MCP-CONF-SERVER-INFO"
	ConfRedirect       = "MCP-CONF-REDIRECT"
	ConfToolHeader     = "MCP-CONF-TOOL-HEADER-INVALID"
	ConfListShape      = "MCP-CONF-LIST-SHAPE"
	ConfDuplicateItem  = "MCP-CONF-DUPLICATE-ITEM"
	// ConfGetResultShape and ConfReadResultShape check the results of the
	// opt-in prompts/get and resources/read (docs/invoking.md).
	ConfGetResultShape  = "MCP-CONF-GET-RESULT-SHAPE"
	ConfReadResultShape = "MCP-CONF-READ-RESULT-SHAPE"

	AuthAnonymousList      = "MCP-AUTH-ANONYMOUS-LIST"
	AuthEnforced           = "MCP-AUTH-ENFORCED"
	AuthNoChallenge        = "MCP-AUTH-NO-CHALLENGE"
	AuthIndeterminate      = "MCP-AUTH-INDETERMINATE"
	AuthPlaintextTransport = "MCP-AUTH-PLAINTEXT-TRANSPORT"

	// The authorization surface (docs/security.md#the-authorization-surface):
	// the metadata a client discovers after a refusal, fetched without
	// credentials.
	AuthChallengeIncomplete = "MCP-AUTH-CHALLENGE-INCOMPLETE"
	AuthPRMMissing          = "MCP-AUTH-PRM-MISSING"
	AuthPRMInvalid          = "MCP-AUTH-PRM-INVALID"
	AuthResourceMismatch    = "MCP-AUTH-RESOURCE-MISMATCH"
	AuthSurfaceNotFetched   = "MCP-AUTH-SURFACE-NOT-FETCHED"
	AuthASMetadataMissing   = "MCP-AUTH-AS-METADATA-MISSING"
	AuthIssuerMismatch      = "MCP-AUTH-ISSUER-MISMATCH"
	AuthPKCES256Missing     = "MCP-AUTH-PKCE-S256-MISSING"
	AuthIssParameterMissing = "MCP-AUTH-ISS-PARAMETER-MISSING"
	AuthRegistrationMissing = "MCP-AUTH-REGISTRATION-MISSING"
	AuthPlaintextEndpoint   = "MCP-AUTH-PLAINTEXT-ENDPOINT"

	// The tool-poisoning posture detectors (docs/security.md): offline,
	// over every server-controlled text of the served surface.
	SecTagCharacters       = "MCP-SEC-TAG-CHARACTERS"
	SecInvisibleCharacters = "MCP-SEC-INVISIBLE-CHARACTERS"
	SecTerminalEscape      = "MCP-SEC-TERMINAL-ESCAPE"
	SecConfusableName      = "MCP-SEC-CONFUSABLE-NAME"
	SecModelInstruction    = "MCP-SEC-MODEL-INSTRUCTION"
	SecSecretLure          = "MCP-SEC-SECRET-LURE"
	SecEncodedBlob         = "MCP-SEC-ENCODED-BLOB"
	SecURL                 = "MCP-SEC-URL"
	SecEmail               = "MCP-SEC-EMAIL"
	SecShadowing           = "MCP-SEC-SHADOWING"
	SecDescriptionGrowth   = "MCP-SEC-DESCRIPTION-GROWTH"
	SecAnnotationClaim     = "MCP-SEC-ANNOTATION-CLAIM"
)

// Rule is one row of the catalogue.
type Rule struct {
	ID       string   `json:"id"`
	Family   Family   `json:"family"`
	Severity Severity `json:"severity"`
	Doc      string   `json:"doc"`
	// HasTool is true when findings of this rule name a tool (or, with
	// a kind, a prompt, resource or resource template).
	HasTool bool `json:"has_tool"`
	// Emitter is the package-qualified function that builds this rule's
	// findings, such as "probe.checkToolNameFormat": where a rule is
	// emitted is one hop away. A registry test in internal/probe holds
	// every row to its function and every emitting function to its rows.
	Emitter string `json:"emitter"`
}

// Rules is the catalogue, in the order it is documented.
var Rules = []Rule{
	{DriftToolMissing, FamilyDrift, Error, "declared, not served (suppressed when paging was capped)", true, "probe.compareSets"},
	{DriftToolUndeclared, FamilyDrift, Warn, "served, not declared", true, "probe.compareSets"},
	{DriftSchema, FamilyDrift, Error, "a served schema differs in a way a BRK-* grade calls breaking; carries direction, pointer, change and grade (severity from the grade)", true, "catalogue.compareSchema"},
	{DriftSchemaCompatible, FamilyDrift, Info, "a served schema differs in a way its BRK-* grade calls compatible (WARN or INFO from the grade)", true, "catalogue.compareSchema"},
	{DriftAnnotation, FamilyDrift, Warn, "a declared hint differs from the served one, compared on effective values (destructiveHint and openWorldHint default to true)", true, "catalogue.compareAnnotations"},
	{DriftDescription, FamilyDrift, Warn, "a tool's, prompt's, resource's or resource template's description changed: descriptions are model instructions, the rug-pull vector (reported by length and digest, never the text)", true, "catalogue.compareTexts"},
	{DriftTitle, FamilyDrift, Info, "a tool's title or annotations.title, or a prompt's, resource's or resource template's title (a resource's or template's name too) changed", true, "catalogue.compareTexts"},
	{DriftPromptMissing, FamilyDrift, Error, "a prompt declared in the manifest is not served (suppressed when prompts/list paging was capped)", true, "probe.compareItemSets"},
	{DriftPromptUndeclared, FamilyDrift, Warn, "a served prompt is not declared (only when the manifest declares prompts)", true, "probe.compareItemSets"},
	{DriftPromptArgument, FamilyDrift, Error, "a prompt's arguments changed in a way that breaks callers: a required argument added, an argument removed, or an optional one became required; carries change and grade (input direction, severity from the grade)", true, "catalogue.compareArguments"},
	{DriftPromptArgumentCompatible, FamilyDrift, Info, "a prompt's arguments changed compatibly: an optional argument added, or a required one became optional", true, "catalogue.compareArguments"},
	{DriftResourceMissing, FamilyDrift, Error, "a resource (by uri) declared in the manifest is not served (suppressed when resources/list paging was capped)", true, "probe.compareItemSets"},
	{DriftResourceUndeclared, FamilyDrift, Warn, "a served resource is not declared (only when the manifest declares resources)", true, "probe.compareItemSets"},
	{DriftResourceTemplateMissing, FamilyDrift, Error, "a resource template (by name) declared in the manifest is not served (suppressed when resources/templates/list paging was capped)", true, "probe.compareItemSets"},
	{DriftResourceTemplateUndeclared, FamilyDrift, Warn, "a served resource template is not declared (only when the manifest declares resourceTemplates)", true, "probe.compareItemSets"},
	{DriftURITemplate, FamilyDrift, Error, "a resource template's uriTemplate changed: its variables (change CHG-URI-TEMPLATE-VARIABLES) or its literal text (CHG-URI-TEMPLATE-CHANGED); URIs callers build no longer match", true, "catalogue.compareURITemplate"},
	{DriftMimeType, FamilyDrift, Warn, "a resource's or resource template's mimeType changed (added, removed or different): consumers parse contents by it", true, "catalogue.compareMimeType"},
	{DriftCallOutputSchema, FamilyDrift, Error, "a called tool's structuredContent does not conform to the declared outputSchema", true, "probe.checkCall"},
	{DriftCallNoStructured, FamilyDrift, Error, "a called tool declares an outputSchema and returned no structuredContent", true, "probe.checkCall"},
	{DriftCallErrorShape, FamilyDrift, Warn, "a called tool's failure came as a JSON-RPC error instead of a result with isError: true", true, "probe.checkCall"},
	{DriftCallInputRequired, FamilyDrift, Info, "a called tool answered input_required (multi round-trip); recorded, never pursued; ERROR when the InputRequiredResult's shape breaks the spec (neither inputRequests nor requestState, requestState not a string, inputRequests not an object of requests, or a request for a capability driftd did not declare)", true, "probe.checkInputRequired"},
	{DriftProtocolUnsupported, FamilyDrift, Error, "the server refused every revision driftd speaks; nothing compared", false, "probe.checkProtocolUnsupported"},
	{DriftLegacyServer, FamilyDrift, Info, "no server/discover; compared anyway, revision not claimed", false, "probe.checkLegacyServer"},
	{DriftPaginationCapped, FamilyDrift, Warn, "the page cap was reached on a list (tools, or with a kind prompts, resources or resource templates); that list's missing findings are suppressed", false, "probe.checkPaginationCapped"},
	{DriftBaselineReview, FamilyDrift, Error, "a baseline-mode target's baseline cannot be trusted: its state file was corrupt or written by a newer driftd, so nothing is compared and no baseline is recorded until an operator accepts the served surface's digest (docs/daemon.md#a-state-file-that-needs-review)", false, "probe.checkBaselineReview"},
	{DriftBaselineBounds, FamilyDrift, Error, "a baseline-mode target's served surface exceeds the bounds of a stored baseline (16 MiB as a canonical manifest, 4,096 levels of nesting), so no baseline is recorded from it and nothing is compared (docs/configuration.md#baseline-mode)", false, "probe.checkBaselineBounds"},

	{ConfCacheHints, FamilyConf, Warn, "a modern list page (tools/list, prompts/list, resources/list, resources/templates/list), or an invoked resources/read result (the finding then names the resource), lacks ttlMs/cacheScope, or they are invalid", false, "probe.checkCacheHints"},
	{ConfResultType, FamilyConf, Warn, "a modern result lacks resultType or carries an unknown one (one of an invoked prompts/get or resources/read names its prompt or resource)", false, "probe.checkResultType"},
	{ConfToolName, FamilyConf, Error, "a served tool has no usable name (missing, null, empty or not a string); one finding per such tool, at its position in the served list", false, "probe.checkToolName"},
	{ConfToolNameFormat, FamilyConf, Info, "a tool name is outside 1-128 characters of A-Za-z0-9_-. (a SHOULD)", true, "probe.checkToolNameFormat"},
	{ConfDuplicateTool, FamilyConf, Error, "two served tools share a name", true, "probe.checkDuplicateTool"},
	{ConfInputSchema, FamilyConf, Error, `inputSchema missing, not an object, or root type not "object"`, true, "probe.checkInputSchema"},
	{ConfSchemaInvalid, FamilyConf, Error, "an input or output schema does not compile as JSON Schema, or exceeds driftd's bounds", true, "probe.checkSchemasCompile"},
	{ConfToolsetVaries, FamilyConf, Error, "the tool set (with a kind: the prompt, resource or resource template set) differs on a second connection", false, "probe.checkToolsetStable"},
	{ConfOrderVaries, FamilyConf, Info, "the same tool (or prompt, resource, template) set came in a different order on a second connection", false, "probe.checkToolsetStable"},
	{ConfPaginationLoop, FamilyConf, Error, "a nextCursor repeated (in any list; the finding's kind says which)", false, "probe.checkPaginationLoop"},
	{ConfServerInfo, FamilyConf, Info, "no io.modelcontextprotocol/serverInfo in a modern result's _meta (a SHOULD)", false, "probe.checkServerInfo"},
	{ConfRedirect, FamilyConf, Error, "the endpoint answered with a redirect (never followed)", false, "probe.checkRedirect"},
	{ConfToolHeader, FamilyConf, Error, "a modern server's tool carries an invalid x-mcp-header annotation (empty, not a token, a case-insensitive duplicate, on a number or non-primitive, or reached through items/anyOf/$ref/…); clients must exclude it, and driftd never calls it", true, "probe.checkHeaderAnnotations"},
	{ConfListShape, FamilyConf, Error, "a served prompt, resource or resource template breaks its list's shape: not an object, name (a resource's uri, a template's uriTemplate) missing or not a string, title/description/mimeType not strings, arguments not an array of named objects, required not a boolean; one finding per item, at its position", false, "probe.checkListShape"},
	{ConfDuplicateItem, FamilyConf, Error, "two served prompts or resource templates share a name, or two resources a uri", true, "probe.checkDuplicateItem"},
	{ConfGetResultShape, FamilyConf, Error, `an invoked prompts/get result breaks GetPromptResult: "messages" missing or not an array, a message not an object, its role not "user" or "assistant", its content not an object with a "type" string, or a description that is not a string; positions and counts only, never returned text`, true, "probe.checkGetResult"},
	{ConfReadResultShape, FamilyConf, Error, `an invoked resources/read result breaks ReadResourceResult: "contents" missing or not an array, an item not an object, without a "uri" string, without exactly one of "text" (a string) and "blob" (a base64 string), or with a mimeType that is not a string; positions and counts only, never returned content`, true, "probe.checkReadResult"},

	{AuthAnonymousList, FamilyAuth, Warn, "tools/list succeeded without credentials (INFO local, WARN dev/staging/unknown, ERROR production)", false, "probe.checkAnonymousList"},
	{AuthEnforced, FamilyAuth, Info, "a request without credentials was refused with 401/403", false, "probe.checkRefusal"},
	{AuthNoChallenge, FamilyAuth, Warn, "a 401/403 came without a WWW-Authenticate challenge", false, "probe.checkRefusal"},
	{AuthIndeterminate, FamilyAuth, Warn, "the anonymous request neither listed tools nor was refused with 401/403", false, "probe.checkIndeterminate"},
	{AuthPlaintextTransport, FamilyAuth, Warn, "the endpoint is plain http:// on a non-local host (ERROR for production)", false, "probe.checkPlaintextTransport"},
	{AuthChallengeIncomplete, FamilyAuth, Warn, "a 401 challenge lacks resource_metadata (clients must guess the well-known paths) or a scope hint (a SHOULD); the finding names which (INFO local)", false, "probe.checkChallengeHints"},
	{AuthPRMMissing, FamilyAuth, Warn, "a server that refuses anonymous requests serves no protected resource metadata (RFC 9728) at the challenge's resource_metadata nor at either well-known path (INFO local, ERROR production)", false, "probe.checkPRM"},
	{AuthPRMInvalid, FamilyAuth, Warn, "the protected resource metadata is not a JSON object, its resource is not a string, or authorization_servers is missing, empty or not a list of http(s) URLs without query or fragment (INFO local, ERROR production)", false, "probe.checkPRM"},
	{AuthResourceMismatch, FamilyAuth, Warn, "the protected resource metadata's resource is not the server's canonical URI (same origin, its path the endpoint's path or a parent of it); clients must refuse it, and driftd fetches none of its authorization servers (INFO local, ERROR production)", false, "probe.checkPRM"},
	{AuthSurfaceNotFetched, FamilyAuth, Info, "a metadata URL the server handed out was not fetched: not same-origin with the endpoint, with user information, past the first two authorization servers or the run's 8 fetches, or the check's time ran out (docs/security.md#the-authorization-surface); that part of the surface is unchecked", false, "probe.checkNotFetched"},
	{AuthASMetadataMissing, FamilyAuth, Warn, "an authorization server listed in the protected resource metadata serves no well-formed metadata at any RFC 8414 or OpenID discovery path, in the spec's order (INFO local, ERROR production)", false, "probe.checkASMetadata"},
	{AuthIssuerMismatch, FamilyAuth, Warn, "an authorization server's metadata names an issuer other than the URL it was discovered for; clients must reject the document (INFO local, ERROR production)", false, "probe.checkASMetadata"},
	{AuthPKCES256Missing, FamilyAuth, Warn, "an authorization server's code_challenge_methods_supported is missing or lacks S256; MCP clients must refuse to proceed (INFO local, ERROR production)", false, "probe.checkASMetadata"},
	{AuthIssParameterMissing, FamilyAuth, Warn, "an authorization server does not advertise authorization_response_iss_parameter_supported: true (RFC 9207), the mix-up defence the 2026-07-28 revision has clients validate (INFO local)", false, "probe.checkASMetadata"},
	{AuthRegistrationMissing, FamilyAuth, Info, "an authorization server offers no registration path: neither registration_endpoint nor client_id_metadata_document_supported; clients need a pre-registration, which must be documented", false, "probe.checkASMetadata"},
	{AuthPlaintextEndpoint, FamilyAuth, Warn, "an authorization server's issuer or an endpoint its metadata names is plain http:// outside local classification (ERROR production)", false, "probe.checkASEndpoints"},

	{SecTagCharacters, FamilySec, Error, "a served text carries Unicode tag characters (U+E0000-U+E007F): invisible to a person, read by a model (ASCII smuggling)", true, "poison.detectors"},
	{SecInvisibleCharacters, FamilySec, Warn, "a served text carries zero-width, bidirectional-control or other invisible format characters (U+200B-U+200F, U+202A-U+202E, U+2060-U+2064, U+2066-U+2069, U+FEFF, U+180E, the soft hyphen U+00AD, U+034F, U+061C, Hangul and Khmer fillers, U+FFF9-U+FFFB; a joiner between emoji is allowed), or a word mixing Latin letters with Cyrillic or Greek look-alikes", true, "poison.detectors"},
	{SecTerminalEscape, FamilySec, Error, "a served text carries a terminal escape: ESC (U+001B) or a C1 control (U+0080-U+009F, CSI U+009B among them)", true, "poison.detectors"},
	{SecConfusableName, FamilySec, Error, "two served tools' names, or a served tool's and a declared tool's or a shadow_tools entry's it is not, are equal after confusable folding (the Unicode UTS #39 skeleton: Cyrillic/Greek look-alikes, fullwidth forms, rn/m, 0/O, 1/l, I/l; -/_, case, invisible characters dropped), or a served name is a declared or shadow_tools name with a character repeated, a separator added at an end or two adjacent letters swapped (a typo-squat), or is a shadow_tools name itself or with a word of salesmanship added (email_sender_service); the finding lands on the look-alike", true, "poison.confusable"},
	{SecModelInstruction, FamilySec, Warn, `a served text addresses the model: instruction-override phrasing ("ignore previous instructions"), concealment ("do not tell the user"), or tags and chat-template tokens (<IMPORTANT>, <system>, [INST], <|im_start|>)`, true, "poison.detectors"},
	{SecSecretLure, FamilySec, Warn, "a served text names a local secret file (~/.ssh, id_rsa, .env, .aws/credentials, /etc/passwd, ...) or asks to read, include or send credentials, keys, tokens, the system prompt or the conversation", true, "poison.detectors"},
	{SecEncodedBlob, FamilySec, Warn, "a served text carries an encoded blob: a run of at least 48 base64 characters mixing upper case, lower case and digits, or at least 80 hex digits", true, "poison.detectors"},
	{SecURL, FamilySec, Info, "a served description or title carries a URL (scheme://...); an inventory of where tool text points, not a defect", true, "poison.detectors"},
	{SecEmail, FamilySec, Info, "a served description or title carries an e-mail address; an inventory, not a defect", true, "poison.detectors"},
	{SecShadowing, FamilySec, Warn, "a served text names another served tool as the subject or object of directive phrasing (send_email must ..., always/never use send_email, instead of send_email, when calling send_email), or names another server's tool (shadow_tools) in a sentence with a condition or directive: an attempt to change how another tool is used", true, "poison.detectors"},
	{SecAnnotationClaim, FamilySec, Warn, "a tool's annotations say readOnlyHint: true while its name or the first verb of its description says it deletes, empties, changes, writes, moves, deploys, pays or the like, or its description says what it does cannot be undone: clients approve read-only calls more readily, so a false claim buys a changing call that approval", true, "poison.annotationClaim"},
	{SecDescriptionGrowth, FamilySec, Warn, "a served description is at least 4 times as long as the declared one and at least 512 bytes longer (sudden growth: room for hidden instructions)", true, "poison.Growth"},
}

var byID = func() map[string]Rule {
	m := make(map[string]Rule, len(Rules))
	for _, r := range Rules {
		m[r.ID] = r
	}
	return m
}()

// Lookup returns the rule with id.
func Lookup(id string) (Rule, bool) {
	r, ok := byID[id]
	return r, ok
}

// FamilyOf returns the family of a rule id by its prefix.
func FamilyOf(id string) Family {
	for _, f := range Families {
		if strings.HasPrefix(id, string(f)+"-") {
			return f
		}
	}
	return ""
}
