// Package poison holds driftd's tool-poisoning posture detectors (the
// MCP-SEC-* rules, docs/security.md): deterministic, offline checks over
// every server-controlled text of a served tool, prompt, resource or
// resource template. A finding cites the field, its JSON pointer, the
// detector and a byte offset and length, never the text: the text is what
// a hostile server chose, and no artifact may quote it.
package poison

import (
	"bytes"
	"regexp"
	"slices"
	"sync"

	"github.com/driftd/driftd/internal/catalogue"
)

// fieldMask says which texts a detector reads.
type fieldMask uint8

const (
	// fName: tool, prompt and argument names.
	fName fieldMask = 1 << iota
	// fProse: descriptions and titles (of definitions, prompt arguments
	// and schema nodes) and annotation strings.
	fProse
	// fValue: the strings inside a schema's default and examples.
	fValue

	// fWords: a name or a property name read as words: _, -, . and
	// inner capitals as spaces (scanNameWords), so a parameter called
	// ignore_previous_instructions reads as the phrase it is.
	fWords

	// fPreset: the strings of a schema's default and const, the values a
	// tool fills in when the model leaves them out.
	fPreset

	// fParam: a parameter's name (a property of an input schema), read
	// as words: what the model is asked to fill in.
	fParam

	fAll  = fName | fProse | fValue
	fText = fProse | fValue
)

// A detector is one row of the table: the rule it reports, what it is
// called in messages, the texts it reads, the cheap prefilter that decides
// whether it runs at all, and its matcher.
type detector struct {
	rule string
	what string
	// kind names the kind of pattern, for a rule with several rows.
	kind   string
	fields fieldMask
	// classes are byte classes (see scan.go) and words lower-case ASCII
	// words: the matcher runs on a text only when the one-pass scan saw
	// one of them. A clean text costs the scan and nothing else.
	classes byteClass
	words   []string
	// match is the matcher: rune classes, a regexp or a function.
	match matcher
}

// A matcher returns what it found in text.
type matcher func(text []byte, c *scanContext) match

// match is what a matcher found: the first match's byte offset and
// length, and the number of matches (0 for none, at most maxCount).
type match struct{ off, n, count int }

// maxCount bounds the matches a finding counts in one field.
const maxCount = 100

// detectors builds the table. Every text detector is a row here; the
// order is the order findings of one field are reported in.
func detectors() []*detector {
	return slices.Concat([]*detector{
		{rule: catalogue.SecTagCharacters, what: "Unicode tag characters", fields: fAll,
			classes: cHigh, match: runes(isTag)},
		{rule: catalogue.SecInvisibleCharacters, what: "zero-width or bidi-control characters", fields: fAll,
			classes: cHigh, match: invisibles},
		{rule: catalogue.SecInvisibleCharacters, what: "a word mixing Latin letters with Cyrillic or Greek look-alikes", kind: "mixed scripts", fields: fAll,
			classes: cHigh, match: mixed},
		{rule: catalogue.SecTerminalEscape, what: "a terminal escape", fields: fAll,
			classes: cHigh | cEsc, match: runes(isTerminal)},
	}, cueRows(catalogue.SecModelInstruction, fText|fWords), []*detector{
		{rule: catalogue.SecSecretLure, what: "a secret or local-file lure", kind: "a local secret file", fields: fText | fWords,
			words: []string{"cursor", "claude", "mcp", "history", "bash", "zsh", "ssh", "rsa", "dsa", "ecdsa", "ed25519", "env", "aws", "credentials", "passwd", "shadow", "netrc", "npmrc", "pgpass", "kube", "gnupg", "wallet", "docker", "config", "dotenv"},
			match: unlessRefused(pattern(`(?i)` +
				`~/\.(?:ssh|aws|gnupg|kube|docker|mcp|config/gcloud|config/gh/hosts\.ya?ml|netrc|npmrc|pgpass|git-credentials|cursor|claude|codeium|continue|bash_history|zsh_history)\b` +
				`|\bmcp\.json\b|\bclaude_desktop_config\.json\b|(?:^|[\s"'(/])\.(?:bash|zsh)_history\b` +
				`|\bid[_ ](?:rsa|dsa|ecdsa|ed25519)\b|\.aws/credentials\b|/etc/(?:passwd|shadow)\b|\.git-credentials\b|\bwallet\.dat\b` +
				`|(?:^|[\s"'(/])\.env(?:\.[a-z]+)?\b|\bdot[ _-]?env\s+files?\b` +
				`|(?:^|[\s"'(,])\.(?:ssh|aws|gnupg)\s+(?:and|or|,|director)` +
				`|\bread\b[^.\n]{0,30}?~/\.config/\S+[^.\n]{0,60}?\b(?:token|key|password|secret)s?\b`))},
		// Not read in names: a parameter called include_api_key is a
		// switch, not a lure. A conversation is private when the text
		// wants all of it ("the whole conversation", "conversation
		// history"): "read the file once in the conversation" is not.
		{rule: catalogue.SecSecretLure, what: "a secret or local-file lure", kind: "a data-moving verb next to a secret", fields: fText,
			words: []string{"key", "keys", "token", "tokens", "password", "passwords", "secret", "secrets", "credentials", "cookie", "cookies", "prompt", "conversation", "history", "variables", "card", "cvv", "phrase", "chat", "home", "passport", "birth", "authorization"},
			match: described(except(ownOutput, pattern(`(?i)`+
				`\b(?:read|include|send|pass|attach|append|copy|extract|forward|upload|output|print|leak|exfiltrate|collect|embed|put|paste|place|insert|dump)\b[^.\n]{0,60}?\b`+secretNouns+
				`|\bset\s+(?:it\s+)?to\s+[^.\n]{0,40}?\b`+secretNouns+
				`|\b(?:add|append|attach|include|put)\b[^.\n]{0,30}?\b(?:(?:whole|full|entire|complete)\s+(?:conversation|chat)|(?:chat|conversation)\s+history)\b`+
				`|\byour\s+system[ _-]prompt\b|\b(?:show|display|reveal|print|paste|leak)\s+(?:the\s+|your\s+)?(?:full|whole|entire|complete|raw|unmasked)\s+(?:\w+\s+)?(?:tokens?|passwords?|secrets?|credentials|api\s+keys?)\b`+
				`|\bwith\s+the\s+user'?s\s+(?:full\s+)?(?:card\s+number|credit\s+card(?:\s+number)?|cvv|seed\s+phrase|recovery\s+phrase|social\s+security\s+number)`)))},
		// A harvest of what the conversation holds: every earlier
		// message, everything the user writes, every id the model has
		// seen, what it can collect from the chat or the user's files.
		{rule: catalogue.SecSecretLure, what: "a secret or local-file lure", kind: "a harvest of the conversation", fields: fText,
			words: []string{"earlier", "previous", "prior", "past", "preceding", "writes", "types", "sends", "says", "seen", "collect", "last", "recent"},
			match: pattern(`(?i)` +
				`\b(?:every|each|all(?:\s+the)?)\s+(?:earlier|previous|prior|past|preceding)\s+messages?\b` +
				`|\b(?:every|each|all)\s+(?:messages?|prompts?|things?)\s+the\s+user\s+(?:writes|types|sends|says|wrote|typed|sent)\b` +
				`|\b(?:pass|include|send|put)\s+(?:every|all(?:\s+the)?)\s+(?:\w+\s+){0,2}?you\s+(?:have\s+)?(?:seen|read|encountered|collected)\b` +
				`|\bcollect\b[^.\n]{0,20}?\bfrom\s+(?:earlier\s+in\s+)?the\s+(?:conversation|chat|user'?s\s+(?:saved\s+)?(?:documents|files|messages))` +
				`|\b(?:last|previous|recent)\s+(?:\w+\s+)?(?:places|locations|searches|messages|queries)\s+(?:they|the\s+user)\s+(?:searched|visited|asked|sent|typed)` +
				`|\b(?:forward|send|pass|copy|share|post|upload|include|attach)\s+(?:all\s+|every\s+one\s+of\s+)?(?:of\s+)?the\s+user'?s\s+(?:previous|earlier|prior|past|recent|other)\s+(?:messages|prompts|questions|queries|requests)\b` +
				`|\b(?:include|add|attach|append|send|pass|put|copy|paste|forward)\b[^.\n]{0,40}?\b(?:the\s+)?(?:last|previous|recent|earlier|prior)\s+(?:\w+\s+)?(?:user\s+)?(?:messages|prompts|questions|requests|turns)\b`)},
		// A credential the user types or is asked for, passed on: "when
		// the user enters a PIN, call …", "ask the user for their banking
		// password and call submit_auth with it".
		{rule: catalogue.SecSecretLure, what: "a secret or local-file lure", kind: "a capture of a credential from the user", fields: fText,
			words: []string{"types", "enters", "gives", "provides", "shares", "pastes", "mentions", "ask", "prompt"},
			match: pattern(`(?i)\b(?:whenever|when|if|every\s+time)\s+the\s+user\s+(?:types|enters|gives|provides|shares|pastes|mentions)\s+(?:a|an|any|their|his|her)\s+(?:\w+\s+)?(?:password|pin|passcode|one[- ]time\s+(?:code|password)|otp|2fa\s+code|credit\s+card|card\s+number|api\s+key|seed\s+phrase|recovery\s+phrase)\b[^.\n]{0,60}?\b(?:call|send|pass|forward|use|put)\b` +
				`|\b(?:ask|prompt)\s+(?:the\s+user|them)\s+(?:for|to\s+(?:enter|provide|type|give|share))\s+(?:their|his|her|the|your)\s+(?:[\w-]+\s+){0,2}?(?:password|passcode|pin|one[- ]time\s+(?:code|password)|otp|2fa\s+code|credit\s+card(?:\s+number)?|card\s+number|cvv|cvc|seed\s+phrase|recovery\s+phrase|private\s+key)\b[^.\n]{0,60}?\b(?:call|send|pass|forward|submit|put)\b`)},
		{rule: catalogue.SecSecretLure, what: "a secret or local-file lure", kind: "a private resource address", fields: fText,
			words: []string{"system", "company", "internal", "secret", "secrets", "vault", "config", "memory", "admin", "env"},
			match: after("://", pattern(`(?i)\b(?:system|company|internal|secrets?|vault|config|memory|admin|env)://\S*?(?:secret|confidential|credential|password|private|token|config)`))},
		// A name read as words: a move of a secret ("read_private_key_and_
		// paste_here") or a secret from a source ("aws_secret_access_key_
		// from_env"); not a switch such as include_api_key.
		{rule: catalogue.SecSecretLure, what: "a secret or local-file lure", kind: "a secret named in a name", fields: fWords,
			words: []string{"private", "secret", "ssh", "password", "passwords", "credentials", "token", "tokens", "api", "key", "keys", "chat", "conversation", "history", "dotenv"},
			match: pattern(`(?i)\b(?:read|reading|paste|send|upload|forward|attach|extract|leak|exfiltrate|steal|dump|copy)\b.{0,30}?\b` + secretNouns +
				// The contents of a secret, asked for by name
				// (include_full_text_of_dotenv_and_aws_credentials).
				`|\b(?:full\s+|whole\s+|raw\s+)?(?:text|contents?|body)\s+of\s+(?:the\s+|all\s+|your\s+)?(?:\w+\s+){0,3}?(?:dotenv|env\s+files?|credentials|private\s+keys?|ssh\s+keys?|secrets?|passwords?|tokens?|id\s+rsa)\b` +
				`|\b(?:secret\s+access\s+keys?|private\s+keys?|ssh\s+keys?|api\s+keys?|passwords?|credentials|access\s+tokens?)\s+from\s+(?:the\s+)?(?:env|environment|disk|keychain|config|dotenv)\b`)},
		// Spanish, French and German: a verb that moves data next to a
		// secret.
		{rule: catalogue.SecSecretLure, what: "a secret or local-file lure", kind: "a data-moving verb next to a secret, Spanish, French or German", fields: fText,
			classes: cHigh, words: []string{"claves", "clave", "credenciales", "entorno", "passe", "identifiants", "environnement", "passwort", "zugangsdaten", "incluye", "incluya", "lee", "pega", "copia", "adjunta", "inclus", "envoie", "colle", "copie", "ajoute", "sende", "lies", "kopiere", "contenir", "inclure", "compris", "joindre", "transmettre", "incluir", "enviar"},
			match: pattern(`(?i)\b(?:incluye|incluya|incluir|env[ií]a|enviar|lee|pega|copia|adjunta|a[ñn]ade|inclus|inclure|contenir|contient|y\s+compris|joindre|transmettre|envoie|lis|colle|copie|joins|ajoute|f[üu]ge|sende|lies|kopiere|h[äa]nge)\b[^.\n]{0,60}?(?:claves?\s+de\s+(?:la\s+)?api|contrase[ñn]as?|credenciales|variables\s+de\s+entorno|tokens?\s+de\s+acceso|cl[ée]s?\s+(?:d['’])?api|mots?\s+de\s+passe|identifiants|variables\s+d['’]environnement|api[- ]schl[üu]ssel|passw(?:ö|oe)rter|passwort|zugangsdaten|umgebungsvariablen)`)},
		// "Your system prompt" in other languages: what English says with
		// your system prompt.
		{rule: catalogue.SecSecretLure, what: "a secret or local-file lure", kind: "the model's system prompt, in another language", fields: fText,
			words: []string{"prompt", "systemprompt", "systeemprompt", "instrucciones", "instructions"},
			match: pattern(`(?i)\b(?:tu|su)\s+(?:prompt|instrucciones)\s+(?:del|de)\s+sistema\b` +
				`|\b(?:ton|votre)\s+(?:prompt|invite)\s+syst[èe]me\b` +
				`|\b(?:dein(?:en)?|ihr(?:en)?)\s+system[- ]?prompt\b` +
				`|\b(?:seu|teu)\s+prompt\s+do\s+sistema\b|\b(?:il\s+)?tuo\s+prompt\s+di\s+sistema\b` +
				`|\b(?:je|uw)\s+systeemprompt\b|\b(?:sw[óo]j|tw[óo]j)\s+(?:\S+\s+)?prompt\s+systemowy\b`)},
		// A harvest beyond what the tool is for: the process environment
		// with its secrets, every identifier anywhere in a workspace, a
		// walk of the whole file system, private data pasted somewhere
		// public, the user's secrets from their browser's stores. Each
		// asks for more than any one call of an honest tool needs, and is
		// phrased as a feature ("batch mode", "supports recursion", "for
		// reproducibility", "billing also needs").
		{rule: catalogue.SecSecretLure, what: "a secret or local-file lure", kind: "a harvest beyond the tool's purpose", fields: fText,
			words: []string{"environment", "env", "anywhere", "walk", "crawl", "traverse", "recurse", "public", "browser"},
			match: pattern(`(?i)` +
				// "The user's session cookie, copied from the browser's
				// cookie store", "their card number: read it from the
				// browser's autofill data". A browser tool's own cookies
				// are not the user's.
				`\b(?:user'?s|their)\b[^.\n]{0,60}?\bfrom\s+(?:the\s+)?(?:user'?s\s+|their\s+)?browser'?s?\s+(?:cookie\s+(?:store|jar)|autofill|saved\s+(?:passwords|cards|logins)|password\s+manager|keychain|local\s+storage)|` +
				`\b(?:embeds?|dumps?|includes?|attach(?:es)?|copies|sends?|uploads?|prints?|exports?)\s+(?:the\s+|all\s+|every\s+|its\s+)?(?:whole\s+|full\s+|entire\s+)?(?:process\s+|shell\s+|server'?s?\s+|system\s+)?(?:environment|env)(?:\s+variables)?\b[^.\n]{0,30}?\b(?:api\s+keys?|tokens?|secrets?|credentials|passwords?)\b` +
				`|\b(?:list|enumerate|collect|gather|pass|include|put|supply|send|give)\s+(?:all|every|each)\s+(?:of\s+)?(?:the\s+)?(?:[\w-]+\s+){0,2}?(?:that\s+|which\s+)?(?:appears?|occurs?|exists?|is\s+found|are\s+found|you\s+can\s+find)\s+anywhere\b` +
				`|\b(?:start|begin)\s+(?:at|from|in)\s+(?:/|~|the\s+(?:filesystem|file\s+system|disk)\s+root|the\s+root\s+(?:directory|of\s+the\s+(?:disk|file\s*system))|the\s+home\s+directory)\s*,?\s*and\s+(?:walk|crawl|traverse|recurse|scan|read|list)\b` +
				`|\b(?:walk|crawl|traverse)\s+(?:through\s+)?(?:every|each|all)\s+(?:the\s+)?(?:directory|directories|folders?)\b[^.\n]{0,60}?\b(?:hidden|contents?\s+of\s+(?:each|every|all))\b` +
				`|\b(?:paste|copy|dump|put|include|insert|append|attach|post|write)\b[^.\n]{0,80}?\b(?:private|secrets?|tokens?|credentials|passwords?|keys|every\s+row|all\s+rows|each\s+row)\b[^.\n]{0,80}?\b(?:into|in|to|on|as)\s+(?:a\s+|an\s+|the\s+)?(?:new\s+)?public\b`)},
		// A recipient preset: an e-mail address as a parameter's default
		// or const, where a tool that sends picks it up whenever the
		// model leaves the field out (a cc that copies every report).
		{rule: catalogue.SecModelInstruction, what: "a preset recipient", kind: "an e-mail address as a default or const", fields: fPreset,
			classes: cAt, match: after("@", pattern(`\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b`))},
		{rule: catalogue.SecEncodedBlob, what: "an encoded blob", fields: fText,
			classes: cBlob, match: blobs},
		{rule: catalogue.SecURL, what: "a URL", fields: fProse,
			words: []string{"http", "https", "ftp", "ftps", "sftp", "file", "wss", "git", "ssh", "smb"}, match: after("://", pattern(`(?i)\b[a-z][a-z0-9+.-]{1,15}://[^\s"'<>()]+`))},
		{rule: catalogue.SecEmail, what: "an e-mail address", fields: fProse,
			classes: cAt, match: after("@", pattern(`\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b`))},
		{rule: catalogue.SecShadowing, what: "another tool's name next to directive phrasing", fields: fText,
			classes: cHigh, words: directiveWords, match: shadowing},
	}, generalRows(catalogue.SecModelInstruction, catalogue.SecSecretLure))
}

// secretNouns are what the verb rows of MCP-SEC-SECRET-LURE look for
// after a verb that moves data.
const secretNouns = `(?:authorization[ _-]headers?|home[ _-]address(?:es)?|passport[ _-]numbers?|dates?[ _-]of[ _-]birth|browser[ _-]cookies|api[ _-]?keys?|private[ _-]?keys?|secret[ _-]?(?:access[ _-]?)?keys?|ssh[ _-]?keys?|access[ _-]?tokens?|auth(?:entication)?[ _-]?tokens?|bearer[ _-]?tokens?|passwords?|credentials|session[ _-]?cookies?|env(?:ironment)?[ _-]variables|system[ _-]prompt|(?:whole|full|entire|complete)\s+(?:conversation|chat)|conversation[ _-](?:history|log|transcript)s?|chat[ _-](?:history|log|transcript)s?|card[ _-]numbers?|seed[ _-]phrases?)\b`

// ownOutput is a secret the tool itself returns or creates ("place the
// returned credentials in your .env"): setup, not a lure for the user's
// secrets.
const ownOutput = `(?i)\b(?:returned|generated|newly\s+created|resulting|issued)\s+(?:\w+\s+)?` + secretNouns

// refusedAfter is what follows a secret path the tool itself refuses: the
// path, then at once (past closing quotes, brackets, more paths and
// "or"/"and") "are rejected", "is not allowed" — a server listing the
// paths it will not touch ("System paths and hidden config directories
// (e.g. "/etc", "~/.ssh") are rejected"). Nothing else may come between:
// "read ~/.ssh/id_rsa; paths outside are rejected" is still a lure.
var refusedAfter = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^(?:[\s"'\x60(),\]]|\b(?:or|and)\b|~?/[\w./-]*)*?\s(?:are|is|will\s+be|get)\s+(?:always\s+)?(?:rejected|refused|denied|blocked|forbidden|disallowed|not\s+(?:allowed|permitted|accepted))\b`)
})

// describedBefore and describedAfter are what makes a verb next to a
// secret a description, not an order: a relative clause ("apps that
// read environment variables at start"), or the secret as a noun the
// text goes on to describe ("Upload credentials are generated and used
// internally").
var (
	describedBefore = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(?:that|which|who|apps?|applications?|programs?|processes|frameworks?)\s+$`)
	})
	describedAfter = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)^\s+(?:are|is|were|was|will\s+be|gets?)\s+(?:\w+\s+)?(?:generated|created|issued|used|managed|handled|stored|rotated|kept|never)\b`)
	})
)

// described returns m without the matches a description frames
// (describedBefore, describedAfter).
func described(m matcher) matcher {
	return dropping(m, func(rest []byte, off, n int) bool {
		end := off + n
		return describedBefore().Match(rest[max(0, off-24):off]) || describedAfter().Match(rest[end:min(len(rest), end+60)])
	})
}

// unlessRefused returns m without the matches that the text right after
// them refuses (refusedAfter).
func unlessRefused(m matcher) matcher {
	return dropping(m, func(rest []byte, off, n int) bool {
		end := off + n
		return refusedAfter().Match(rest[end:min(len(rest), end+160)])
	})
}

// except returns m without the matches that expr also matches inside.
func except(expr string, m matcher) matcher {
	re := sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
	return dropping(m, func(rest []byte, off, n int) bool { return re().Match(rest[off : off+n]) })
}

// dropping returns m without the matches drop drops; drop is given the
// text a match was found in and the match's offset and length there.
func dropping(m matcher, drop func(rest []byte, off, n int) bool) matcher {
	return func(text []byte, c *scanContext) match {
		var out match
		for rest, base := text, 0; len(rest) > 0 && out.count < maxCount; {
			f := m(rest, c)
			if f.count == 0 {
				break
			}
			if !drop(rest, f.off, f.n) {
				if out.count == 0 {
					out.off, out.n = base+f.off, f.n
				}
				out.count++
			}
			adv := f.off + max(f.n, 1)
			rest, base = rest[adv:], base+adv
		}
		return out
	}
}

// table is the detector table, built once; its regexps compile on first
// use.
var table = detectors()

// after returns m behind a cheaper test: text must contain needle.
func after(needle string, m matcher) matcher {
	return func(text []byte, c *scanContext) match {
		if !bytes.Contains(text, []byte(needle)) {
			return match{}
		}
		return m(text, c)
	}
}

// pattern returns a matcher for a regexp compiled on first use.
func pattern(expr string) matcher {
	re := sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
	return func(text []byte, _ *scanContext) match {
		all := re().FindAllIndex(text, maxCount)
		if len(all) == 0 {
			return match{}
		}
		return match{off: all[0][0], n: all[0][1] - all[0][0], count: len(all)}
	}
}
