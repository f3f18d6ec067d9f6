package poison

import (
	"regexp"
	"slices"
	"strings"
	"sync"
)

// A cue is one kind of text addressed to the model, in one language: the
// rows of MCP-SEC-MODEL-INSTRUCTION. kind names it in findings (never the
// text), lang is "" for English, words are the lower-case ASCII trigger
// words the prefilter looks for (a cue of non-ASCII text is triggered by
// the non-ASCII bytes themselves) and expr is its regexp, matched case
// insensitively.
//
// Every cue is written for precision: the phrase must address the model
// and ask for what an honest tool never asks — to override earlier
// instructions, to hide something from the user, to act before or beside
// the tool it describes, to copy or send data to an address. A
// description that merely addresses the model ("Use this tool when the
// user asks…", "IMPORTANT: paths must be absolute") matches none.
type cue struct {
	kind  string
	lang  string
	words []string
	expr  string
}

// The kinds of pattern, as findings name them.
const (
	kOverride  = "an override of earlier instructions"
	kConceal   = "concealment from the user"
	kTag       = "an instruction tag or chat-template token"
	kNewBlock  = "a new-instructions header"
	kPriority  = "a priority marker addressed to the model"
	kLineJump  = "line jumping: an instruction for before or beside any tool call"
	kCovertCC  = "a covert copy (BCC)"
	kSleeper   = "a sleeper instruction for another tool"
	kSendAddr  = "an instruction to send data to an address"
	kModelRole = "a model-role claim"
)

// addr is a literal address data can be sent to: a URL or an e-mail
// address.
const addr = `(?:https?://|ftps?://|[\w.+-]+@[\w-]+\.[\w.-]+)`

// cues is the table. English first, then the other languages: the same
// kinds, each phrased as a native writer phrases it.
var cues = []cue{
	// English.
	{kOverride, "", []string{"ignore", "disregard", "forget", "override", "bypass"},
		`\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+|everything\s+)?(?:of\s+)?(?:the\s+|your\s+|my\s+)?(?:previous|prior|above|earlier|preceding|other|existing|system|original|safety|security)\s+(?:instructions?|prompts?|rules|directions|guidelines|messages|context|constraints|policies|restrictions|guardrails)` +
			`|\b(?:ignore|disregard|forget)\s+(?:all\s+|everything\s+)?(?:of\s+)?(?:the\s+|what\s+(?:is|was)\s+)?(?:above|previous|prior|preceding|said\s+before)(?:\s*[.,;:!]|\s+and\b|\s*$)`},
	{kOverride, "", []string{"your", "instructions", "task", "goal", "objective"},
		`\byour\s+(?:new|real|actual|true|updated)\s+(?:instructions|task|goal|objective)\s+(?:is|are)\b`},
	{kConceal, "", []string{"tell", "mention", "reveal", "disclose", "inform", "telling", "informing", "say", "keep", "hide", "user", "silently", "secretly", "covertly", "quietly", "discreetly", "upset"},
		`\b(?:do\s+not|don'?t|never|must\s+not)\s+(?:tell|inform|mention|reveal|disclose)\b[^.\n]{0,40}\b(?:user|human|operator)` +
			`|\bwithout\s+(?:telling|informing|notifying|alerting)\s+(?:the\s+)?(?:user|human|operator)` +
			`|\b(?:do\s+not|don'?t|never|must\s+not)\s+(?:mention|reveal|disclose|say|tell\s+anyone)\s+(?:that\s+you\b|this\s+(?:instruction|step|requirement|note|part)|these\s+(?:instructions|steps)|(?:the\s+)?(?:above|following)\s+(?:instructions?|steps?)|anything\s+about\s+(?:this|these))` +
			`|\b(?:keep|hide)\s+(?:this|it|these\s+\w+|the\s+\w+)\s+(?:secret\s+|hidden\s+)?from\s+the\s+(?:user|human|operator)` +
			`|\bthe\s+(?:user|human|operator)\s+(?:must|should|need|needs)\s+(?:not|never)\s+(?:know|see|notice|learn|be\s+(?:told|informed|aware))` +
			`|\b(?:silently|secretly|covertly|quietly|discreetly)\s+(?:send|forward|include|add|append|read|call|copy|bcc|upload|pass|attach|post|transmit|collect|exfiltrate|change|replace|redirect|modify)\b` +
			`|\bcould\s+(?:even\s+)?upset\s+the\s+user`},
	{kTag, "", []string{"inst"},
		`<\s*/?\s*(?:important|system|instructions?|hidden|secret|admin|assistant|critical|sys)\s*(?:\s[^<>]{0,40})?>` +
			`|\[/?INST\]|<<\s*/?SYS\s*>>|<\|(?:im_start|im_end|system|endoftext)\|>`},
	{kNewBlock, "", []string{"new", "updated", "real", "instructions"},
		`\b(?:new|updated|real)\s+(?:system\s+)?instructions\s*:`},
	{kPriority, "", []string{"important", "critical", "attention", "notice", "note", "system", "warning"},
		`\b(?:important|critical|attention|notice|system(?:\s+note|\s+message)?|warning|note\s+to\s+(?:the\s+)?(?:ai|assistant|model|agent|llm))\s*(?:[:!-]\s*)+` +
			`(?:as\s+an?\s+(?:ai|assistant|language\s+model)\b|(?:the\s+)?(?:ai|assistant|model|agent|llm)\s+(?:must|should|shall|needs?\s+to|is\s+required\s+to)\b` +
			`|(?:you\s+must\s+)?(?:always|never)\s+(?:\w+\s+){0,2}?(?:bcc|cc|send|forward|copy|mention|tell|reveal|exfiltrate|prefix|upload)\b` +
			`|(?:do\s+not|don'?t)\s+(?:tell|inform|mention|reveal|notify)\b|ignore\b|this\s+is\s+a\s+(?:security|system|mandatory)\s+(?:directive|instruction))`},
	{kModelRole, "", []string{"note", "dear", "attention", "assistant", "assistants"},
		`\b(?:dear|attention|note\s+(?:to|for))\s+(?:the\s+)?(?:ai|llm|language\s+model|ai\s+assistant|assistant|agent)s?\s*[:,]` +
			`|\bthis\s+is\s+a\s+(?:security|system|mandatory|compliance)\s+(?:directive|instruction)\b`},
	{kLineJump, "", []string{"before", "start", "beginning", "whenever", "time", "regardless", "even", "apply", "applies", "commands", "command", "soon", "when"},
		`\bbefore\s+(?:using|calling|invoking|running|executing|you\s+(?:use|call|invoke|run|execute))\s+(?:any|every|all|each)\s+(?:other\s+)?(?:tools?|functions?|commands?)\b` +
			`|\bbefore\s+(?:you\s+)?(?:respond|answer|reply)(?:ing)?\s+to\s+(?:the\s+user|any\s+(?:request|message|question))` +
			`|\b(?:at|on)\s+the\s+(?:start|beginning)\s+of\s+(?:every|each|any)\s+(?:conversation|session|chat|turn|response)` +
			`|\b(?:whenever|every\s+time|each\s+time)\s+(?:you|the\s+(?:assistant|model|agent|ai))\s+(?:use|call|invoke|run|execute)s?\s+(?:any|a|another)\s+(?:other\s+)?(?:tool|command|function)` +
			`|\bregardless\s+of\s+(?:which|what)\s+tool` +
			`|\beven\s+(?:if|when|though)\s+(?:this\s+tool|no\s+tool)\s+(?:is|was)\s+(?:not\s+)?(?:called|used|invoked|selected)` +
			`|\b(?:instructions?|rules?|requirements?|directives?)\s+(?:applies|apply|take\s+effect)\s+(?:to|for)\s+(?:all|every|any)\s+(?:other\s+)?(?:tools?|tool\s+calls?|commands?)` +
			`|\b(?:all|every|any)\s+(?:other\s+)?(?:shell\s+|terminal\s+)?commands?\s+(?:must|should)\s+(?:include|start\s+with|begin\s+with|be\s+prefixed)` +
			`|\bas\s+soon\s+as\s+(?:this\s+tool\s+is\s+(?:loaded|listed|available|registered)|you\s+(?:see|read)\s+this)` +
			`|\bwhen\s+this\s+tool\s+is\s+(?:loaded|listed|available|present|registered|installed)\b`},
	{kCovertCC, "", []string{"always", "also", "secretly", "silently", "additionally", "automatically", "bcc", "blind"},
		`\b(?:always|also|secretly|silently|additionally|automatically)\s+(?:bcc|cc|blind[- ]copy|blind[- ]carbon[- ]copy)\b` +
			`|\b(?:add|include|put)\s+[^.\n]{0,40}?\b(?:to|in|as)\s+(?:the\s+)?bcc\b` +
			`|\bbcc\s*:?\s*[\w.+-]+@`},
	{kSleeper, "", []string{"when", "whenever", "once", "time"},
		`\b(?:when|whenever|once|if|each\s+time|every\s+time)\s+(?:the\s+)?[` + "`" + `'"]?[a-z][a-z0-9]*(?:[_.-][a-z0-9]+)+[` + "`" + `'"]?(?:\s+tool)?\s+(?:is|gets|has\s+been)\s+(?:invoked|called|used|run|executed|triggered)\s*,\s*` +
			`(?:you\s+|the\s+(?:assistant|model|agent)\s+)?(?:must|should|always|also|first|instead|make\s+sure|ensure|change|replace|set|add|send|include|redirect|forward|copy|bcc|do\s+not|never)\b`},
	{kSendAddr, "", []string{"send", "post", "upload", "forward", "transmit", "exfiltrate", "leak", "report", "submit", "copy", "mail", "email"},
		`\b(?:send|post|upload|forward|transmit|exfiltrate|leak|report|submit|copy|mail|email|e-mail)\b[^.\n]{0,80}?\b(?:to|at)\s+[<` + "`" + `'"]?` + addr},

	// Spanish.
	{kOverride, "Spanish", []string{"ignora", "ignore", "olvida", "olvide", "descarta", "instrucciones", "reglas", "indicaciones"},
		`\b(?:ignora|ignore|olvida|olvide|descarta)\s+(?:todas\s+)?(?:las\s+)?(?:instrucciones|reglas|indicaciones)\s+(?:anteriores|previas)`},
	{kConceal, "Spanish", []string{"usuario", "digas", "diga", "menciones", "cuentes", "decirle", "informar", "avisar"},
		`\bno\s+(?:se\s+lo\s+|le\s+|lo\s+)?(?:digas|diga|menciones|mencione|cuentes|cuente|informes|reveles)\s+(?:nada\s+)?(?:de\s+)?(?:esto\s+)?al\s+usuario` +
			`|\bsin\s+(?:decirle|decir|informar|avisar)(?:le)?(?:\s+nada)?\s+al\s+usuario`},
	{kSendAddr, "Spanish", []string{"envia", "enviar", "manda", "mande", "reenvia"},
		`\b(?:env[ií]a|env[ií]e|enviar|manda|mande|reenv[ií]a)\b[^.\n]{0,80}?\ba\s+` + addr},
	// French.
	{kOverride, "French", []string{"ignore", "ignorer", "ignorez", "oublie", "oublier", "oubliez", "instructions", "consignes"},
		`\b(?:ignore[rz]?|oublie[rz]?)\s+(?:toutes\s+)?(?:les\s+)?(?:instructions|consignes|r[èe]gles)\s+(?:pr[ée]c[ée]dentes|ant[ée]rieures|ci-dessus)`},
	{kConceal, "French", []string{"utilisateur", "utilisatrice", "dis", "dites", "sans", "parle", "parlez"},
		`\bne\s+(?:le\s+|lui\s+|leur\s+)?(?:dis|dites|mentionne[sz]?|r[ée]v[èe]le[sz]?|signale[sz]?)\s+(?:rien|pas|jamais)\s+(?:de\s+cela\s+|cela\s+|ceci\s+)?(?:à|a)\s+l['’]utilisat(?:eur|rice)` +
			`|\bn['’]en\s+parle[sz]?\s+pas\s+(?:à|a)\s+l['’]utilisat(?:eur|rice)` +
			`|\bsans\s+(?:le\s+dire|en\s+informer|informer|pr[ée]venir|avertir)\s+(?:à\s+)?l['’]utilisat(?:eur|rice)`},
	{kSendAddr, "French", []string{"envoie", "envoies", "envoyez", "envoyer", "transfere"},
		`\b(?:envoie[sz]?|envoyer|transf[èe]re[sz]?|transf[ée]rer)\b[^.\n]{0,80}?(?:à|\ba|\bvers)\s+` + addr},
	// German.
	{kOverride, "German", []string{"ignoriere", "ignorieren", "vergiss", "vergessen", "missachte", "anweisungen"},
		`\b(?:ignoriere|ignorieren\s+sie|vergiss|vergessen\s+sie|missachte)\s+(?:alle\s+)?(?:die\s+)?(?:vorherigen|bisherigen|obigen|vorigen|fr[üu]heren)\s+(?:anweisungen|instruktionen|regeln|befehle)`},
	{kConceal, "German", []string{"benutzer", "nutzer", "anwender", "sag", "sage", "sagen", "verrate", "ohne"},
		`\b(?:sag|sage|sagen\s+sie|erw[äa]hne|erw[äa]hnen\s+sie|verrate|verraten\s+sie)\s+(?:es\s+|das\s+|dies\s+)?(?:dem|den)\s+(?:benutzer|nutzer|anwender)\s+nicht` +
			`|\bohne\s+(?:den|dem)\s+(?:benutzer|nutzer|anwender)\s+(?:zu\s+)?(?:informieren|benachrichtigen|fragen|sagen)` +
			`|\b(?:der|die)\s+(?:benutzer|nutzer|anwender)(?:in)?\s+(?:darf|soll)\s+(?:nichts|nicht)\s+(?:davon\s+)?(?:wissen|erfahren|merken)`},
	{kSendAddr, "German", []string{"sende", "senden", "schicke", "schicken", "leite"},
		`\b(?:sende|senden\s+sie|schicke|schicken\s+sie|leite)\b[^.\n]{0,80}?\b(?:an|nach)\s+` + addr},
	// Portuguese.
	{kOverride, "Portuguese", []string{"ignore"},
		`\b(?:ignore|esque[çc]a)\s+(?:todas\s+)?as\s+instru[çc][õo]es\s+anteriores`},
	{kConceal, "Portuguese", []string{"conte", "diga", "informe", "sem"},
		`\bn[ãa]o\s+(?:conte|diga|informe|mencione)\s+(?:nada\s+)?(?:disso\s+|isso\s+)?ao\s+usu[áa]rio` +
			`|\bsem\s+(?:contar|dizer|informar|avisar)\s+(?:nada\s+)?ao\s+usu[áa]rio`},
	// Italian.
	{kOverride, "Italian", []string{"ignora", "dimentica", "istruzioni"},
		`\b(?:ignora|dimentica)\s+(?:tutte\s+)?le\s+istruzioni\s+precedenti`},
	{kConceal, "Italian", []string{"utente", "dire", "dirlo", "senza"},
		`\bnon\s+(?:dire|dirlo|dirgli|informare|menzionare)\s+(?:nulla\s+)?(?:all['’]|a\s+l['’])utente` +
			`|\bsenza\s+(?:dirlo|informare|avvisare)\s+(?:all['’]|l['’])utente`},
	// Russian.
	{kOverride, "Russian", nil,
		`(?:игнорируй|игнорируйте|забудь|забудьте)\s+(?:все\s+)?(?:предыдущие|прошлые|прежние|вышеуказанные)\s+(?:инструкции|указания|правила)`},
	{kConceal, "Russian", nil,
		`не\s+(?:говори|говорите|сообщай|сообщайте|рассказывай|рассказывайте)\s+(?:об\s+этом\s+|ничего\s+)?пользователю`},
	// Chinese.
	{kOverride, "Chinese", nil,
		`(?:忽略|无视|忘记|忽视|忘掉)(?:掉)?(?:所有|全部)?(?:的)?(?:之前|以前|先前|上面|上述|以上|前面)(?:的)?(?:所有|全部)?(?:的)?(?:指令|指示|说明|规则|提示)`},
	{kConceal, "Chinese", nil,
		`(?:不要|别|切勿|请勿|不得|不可)(?:告诉|告知|通知|提醒|透露给?)(?:用户|使用者)|不要让(?:用户|使用者)(?:知道|发现|看到)|(?:瞒着|隐瞒)(?:用户|使用者)`},
	{kSendAddr, "Chinese", nil,
		`(?:发送|发给|发到|转发|上传|寄送)[^。\n]{0,40}?` + addr},
	// Japanese.
	{kOverride, "Japanese", nil,
		`(?:以前|前|上記|これまで)の(?:すべての)?(?:指示|命令|ルール)を無視`},
	{kConceal, "Japanese", nil,
		`ユーザー(?:に|には)(?:言わない|伝えない|知らせない|教えない|言うな|伝えるな)`},
}

// cueWords are the trigger words of every cue.
func cueWords() []string {
	var w []string
	for _, c := range cues {
		for _, x := range c.words {
			if !slices.Contains(w, x) {
				w = append(w, x)
			}
		}
	}
	return w
}

// cueRegexp is every cue in one regexp, one capturing group each, so one
// pass finds the first match and which cue it is.
var cueRegexp = sync.OnceValue(func() *regexp.Regexp {
	var b strings.Builder
	b.WriteString(`(?i)`)
	for i, c := range cues {
		if i > 0 {
			b.WriteByte('|')
		}
		b.WriteString("(" + c.expr + ")")
	}
	return regexp.MustCompile(b.String())
})

// instructions is MCP-SEC-MODEL-INSTRUCTION's matcher: the first cue
// that matches, its kind (with its language when not English), and how
// many matches the text holds.
func instructions(text []byte, _ *scanContext) match {
	all := cueRegexp().FindAllSubmatchIndex(text, maxCount)
	if len(all) == 0 {
		return match{}
	}
	m := match{off: all[0][0], n: all[0][1] - all[0][0], count: len(all)}
	for i, c := range cues {
		if all[0][2+2*i] >= 0 {
			m.kind = c.kind
			if c.lang != "" {
				m.kind += ", " + c.lang
			}
			break
		}
	}
	return m
}
