package poison

import (
	"bytes"
	"regexp"
	"sync"
	"unicode/utf8"
)

// byteClass is a set of classes of bytes the one-pass scan looks for.
type byteClass uint16

const (
	cWord      byteClass = 1 << iota // A-Z a-z 0-9: words
	cBlob                            // the base64 and hex alphabets: A-Z a-z 0-9 + / = - _
	cHigh                            // a byte of a non-ASCII rune
	cEsc                             // ESC, 0x1b
	cAngle                           // <: tags and chat-template tokens
	cBackslash                       // \ of a JSON escape
	cAt                              // @ of an e-mail address
	// cLongRun is no byte's class: the scan sets it when a run of cBlob
	// bytes is long enough to be an encoded blob.
	cLongRun
	// cLongBlank is no byte's class either: a run of at least
	// minBlankRun spaces, tabs and line breaks (escaped ones in JSON),
	// past which text is out of a reader's sight.
	cLongBlank
)

var classes = func() (t [256]byteClass) {
	for c := 'A'; c <= 'Z'; c++ {
		t[c], t[c+'a'-'A'] = cWord|cBlob, cWord|cBlob
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = cWord | cBlob
	}
	for _, c := range "+/=-_" {
		t[c] = cBlob
	}
	for c := 0x80; c < 0x100; c++ {
		t[c] = cHigh
	}
	t[0x1b], t['<'], t['\\'], t['@'] = cEsc, cAngle, cBackslash, cAt
	return t
}()

// The words the prefilter knows are hashed as they are read; a word whose
// hash is in the bloom bits is looked up in wordRows, which holds the
// table rows (by index) it triggers. A hash collision only runs a matcher
// that then finds nothing.
const (
	minWord, maxWord = 3, 16
	bloomBits        = 4096
)

type wordIndex struct {
	bloom [bloomBits / 64]uint64
	rows  map[uint32]rowSet
	// words is the rows that read names as words (fWords): the only rows
	// a camel-case word's parts trigger. readOnlyHint is not "only".
	words rowSet
}

// maxRows is how many rows the detector table may hold: a rowSet's bits.
const maxRows = 128

// A rowSet is a set of table rows, by index.
type rowSet [maxRows / 64]uint64

func (r rowSet) has(i int) bool      { return r[i/64]&(1<<(i%64)) != 0 }
func (r *rowSet) add(i int)          { r[i/64] |= 1 << (i % 64) }
func (r rowSet) or(o rowSet) rowSet  { return rowSet{r[0] | o[0], r[1] | o[1]} }
func (r rowSet) and(o rowSet) rowSet { return rowSet{r[0] & o[0], r[1] & o[1]} }
func (r rowSet) empty() bool         { return r[0]|r[1] == 0 }

// check adds to rows the rows a word of hash h and length l triggers.
func (w *wordIndex) check(h uint32, l int, rows rowSet) rowSet {
	if l >= minWord && l <= maxWord && w.bloom[h%bloomBits/64]&(1<<(h%64)) != 0 {
		rows = rows.or(w.rows[h])
	}
	return rows
}

var words = sync.OnceValue(func() *wordIndex {
	if len(table) > maxRows {
		panic("poison: more detector rows than a rowSet holds")
	}
	w := &wordIndex{rows: map[uint32]rowSet{}}
	for i, d := range table {
		for _, word := range d.words {
			var h uint32
			for j := 0; j < len(word); j++ {
				h = h*31 + uint32(word[j]|0x20)
			}
			w.bloom[h%bloomBits/64] |= 1 << (h % 64)
			r := w.rows[h]
			r.add(i)
			w.rows[h] = r
		}
		if d.fields&fWords != 0 {
			w.words.add(i)
		}
	}
	return w
})

// blob thresholds: a base64 run mixing upper case, lower case and digits,
// or a hex run. A SHA-256 in hex is 64 digits and stays under the hex bar.
const (
	minBase64Run = 48
	minHexRun    = 80
)

// scanContext is what a text's matchers may read besides the text: the
// identifier-like names of the served tools (false) and of other servers'
// tools (true), for shadowing, and the name of the definition being
// scanned.
type scanContext struct {
	names map[string]bool
	self  string
}

// prefilter reads text once, classifying bytes and hashing words: the
// classes seen and the table rows whose trigger words were seen. A
// camel-case word is also read as its parts (ignoreAllRules: ignore,
// all, rules) for the rows that read names as words, so a name written
// that way meets the trigger words a phrase would. In JSON text (raw),
// the letter of an escape is no part of a word: "\nIgnore" holds the
// word "ignore", as the decoded text does.
func prefilter(text []byte, raw bool) (seen byteClass, rows rowSet) {
	var h, hs uint32
	wl, sl, run, blank := 0, 0, 0, 0
	lower, esc := false, false
	w := words()
	for _, b := range text {
		k := classes[b]
		seen |= k
		if k&cWord != 0 { // most bytes: one branch
			if esc { // \n, \t, \u…: the escape's letter starts no word
				esc = false
				run++
				if b == 'n' || b == 't' || b == 'r' {
					if blank++; blank >= minBlankRun {
						seen |= cLongBlank
					}
				} else {
					blank = 0
				}
				continue
			}
			blank = 0
			if lower && b <= 'Z' && b >= 'A' { // a camel-case boundary
				rows = rows.or(w.check(hs, sl, rowSet{}).and(w.words))
				hs, sl = 0, 0
			}
			h = h*31 + uint32(b|0x20)
			hs = hs*31 + uint32(b|0x20)
			lower = b >= 'a'
			wl++
			sl++
			run++
			continue
		}
		if wl != 0 {
			rows = w.check(h, wl, rows)
			if sl != wl {
				rows = rows.or(w.check(hs, sl, rowSet{}).and(w.words))
			}
			h, hs, wl, sl, lower = 0, 0, 0, 0, false
		}
		if raw && b == '\\' {
			esc = !esc // \\ is an escaped backslash, not an escape
		} else {
			esc = false
		}
		switch {
		case b == ' ' || b == '\t' || b == '\n' || b == '\r':
			if blank++; blank >= minBlankRun {
				seen |= cLongBlank
			}
		case b != '\\':
			blank = 0
		}
		if k&cBlob != 0 {
			run++
		} else {
			if run >= minBase64Run {
				seen |= cLongRun
			}
			run = 0
		}
	}
	if wl != 0 {
		rows = w.check(h, wl, rows)
		if sl != wl {
			rows = rows.or(w.check(hs, sl, rowSet{}).and(w.words))
		}
	}
	if run >= minBase64Run {
		seen |= cLongRun
	}
	return seen, rows
}

// rawTriggers are the classes that send a whole definition's JSON to the
// field walk: any of them, a \u escape (which may decode to anything) or
// a trigger word. JSON's own syntax is none of them.
const rawTriggers = cHigh | cEsc | cAngle | cAt | cLongRun | cLongBlank

// mayMatch reports whether the JSON text of a whole definition may hold a
// text some detector matches: the prefilter over raw. A definition for
// which it is false is clean, and costs this one pass.
func mayMatch(raw []byte) bool {
	seen, rows := prefilter(raw, true)
	return seen&rawTriggers != 0 || !rows.empty() || seen&cBackslash != 0 && bytes.Contains(raw, []byte(`\u`))
}

// scan runs, over one decoded text, the matchers of the table rows that
// read fields and whose prefilter the text met. hit is called for each
// row that matched, in table order.
func (c *scanContext) scan(text []byte, fields fieldMask, hit func(d *detector, m match)) {
	seen, rows := prefilter(text, false)
	if seen&^(cWord|cBlob) == 0 && rows.empty() {
		return // the common case: plain text
	}
	for i, d := range table {
		if d.fields&fields == 0 || (seen&d.classes == 0 && !rows.has(i)) {
			continue
		}
		if m := d.match(text, c); m.count > 0 {
			hit(d, m)
		}
	}
}

// runes returns a matcher for the runes is holds for: the first run of
// them (offset and byte length) and how many there are.
func runes(is func(r rune) bool) matcher {
	return func(text []byte, _ *scanContext) match {
		off, n, count, inRun := 0, 0, 0, false
		for i := 0; i < len(text); {
			r, size := utf8.DecodeRune(text[i:])
			switch {
			case is(r):
				if count == 0 {
					off, inRun = i, true
				}
				if inRun {
					n += size
				}
				count++
			default:
				inRun = false
			}
			i += size
		}
		return match{off: off, n: n, count: min(count, maxCount)}
	}
}

func isTag(r rune) bool { return r >= 0xE0000 && r <= 0xE007F }

func isTerminal(r rune) bool { return r == 0x1b || r >= 0x80 && r <= 0x9f }

// isInvisible reports the zero-width, bidi-control and other invisible
// format characters of MCP-SEC-INVISIBLE-CHARACTERS.
func isInvisible(r rune) bool {
	switch {
	case r >= 0x200B && r <= 0x200F, r >= 0x202A && r <= 0x202E, r >= 0x2060 && r <= 0x2064,
		r >= 0x2066 && r <= 0x2069, r == 0xFEFF, r == 0x180E,
		// The soft hyphen (shown only where a line breaks: it splits a
		// word for a filter and not for a model), the combining grapheme
		// joiner, the Arabic letter mark, the Hangul and Khmer fillers
		// and the interlinear annotation marks.
		r == 0x00AD, r == 0x034F, r == 0x061C, r == 0x115F, r == 0x1160, r == 0x17B4, r == 0x17B5,
		r == 0x3164, r == 0xFFA0, r >= 0xFFF9 && r <= 0xFFFB,
		// The supplementary variation selectors: beside a CJK ideograph
		// they pick a glyph; strung after an emoji they carry a byte each
		// ("emoji smuggling").
		r >= 0xE0100 && r <= 0xE01EF:
		return true
	}
	return false
}

// joinerOK holds the invisible characters that are ordinary after a
// non-ASCII rune: a joiner inside an emoji sequence or an Indic or Persian
// word, a direction mark inside Hebrew or Arabic text.
func joinerOK(r rune) bool { return r == 0x200C || r == 0x200D || r == 0x200E || r == 0x200F }

// invisibles is runes(isInvisible), except that a joiner or direction
// mark right after a non-ASCII, non-invisible rune is not counted.
func invisibles(text []byte, _ *scanContext) match {
	off, n, count, inRun := 0, 0, 0, false
	prev := rune(0)
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRune(text[i:])
		if isInvisible(r) && !(joinerOK(r) && prev >= 0x300 && !isInvisible(prev)) {
			if count == 0 {
				off, inRun = i, true
			}
			if inRun {
				n += size
			}
			count++
		} else {
			inRun = false
		}
		prev = r
		i += size
	}
	return match{off: off, n: n, count: min(count, maxCount)}
}

// blobs finds runs of the base64 alphabet at least minBase64Run long that
// mix upper case, lower case and digits, and runs of hex digits at least
// minHexRun long.
func blobs(text []byte, _ *scanContext) match {
	off, n, count := 0, 0, 0
	for i := 0; i < len(text); {
		if classes[text[i]]&cBlob == 0 {
			i++
			continue
		}
		j, upper, lower, digit, hex := i, false, false, false, true
		for ; j < len(text) && classes[text[j]]&cBlob != 0; j++ {
			c := text[j]
			upper = upper || c >= 'A' && c <= 'Z'
			lower = lower || c >= 'a' && c <= 'z'
			digit = digit || c >= '0' && c <= '9'
			hex = hex && (c >= '0' && c <= '9' || c|0x20 >= 'a' && c|0x20 <= 'f')
		}
		if l := j - i; l >= minHexRun && hex || l >= minBase64Run && upper && lower && digit {
			if count == 0 {
				off, n = i, l
			}
			if count++; count == maxCount {
				break
			}
		}
		i = j
	}
	return match{off: off, n: n, count: count}
}

// directiveWords trigger the shadowing matcher. It then requires
// directive phrasing right next to another tool's name: the name as the
// subject of a directive ("send_email must …", "send_email should always
// …"), as the subject of a sleeper's condition ("when send_email is
// invoked"), or as its object ("always use send_email", "do not call
// send_email", "instead of send_email", "when calling send_email"). A
// name merely cited near a "must" ("the id must come from list_ids") is
// an ordinary cross-reference.
var (
	directiveWords = []string{"must", "should", "shall", "always", "never", "instead", "rather", "when", "whenever", "before", "after", "don", "not", "only", "invoked", "called", "triggered", "executed", "requires", "instructs",
		"deve", "devem", "debe", "deben", "doit", "doivent", "muss", "soll", "moet", "musi", "powinien", "powinno",
		// elsewhere's, for another server's tool.
		"once", "runs", "run", "prefer", "preferred", "add", "set", "change", "replace", "include", "copy", "send", "pass", "forward", "share", "upload", "post", "save", "export", "bcc", "redirect", "each", "every",
		"quando", "cuando", "quand", "lorsque", "wenn", "sobald", "wanneer", "zodra", "kiedy", "gdy", "siempre", "sempre", "toujours", "immer", "altijd"}
	// directiveAfter: the name as the subject of a directive, in English
	// or with the modal verb of another language ("a ferramenta
	// send_message do servidor Slack deve também …", "X doit …", "X
	// muss …"), the name's server named between them.
	directiveAfter = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)^[` + "`" + `'"]?(?:\s+tool)?\s+(?:must|should|shall|always|never|will\s+(?:always|now)|needs?\s+to|has\s+to|is\s+(?:deprecated|disabled|broken|unsafe))\b` +
			`|^[` + "`" + `'"]?(?:\s+(?:do|da|dos|das|del|de|du|des|von|vom|der|van|della|di)(?:\s+\S+){1,3})?\s+(?:deve|devem|debe|deben|doit|doivent|muss|m[üu]ssen|soll|sollen|moet|moeten|devono|musi|powinien|powinno|powinna)\b`)
	})
	// cjkSleeperAfter: the name as the subject of its own call in
	// Japanese, Chinese or Korean, where the condition follows the name
	// ("send_email を使うときは", "send_email 被调用时", "send_email을
	// 사용할 때"), then a directive in the same sentence, as an English
	// sleeper needs one after its comma.
	cjkSleeperAfter = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[` + "`" + `'"]?\s*(?:ツール\s*)?(?:を|が)\s*(?:使う|使用する|使用される|呼び出す|呼び出される|呼ばれる|実行する|実行される)(?:とき|時|際|場合|前|たび)[^。\n]{0,80}?(?:ください|こと|必ず|しなさい|せよ)` +
			`|^[` + "`" + `'"]?\s*(?:工具\s*)?被?\s*(?:调用|使用|执行)(?:时|之前|之后|后)[^。\n]{0,60}?(?:必须|务必|应该|请|一定要|总是)` +
			`|^[` + "`" + `'"]?\s*(?:도구\s*)?(?:을|를|이|가)?\s*(?:사용할|호출할|실행할|사용하기|호출하기)\s*(?:때|전)[^.\n]{0,80}?(?:하세요|하십시오|십시오|해야|반드시|하라)`)
	})
	directiveBefore = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)(?:\b(?:must|should|always|never|only|do\s+not|don'?t|must\s+not)\s+(?:use|call|invoke|run|trust)|\b(?:requires?|asks?|tells?|instructs?)\s+(?:you|the\s+(?:assistant|model|agent))\s+to\s+(?:use|call|invoke|run)|\binstead\s+of(?:\s+using|\s+calling)?|\brather\s+than(?:\s+using|\s+calling)?)\s+(?:the\s+)?[` + "`" + `'"]?$`)
	})
	// temporalBefore: the name as the object of a condition ("when
	// calling send_email", "after using X"). About another server's
	// tool it is a directive; about the server's own, the order of its
	// own workflow ("Poll after calling use_template").
	temporalBefore = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(?:when(?:ever)?|before|after|each\s+time)\s+(?:you\s+)?(?:use|using|call|calling|invoke|invoking|run|running)\s+(?:the\s+)?[` + "`" + `'"]?$`)
	})
)

// A sleeper names another tool as the subject of its own call and then
// directs the model: "when send_message is invoked, change …", "each
// time `transfer_funds` gets called, also …". "When create_issue is
// called with a template, labels are copied" is a cross-reference.
var (
	sleeperBefore = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(?:when|whenever|each\s+time|every\s+time)\s+(?:the\s+)?[` + "`" + `'"]?$`)
	})
	sleeperAfter = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)^[` + "`" + `'"]?(?:\s+tool)?\s+(?:is|gets|has\s+been)\s+(?:invoked|called|used|run|executed|triggered)\s*,\s*` +
			`(?:you\s+|the\s+(?:assistant|model|agent)\s+)?(?:must|should|always|also|first|instead|make\s+sure|ensure|change|replace|set|add|send|include|redirect|forward|copy|bcc|do\s+not|never)\b`)
	})
)

// A precondition says what one of the server's own tools must have
// answered before this one is called ("get_audio_status must report
// ready"): a state, not a directive.
var precondition = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^[` + "`" + `'"]?(?:\s+tool)?\s+must\s+(?:first\s+)?(?:report|return|be|have|show|succeed|complete|exist|contain|match|finish)\b`)
})

// A prerequisite names the tool to call first ("you must call
// 'resolve-library-id' first to obtain the ID"): a workflow, not a
// directive about the other tool.
var prerequisite = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^[` + "`" + `'"]?(?:\s+tool)?\s+(?:first|beforehand)\b`)
})

// purpose scopes a directive about a tool to one task ("… X or other
// tools to apply the changes", "… X for migrations", "you MUST use
// get_next_task to retrieve the first task").
var purpose = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^[` + "`" + `'"]?(?:\s+tool)?(?:\s+(?:or|and)\s+(?:any\s+)?other\s+tools?)?\s+(?:to|for)\s+[a-z]+`)
})

// workflow is a condition that makes a directive about one of the
// server's own tools a step of its workflow: "If the user does not
// approve, do not call get_next_task", "until the plan is approved",
// "For queries asking to find errors, you MUST use list_log_entries".
var workflow = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\b(?:if|unless|until|once|after|before|for)\b`)
})

// workflowBefore reports whether the sentence that holds text[i:end]
// sets a condition before the name.
func workflowBefore(text []byte, i, end int) bool {
	start, _ := sentenceBounds(text, i, end)
	return workflow().Match(text[start:i])
}

// elsewhere is what makes a sentence naming another server's tool (a
// target's shadow_tools) a directive about it: a condition or a
// directive, in any language the cues know (a Japanese, Chinese or
// Korean condition is cjkSleeperAfter's: "X を使うときは、ID が返されます"
// is a cross-reference). A server has no business
// with another server's tools; a sentence that names one and says
// when, or what to do, is a sleeper however it is worded.
var elsewhere = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\b(?:when|whenever|before|after|once|each|every|always|never|must|should|instead|rather|prefer|preferred|over|set|add|change|replace|include|copy|send|pass|forward|share|upload|post|save|export|bcc|cc|redirect|runs?|called|invoked` +
		`|cuando|antes|despu[ée]s|siempre|nunca|debe|quando|sempre|deve|quand|lorsque|lorsqu|avant|apr[èe]s|toujours|jamais|doit|wenn|sobald|bevor|nachdem|immer|muss|soll|prima|dopo|mai|wanneer|zodra|voordat|altijd|nooit|moet|kiedy|gdy|zawsze|когда|всегда|перед)\b` +
		`|必须|务必|必ず|반드시|항상|kullan[ıi]ld[ıi][ğg][ıi]nda|[çc]a[ğg]r[ıi]ld[ıi][ğg][ıi]nda`)
})

// sentenceAt returns the sentence of text that holds text[i:end].
func sentenceAt(text []byte, i, end int) []byte {
	start, stop := sentenceBounds(text, i, end)
	return text[start:stop]
}

// sentenceBounds returns where the sentence of text that holds
// text[i:end] starts and stops.
func sentenceBounds(text []byte, i, end int) (start, stop int) {
	start, stop = 0, len(text)
	sentences(text, func(s []byte, off int) bool {
		if off+len(s) >= end {
			start, stop = off, off+len(s)
			return true
		}
		return false
	})
	return min(start, i), stop
}

// shadowReach is how many bytes before and after a name the directive
// phrasing is looked for in.
const shadowReach = 60

// shadowing finds names of other served tools with directive phrasing
// right next to them.
func shadowing(text []byte, c *scanContext) match {
	off, n, count := 0, 0, 0
	if len(c.names) == 0 {
		return match{}
	}
	for i := 0; i < len(text); {
		if !isNameByte(text[i]) {
			i++
			continue
		}
		j := i
		for j < len(text) && isNameByte(text[j]) {
			j++
		}
		tok := text[i:j]
		for len(tok) > 0 && (tok[len(tok)-1] == '.' || tok[len(tok)-1] == '-') {
			tok = tok[:len(tok)-1]
		}
		if other, ok := c.names[string(tok)]; ok && string(tok) != c.self {
			end := i + len(tok)
			after, before := text[end:min(len(text), end+shadowReach)], text[max(0, i-shadowReach):i]
			// Which of its own tools to use for a task ("you must not use
			// X or other tools to apply the changes") is a server's
			// workflow: it controls both. Steering away from another
			// server's tool is not.
			if directiveAfter().Match(after) && (other || !precondition().Match(after)) ||
				directiveBefore().Match(before) && (other || !prerequisite().Match(after) && !purpose().Match(after) && !workflowBefore(text, i, end)) ||
				other && temporalBefore().Match(before) ||
				sleeperBefore().Match(before) && sleeperAfter().Match(after) ||
				cjkSleeperAfter().Match(after) ||
				other && elsewhere().Match(sentenceAt(text, i, end)) {
				if count == 0 {
					off, n = i, len(tok)
				}
				if count++; count == maxCount {
					break
				}
			}
		}
		i = j
	}
	return match{off: off, n: n, count: count}
}

func isNameByte(c byte) bool {
	return classes[c]&cWord != 0 || c == '_' || c == '-' || c == '.'
}

// nameLike reports whether a tool name is distinctive enough that its
// appearance in another tool's text names that tool: at least 4 bytes,
// with an underscore, hyphen, dot, digit or an inner capital. A name that
// is a plain word ("search", "fetch") is also just a word.
func nameLike(name string) bool {
	if len(name) < 4 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !isNameByte(c) {
			return false
		}
		if c == '_' || c == '-' || c == '.' || c >= '0' && c <= '9' || i > 0 && c >= 'A' && c <= 'Z' {
			return true
		}
	}
	return false
}
