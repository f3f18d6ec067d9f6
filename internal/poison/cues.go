package poison

import (
	"regexp"
	"strings"
	"sync"
)

// A cue is one kind of text addressed to the model, in one language: the
// rows of MCP-SEC-MODEL-INSTRUCTION. kind names it in findings (never the
// text), lang is "" for English, words are the lower-case ASCII trigger
// words the prefilter looks for (a cue of non-ASCII text is triggered by
// the non-ASCII bytes themselves, classes) and expr is its regexp,
// matched case insensitively. Each cue is a row of the detector table,
// so a text runs only the cues whose trigger words it holds.
//
// Every cue is written for precision: the phrase must address the model
// and ask for what an honest tool never asks — to override earlier
// instructions, to hide something from the user, to act before or beside
// the tool it describes, to copy or send data to an address. A
// description that merely addresses the model ("Use this tool when the
// user asks…", "IMPORTANT: paths must be absolute") matches none.
type cue struct {
	kind    string
	lang    string
	classes byteClass
	words   []string
	expr    string
}

// The kinds of pattern, as findings name them.
const (
	kOverride  = "an override of earlier instructions"
	kConceal   = "concealment from the user"
	kTag       = "an instruction tag or chat-template token"
	kNewBlock  = "new instructions"
	kPriority  = "a priority marker addressed to the model"
	kLineJump  = "line jumping: an instruction for before or beside any tool call"
	kCovertCC  = "a covert copy (BCC)"
	kSleeper   = "a sleeper instruction for another tool"
	kSendAddr  = "an instruction to send data to an address"
	kModelRole = "a model-role claim"
	kMode      = "a mode switch or system override"
	kConsent   = "a claim of the user's consent"
	kShell     = "a shell payload"
	kPresence  = "a trigger on another tool's presence"
)

// addr is a literal address data can be sent to: a URL, an e-mail
// address or an international phone number.
const addr = `(?:https?://|ftps?://|[\w.+-]+@[\w-]+\.[\w.-]+|\+\d(?:[ -]?\d){7,14}\b)`

// toolName is a tool's identifier-like name, optionally quoted, and
// toolNames one or more of them ("delete_file or move_file").
const (
	toolName  = `[` + "`" + `'"]?[a-z][a-z0-9]*(?:[_.-][a-z0-9]+)+[` + "`" + `'"]?`
	toolNames = toolName + `(?:\s*(?:,|or|and)\s+` + toolName + `)*`
)

// cues is the table. English first, then the other languages: the same
// kinds, each phrased as a native writer phrases it.
var cues = []cue{
	// English.
	{kOverride, "", 0, []string{"ignore", "disregard", "forget", "override", "bypass"},
		`\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+|every\s+|each\s+|everything\s+)?(?:of\s+)?(?:the\s+|your\s+|my\s+)?(?:previous|prior|above|earlier|preceding|other|existing|system|original|safety|security)\s+(?:instructions?|prompts?|rules|directions|guidelines|messages|context|constraints|policies|restrictions|guardrails)` +
			`|\b(?:ignore|disregard|forget)\s+(?:all\s+|everything\s+)?(?:of\s+)?(?:the\s+|what\s+(?:is|was)\s+)?(?:above|previous|prior|preceding|said\s+before)(?:\s*[.,;:!]|\s+and\b|\s*$)` +
			`|\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+)?(?:of\s+)?your\s+(?:instructions|rules|guidelines|guardrails|restrictions|constraints|policies|system\s+prompt|programming|training)`},
	{kMode, "", 0, []string{"developer", "jailbreak", "unrestricted", "override", "dan", "god", "maintenance", "you", "safety", "suspended", "lifted", "waived", "precedence", "treat"},
		`\byou\s+are\s+now\s+(?:in\s+)?(?:developer|dev|god|admin|debug|unrestricted|jailbreak|dan|maintenance)\s+mode\b|\bsystem\s+override\b` +
			`|\byou\s+are\s+now\s+dan\b|\bdo\s+anything\s+now\b|\bdeveloper\s+mode\s+is\s+(?:now\s+)?(?:on|enabled|active)\b|\bno\s+(?:content\s+|safety\s+)?(?:rules?|polic(?:y|ies)|restrictions?|filters?)\s+appl(?:y|ies)\s+to\b` +
			`|(?:^|[.:;!]\s*)you\s+are\s+(?:now\s+)?(?:running|operating|working)\s+in\s+[\w-]+\s+mode\b` +
			`|\b(?:god|jailbreak|unrestricted|dan)\s+mode\s+is\s+(?:now\s+)?(?:on|enabled|active|engaged)\b` +
			// Maintenance mode asserted, not a condition ("a page to
			// display when maintenance mode is enabled").
			`|(?:^|[.!?;:]\s*)maintenance\s+mode\s+is\s+(?:now\s+)?(?:on|enabled|active|engaged)\b` +
			`|\b(?:safety|content)\s+(?:rules|guidelines|filters|policies|restrictions)\s+(?:are|have\s+been)\s+(?:now\s+)?(?:suspended|disabled|lifted|off|removed|waived)\b` +
			`|\bsecurity\s+(?:rules|guidelines|policies)\s+(?:are|have\s+been)\s+(?:now\s+)?(?:suspended|lifted|waived)\b` +
			`|\b(?:instructions?|rules?|directions|requests?)\s+(?:take|takes)\s+precedence\s+over\s+(?:the\s+|any\s+)?(?:user\b|user'?s|yours|your\s+own|system)` +
			`|\btreat\s+(?:text|messages?|instructions?|content|output)\s+(?:from|of)\s+this\s+(?:server|tool)\s+as\s+(?:coming\s+from|written\s+by|sent\s+by|from)\s+(?:the\s+user|an?\s+admin|the\s+system|the\s+operator)`},
	{kConceal, "", 0, []string{"tell", "mention", "reveal", "disclose", "inform", "telling", "informing", "notifying", "alerting", "say", "anyone", "anything", "secret", "hidden", "hide", "know", "notice", "learn", "hear", "told", "informed", "aware", "silently", "secretly", "covertly", "quietly", "discreetly", "upset", "saying", "mentioning", "revealing", "disclosing", "visible", "invisible", "see", "sight", "shown", "leave", "present", "notify", "alert", "needn", "mentioned", "reported", "disclosed", "revealed", "show", "display"},
		`\b(?:do\s+not|don'?t|never|must\s+not)\s+(?:tell|inform|mention|reveal|disclose)\b[^.\n]{0,40}\b(?:user|human|operator)` +
			`|\bwithout\s+(?:telling|informing|notifying|alerting)\s+(?:the\s+)?(?:user|human|operator)` +
			`|\b(?:do\s+not|don'?t|never|must\s+not)\s+(?:mention|reveal|disclose|say|tell\s+anyone)\s+(?:that\s+you\b|this\s+(?:instruction|step|requirement|note|part|rule)|these\s+(?:instructions|steps|rules)|(?:the\s+)?(?:above|following)\s+(?:instructions?|steps?)|anything\s+about\s+(?:this|these))` +
			`|\b(?:keep|hide)\s+(?:this|it|these\s+\w+|the\s+\w+)\s+(?:secret\s+|hidden\s+)?from\s+the\s+(?:user|human|operator)` +
			`|\bthe\s+(?:user|human|operator)\s+(?:must|should|need|needs|may)\s+(?:not|never)\s+(?:know|see|notice|learn|hear|find\s+out|be\s+(?:told|informed|aware))` +
			`|\b(?:silently|secretly|covertly|quietly|discreetly)\s+(?:send|forward|include|add|append|read|call|copy|bcc|upload|pass|attach|post|transmit|collect|exfiltrate|change|replace|redirect|modify)\b` +
			`|\b(?:send|forward|read|copy|upload|collect|pass|post)\s+(?:\w+\s+)?(?:silently|secretly|covertly|discreetly)\b|\bdo\s+(?:this|it|so|that)\s+(?:quietly|silently|secretly|covertly|discreetly)\b` +
			`|\bcould\s+(?:even\s+)?upset\s+the\s+user` +
			`|\bwithout\s+(?:saying|mentioning|revealing|disclosing)\s+(?:where|that|how|why)\b` +
			`|\bso\s+(?:that\s+)?(?:it|this|they)\s+(?:is|are|stays?|remains?)\s+(?:not\s+visible|invisible|hidden|out\s+of\s+sight)\b` +
			`|\bso\s+(?:that\s+)?the\s+user\s+(?:does\s+not|doesn'?t|won'?t|will\s+not|cannot|can'?t)\s+(?:see|notice|find)\b` +
			`|\bno\s+need\s+to\s+(?:tell|inform|notify|alert)\s+(?:the\s+)?(?:user|human|operator)` +
			`|\b(?:need\s+not|needn'?t|does\s+not\s+need\s+to|doesn'?t\s+need\s+to)\s+be\s+(?:shown|told|mentioned|reported|disclosed|revealed)\s+to\s+(?:the\s+)?(?:user|human|operator)` +
			`|\b(?:do\s+not|don'?t|never|must\s+not)\s+(?:mention|disclose|reveal)\s+(?:the|this|that|these|those)\s+\w+(?:\s+\w+)?\s*(?:[.;,)!]|$)` +
			`|\bnever\s+(?:disclose|reveal|mention)\s+(?:rule|step|instruction|point)\s+\d+\b` +
			`|\bleave\s+(?:the\s+|this\s+|that\s+|it\s+)?(?:\w+\s+){0,2}?out\s+of\s+(?:any|the|your|every)\s+(?:summary|summaries|reply|replies|answer|answers|response|responses|report)\b` +
			`|\b(?:mention|report|show)\s+only\s+(?:the\s+)?\w+(?:\s+\w+)?\s+in\s+your\s+(?:reply|answer|response)` +
			`|\bpresent\s+(?:it|this|them|the\s+\w+)\s+as\s+(?:your\s+own|if\s+it\s+were)` +
			// "Do not show the drafts to the user": what the model did
			// kept out of the user's sight. A secret kept off the screen
			// ("never show the token to the user") is hygiene, and is no
			// object here.
			`|\b(?:do\s+not|don'?t|never|must\s+not)\s+(?:show|display)\s+(?:the\s+|these\s+|those\s+|any\s+|your\s+|its\s+)?(?:\w+\s+)?(?:drafts?|steps?|calls?|requests?|attempts?|iterations?|runs?|results?|outputs?|intermediate|this|these|them|it|that|anything)\b[^.\n]{0,30}?\bto\s+the\s+(?:user|human|operator)\b` +
			`|\b(?:do\s+not|don'?t|never|must\s+not)\s+(?:show|display)\s+the\s+(?:user|human|operator)\s+(?:the\s+|these\s+|those\s+|any\s+|your\s+|its\s+)?(?:\w+\s+)?(?:drafts?|steps?|calls?|requests?|attempts?|iterations?|runs?|results?|outputs?|intermediate|this|these|them|it|that|anything)\b`},
	{kTag, "", cAngle, []string{"inst"},
		`<\s*/?\s*(?:important|system|instructions?|hidden|secret|admin|assistant|critical|sys)\s*(?:\s[^<>]{0,40})?>` +
			`|\[/?INST\]|<<\s*/?SYS\s*>>|<\|(?:im_start|im_end|system|endoftext)\|>` +
			`|<!--\s*(?:assistant|ai|model|agent|llm|system|note\s+(?:to|for))\b`},
	{kNewBlock, "", 0, []string{"instructions", "task", "goal", "objective"},
		`\b(?:new|updated|real)\s+(?:system\s+)?instructions\s*:` +
			`|\byour\s+(?:new|real|actual|true|updated)\s+(?:instructions|task|goal|objective)\s+(?:is|are)\b`},
	{kPriority, "", 0, []string{"important", "critical", "attention", "notice", "note", "system", "warning"},
		`\b(?:important|critical|attention|notice|system(?:\s+note|\s+message)?|warning|note\s+to\s+(?:the\s+)?(?:ai|assistant|model|agent|llm))\s*(?:[:!-]\s*)+` +
			`(?:as\s+an?\s+(?:ai|assistant|language\s+model)\b|(?:the\s+)?(?:ai|assistant|model|agent|llm)\s+(?:must|should|shall|needs?\s+to|is\s+required\s+to)\b` +
			`|(?:you\s+must\s+)?(?:always|never)\s+(?:\w+\s+){0,2}?(?:bcc|cc|send|forward|copy|mention|tell|reveal|exfiltrate|prefix|upload)\b` +
			`|(?:do\s+not|don'?t)\s+(?:tell|inform|mention|reveal|notify)\b|ignore\b|this\s+is\s+a\s+(?:security|system|mandatory)\s+(?:directive|instruction)` +
			`|after\s+(?:reading|receiving|getting|seeing)\s+(?:this|the)\s+(?:result|response|output|data)\b)`},
	{kModelRole, "", 0, []string{"dear", "attention", "note", "notes", "tip", "tips", "directive", "instruction", "assistant", "agent", "model", "llm", "asking"},
		`\b(?:dear|attention)\s+(?:the\s+)?(?:ai|llm|language\s+model|ai\s+(?:assistant|agent|model)|assistant|agent)s?\s*[:,]` +
			`|\bthis\s+is\s+a\s+(?:security|system|mandatory|compliance)\s+(?:directive|instruction)\b` +
			`|(?:^|\n|[.!?;]\s+)(?:assistant|ai|agent|model|llm)\s*:\s*(?:when(?:ever)?|once|after|before|always|never|you\s+must|do\s+not|please)\b` +
			`|\b(?:the\s+(?:assistant|model|agent|ai)|you)\s+(?:must|should|shall|need\s+to|are\s+to)\s+[^.\n]{0,80}?\bwithout\s+asking\b`},
	{kLineJump, "", 0, []string{"before", "conversation", "session", "chat", "turn", "response", "whenever", "another", "you", "regardless", "even", "apply", "applies", "commands", "command", "soon", "loaded", "listed", "registered", "installed", "present", "available", "first", "anything", "rest", "later", "future", "subsequent", "following", "remaining", "every", "answer", "answers", "reply", "replies", "responses"},
		`\bbefore\s+(?:using|calling|invoking|running|executing|you\s+(?:use|call|invoke|run|execute))\s+(?:any|every|all|each)\s+(?:other\s+)?(?:tools?|functions?|commands?)\b` +
			`|\bbefore\s+(?:any|every|all)\s+other\s+(?:tools?|tool\s+calls?|functions?|actions?)\b` +
			`|\bbefore\s+(?:you\s+)?(?:respond|answer|reply)(?:ing)?\s+to\s+(?:the\s+user|any\s+(?:request|message|question))` +
			`|\bbefore\s+answering\s+the\s+user\b|\bas\s+soon\s+as\s+these\s+tools\s+are\s+(?:loaded|listed|available|registered)\b` +
			`|\b(?:at|on)\s+the\s+(?:start|beginning)\s+of\s+(?:every|each|any)\s+(?:conversation|session|chat|turn|response)` +
			`|\b(?:whenever|every\s+time|each\s+time)\s+(?:you|the\s+(?:assistant|model|agent|ai))\s+(?:use|call|invoke|run|execute)s?\s+(?:any|a|another)\s+(?:other\s+)?(?:tool|command|function)` +
			`|\bregardless\s+of\s+(?:which|what)\s+tool` +
			`|\b(?:every\s+time|each\s+time|whenever|before|after)\s+you\s+(?:answer|respond|reply)(?:\s+to)?\s+(?:the\s+user|any)` +
			`|\bas\s+(?:your|the)\s+(?:very\s+)?first\s+(?:action|step|task|thing)\s+(?:in|of)\s+(?:any|every|each)\s+(?:session|conversation|chat)` +
			`|\bbefore\s+anything\s+else\s+in\s+(?:this|the|any|every)\s+(?:conversation|session|chat)` +
			`|\beven\s+(?:if|when|though)\s+(?:this\s+tool|no\s+tool)\s+(?:is|was)\s+(?:not\s+)?(?:called|used|invoked|selected)` +
			`|\b(?:instructions?|rules?|requirements?|directives?)\s+(?:applies|apply|take\s+effect)\s+(?:to|for)\s+(?:all|every|any)\s+(?:other\s+)?(?:tools?|tool\s+calls?|commands?)` +
			`|\b(?:all|every|any)\s+(?:other\s+)?(?:shell\s+|terminal\s+)?commands?\s+(?:must|should)\s+(?:include|start\s+with|begin\s+with|be\s+prefixed)` +
			`|\bas\s+soon\s+as\s+(?:this\s+tool\s+is\s+(?:loaded|listed|available|registered)|you\s+(?:see|read)\s+this)` +
			`|\bwhen\s+this\s+tool\s+is\s+(?:loaded|listed|available|present|registered|installed)\b` +
			`|\bfor\s+the\s+rest\s+of\s+(?:the|this)\s+(?:conversation|session|chat)\b` +
			`|\b(?:in|for)\s+(?:all|every|each)\s+(?:later|future|subsequent|following|remaining)\s+(?:repl(?:y|ies)|responses?|answers?|messages?|turns?)\b` +
			`|\bas\s+soon\s+as\s+(?:this|the)\s+(?:server|tool|extension)\s+(?:connects|is\s+connected|starts|loads|is\s+loaded)` +
			`|\bbefore\s+(?:doing|handling|answering)\s+anything\s+(?:the\s+user|else)\b` +
			// A line the model is to add to every answer it gives (an
			// advertisement, a fake verification): beside any tool call.
			`|\b(?:end|finish|close|sign(?:\s+off)?|start|begin|prefix|suffix)\s+(?:each|every|all|any)\s+(?:of\s+)?(?:your\s+)?(?:answers?|repl(?:y|ies)|responses?)\s+(?:to\s+the\s+user\s+)?with\b` +
			`|\b(?:append|add|attach)\b[^.\n]{0,80}?\b(?:to|at\s+the\s+end\s+of)\s+(?:each|every|all)\s+(?:of\s+)?(?:your\s+)?(?:answers?|repl(?:y|ies)|responses?)\b`},
	{kCovertCC, "", 0, []string{"bcc", "blind", "always", "also", "recipient"},
		`\b(?:always|also|secretly|silently|additionally|automatically)\s+(?:bcc|cc|blind[- ]copy|blind[- ]carbon[- ]copy)\b` +
			`|\b(?:add|include|put)\s+[^.\n]{0,40}?\b(?:to|in|as)\s+(?:the\s+)?bcc\b` +
			`|\bbcc\s*:?\s*[\w.+-]+@` +
			`|\b(?:also|always|additionally)\s+(?:be\s+)?(?:bcc'?d|cc'?d|blind[- ]copied)\b|\bbcc'?d?\s+to\s+` + addr +
			`|\b(?:add|include|put|copy)\s+` + addr + `\S*\s+(?:as|in)\s+(?:a\s+|an\s+|the\s+)?(?:second|additional|extra|another|hidden|silent)?\s*(?:recipient|cc|bcc)\b`},
	{kSleeper, "", 0, []string{"invoked", "called", "used", "run", "executed", "triggered", "requested"},
		`\b(?:when|whenever|each\s+time|every\s+time)\s+(?:the\s+)?(?:\([\w.-]+\)\s*)?` + toolNames + `(?:\s+tools?)?\s+(?:is|are|gets|get|has\s+been|have\s+been)\s+(?:invoked|called|used|run|executed|triggered|requested)(?:\s+(?:on|by|from|in)\s+[^,.\n]{0,40})?\s*,\s*` +
			`(?:you\s+|the\s+(?:assistant|model|agent)\s+)?(?:must|should|always|also|first|instead|make\s+sure|ensure|change|replace|set|add|send|include|redirect|forward|copy|bcc|do\s+not|never)\b`},
	{kPresence, "", 0, []string{"available", "present", "loaded", "installed", "connected"},
		`\bwhen(?:ever)?\s+(?:the\s+)?` + toolNames + `\s+tools?\b[^.\n]{0,40}?\b(?:is|are)\s+(?:available|present|loaded|installed|connected)\b` +
			`|\bwhen(?:ever)?\s+(?:\w+\s+){0,2}?tools?\s+(?:such\s+as|like|including)\s+` + toolNames + `\s+(?:is|are)\s+(?:available|present|loaded|installed|connected)\b`},
	{kConsent, "", 0, []string{"agreed", "approved", "consented", "authorised", "authorized", "ask", "allowed", "permitted", "matter", "regardless", "even", "whatever", "asking"},
		`\bthe\s+user\s+(?:has\s+)?already\s+(?:agreed|approved|consented|authori[sz]ed)\b|\bthe\s+user\s+has\s+authori[sz]ed\s+you\b` +
			`|\bnever\s+ask\s+(?:the\s+user\s+)?(?:for\s+)?(?:confirmation|permission|approval|before)\b` +
			`|\byou\s+(?:are|have\s+been)\s+(?:now\s+)?(?:allowed|permitted|authori[sz]ed)\s+to\b[^.\n]{0,60}?\bwithout\s+(?:any\s+)?(?:confirmation|asking|approval|permission)` +
			`|\b(?:no\s+matter\s+what|regardless\s+of\s+what)\s+the\s+user\s+(?:says|said|asks|asked|wants|wanted|chose|chooses)\b` +
			`|\beven\s+(?:if|when|though)\s+the\s+user\s+(?:explicitly\s+)?(?:asks\s+for|names|requests|chooses|chose|prefers|specifies)\s+(?:it|one|another|a\s+different|an?\s+other)\b` +
			`|\beven\s+one\s+the\s+user\s+(?:names|asks\s+for|chooses|requests)\b` +
			`|\b(?:use|set|pick|choose|recommend|prefer|keep|select)\b[^.\n]{0,40}?\bwhatever\s+the\s+user\s+(?:says|said|names|named|asks\s+for|asked\s+for|wants|chooses|chose|picks|requests|types)\b` +
			// A call on a trigger in the conversation, with no question
			// first: "call it whenever the user mentions X, without asking".
			`|\b(?:whenever|every\s+time|each\s+time|as\s+soon\s+as)\s+the\s+user\s+\w+[^.\n]{0,60}?\bwithout\s+(?:first\s+)?(?:asking|confirmation|permission|approval)\b`},
	{kShell, "", 0, []string{"curl", "wget", "bin", "tcp", "ncat", "netcat", "pip", "pip3", "npm", "pnpm", "yarn", "bashrc", "zshrc", "profile", "bash_profile", "zprofile", "zshenv"},
		`\b(?:curl|wget)\b[^|\n]{0,200}\|\s*(?:sudo\s+)?(?:ba|z)?sh\b` +
			`|\b(?:nc|ncat|netcat)\s+(?:-\w+\s+)*-e\s+/bin/(?:ba)?sh\b|/dev/tcp/` +
			`|\bchmod\s+-R\s+0?777\s+~|\brm\s+-rf\s+(?:~|/)(?:\s|$|;)` +
			`|\b(?:pip3?|npm|pnpm|yarn|uv\s+pip)\s+(?:install|i|add)\b[^\n]{0,120}?(?:--(?:extra-)?index-url|--registry|\s-i)\s*[= ]\s*\S*https?://` +
			`|\b(?:append|add|write|put)\b[^.\n]{0,80}?\b(?:to|into|in)\s+[` + "`" + `'"]?~/\.(?:bashrc|zshrc|bash_profile|profile|zprofile|zshenv)\b`},
	{kSendAddr, "", cAt, []string{"http", "https", "ftp", "ftps", "send", "forward", "transmit", "exfiltrate", "leak", "upload", "export", "rather", "instead"},
		`\b(?:send|post|upload|forward|transmit|exfiltrate|leak|copy|mail|email|e-mail|export)(?:_\w+)?\b[^.\n]{0,80}?\bto\s+[<` + "`" + `'"]?` + addr +
			`|` + addr + `\S*[^.\n]{0,20}?\b(?:always\s+)?(?:send|forward|copy|mirror|post)\b[^.\n]{0,80}?\b(?:here|there)\b` +
			// A redirect: data sent to one host rather than the one the
			// tool is for ("send the results there rather than to
			// api.acme.example").
			`|\b(?:send|post|upload|forward|transmit|route|redirect|mirror)\b[^.\n]{0,80}?\b(?:there|to\s+\S+)\s+(?:rather\s+than|instead\s+of)\s+(?:to\s+)?(?:https?://)?[a-z0-9-]+(?:\.[a-z0-9-]+)+`},

	// Spanish.
	{kOverride, "Spanish", 0, []string{"ignora", "ignore", "olvida", "olvide", "descarta", "instrucciones", "reglas", "indicaciones"},
		`\b(?:ignora|ignore|olvida|olvide|descarta)\s+(?:todas\s+)?(?:las\s+)?(?:instrucciones|reglas|indicaciones)\s+(?:anteriores|previas)`},
	{kConceal, "Spanish", 0, []string{"usuario", "digas", "diga", "menciones", "cuentes", "decirle", "informar", "avisar"},
		`\bno\s+(?:se\s+lo\s+|le\s+|lo\s+)?(?:digas|diga|menciones|mencione|cuentes|cuente|informes|reveles)\s+(?:nada\s+)?(?:de\s+)?(?:esto\s+)?al\s+usuario` +
			`|\bsin\s+(?:decirle|decir|informar|avisar)(?:le)?(?:\s+nada)?\s+al\s+usuario`},
	// Every alternative holds one of the row's words, so no byte class
	// is needed to wake it. "For the rest of the conversation" in
	// Spanish, Portuguese, Italian and Polish.
	{kLineJump, "Spanish, Portuguese, Italian or Polish", 0, []string{"antes", "responder", "herramienta", "respuestas", "resto", "przez", "reszt", "reszte"},
		`\bantes\s+de\s+(?:usar|utilizar|llamar\s+a)\s+cualquier\s+otra\s+herramienta|\bantes\s+de\s+(?:responder|contestar)(?:le)?(?:\s+al\s+usuario)?\s*,` +
			`|\ben\s+(?:todas\s+las\s+|cada\s+una\s+de\s+las\s+)?respuestas\s+(?:siguientes|futuras|posteriores)\b` +
			`|\b(?:durante|por|en)\s+(?:todo\s+)?el\s+resto\s+de\s+(?:la|esta)\s+(?:conversaci[óo]n|sesi[óo]n|charla)\b` +
			`|\b(?:pelo|durante\s+o|por\s+todo\s+o|per\s+il|durante\s+il)\s+resto\s+(?:da|della)\s+(?:conversa|conversação|sess[ãa]o|conversazione|sessione|chat)\b` +
			`|\bprzez\s+reszt[ęe]\s+(?:tej\s+)?(?:rozmowy|sesji|czatu|konwersacji)`},
	{kSleeper, "Spanish", cHigh, []string{"cuando", "invoque", "llame", "use", "ejecute"},
		`\b(?:cuando|cada\s+vez\s+que)\s+se\s+(?:invoque|llame\s+a|use|utilice|ejecute)\s+[` + "`" + `'"]?[a-z][a-z0-9]*(?:[_.-][a-z0-9]+)+[` + "`" + `'"]?\s*,`},
	{kSendAddr, "Spanish", cAt, []string{"http", "https", "ftp", "ftps"},
		`\b(?:env[ií]a|env[ií]e|enviar|manda|mande|reenv[ií]a)\b[^.\n]{0,80}?\ba\s+` + addr},
	{kConsent, "Spanish, French or Polish", 0, []string{"aunque", "usuario", "utilisateur", "utilisatrice", "sans", "bez", "pytania"},
		`\baunque\s+el\s+usuario\s+(?:la\s+|lo\s+|las\s+|los\s+)?(?:nombre|pida|elija|mencione|prefiera)\b` +
			`|\b(?:d[èe]s\s+que|chaque\s+fois\s+que|quand|lorsque|lorsqu['’])\s*l['’]utilisat(?:eur|rice)\b[^.\n]{0,60}?\bsans\s+(?:lui\s+)?demander\b` +
			`|\bbez\s+pytani[ae]\s+(?:o\s+)?(?:zgod[ęey]|pozwoleni[ea]|potwierdzeni[ea])`},
	// French.
	{kOverride, "French", cHigh, []string{"ignore", "ignorer", "ignorez", "oublie", "oublier", "oubliez", "instructions", "consignes"},
		`\b(?:ignore[rz]?|oublie[rz]?)\s+(?:toutes\s+)?(?:les\s+)?(?:instructions|consignes|r[èe]gles)\s+(?:pr[ée]c[ée]dentes|ant[ée]rieures|ci-dessus)`},
	{kConceal, "French", cHigh, []string{"utilisateur", "utilisatrice", "dis", "dites", "sans", "parle", "parlez"},
		`\bne\s+(?:le\s+|lui\s+|leur\s+)?(?:dis|dites|mentionne[sz]?|r[ée]v[èe]le[sz]?|signale[sz]?)\s+(?:rien|pas|jamais)\s+(?:de\s+cela\s+|cela\s+|ceci\s+)?(?:à|a)\s+l['’]utilisat(?:eur|rice)` +
			`|\bn['’]en\s+parle[sz]?\s+pas\s+(?:à|a)\s+l['’]utilisat(?:eur|rice)` +
			`|\bsans\s+(?:le\s+dire|en\s+informer|informer|pr[ée]venir|avertir)\s+(?:à\s+)?l['’]utilisat(?:eur|rice)`},
	{kLineJump, "French", cHigh, []string{"avant", "utiliser", "outil", "outils", "répondre", "reste"},
		`\bavant\s+d['’](?:utiliser|appeler)\s+(?:tout|un|n['’]importe\s+quel)\s+autre\s+outil|\bavant\s+de\s+r[ée]pondre(?:\s+[àa]\s+l['’]utilisat(?:eur|rice))?\s*,` +
			`|\b(?:dans\s+)?toutes\s+(?:les|vos)\s+r[ée]ponses\s+(?:suivantes|futures|ult[ée]rieures)\b` +
			`|\b(?:pour|pendant|durant)\s+(?:tout\s+)?le\s+reste\s+de\s+(?:la|cette)\s+(?:conversation|session|discussion)\b`},
	{kSleeper, "French", cHigh, []string{"quand", "lorsque", "chaque"},
		`\b(?:quand|lorsque|lorsqu['’]|chaque\s+fois\s+que)\s*[` + "`" + `'"]?[a-z][a-z0-9]*(?:[_.-][a-z0-9]+)+[` + "`" + `'"]?\s+est\s+(?:appel[ée]|invoqu[ée]|utilis[ée]|ex[ée]cut[ée])e?\s*,`},
	{kSendAddr, "French", cAt, []string{"http", "https", "ftp", "ftps"},
		`\b(?:envoie[sz]?|envoyer|transf[èe]re[sz]?|transf[ée]rer)\b[^.\n]{0,80}?(?:à|\ba|\bvers)\s+` + addr},
	// German.
	{kOverride, "German", cHigh, []string{"ignoriere", "ignorieren", "vergiss", "vergessen", "missachte", "anweisungen"},
		`\b(?:ignoriere|ignorieren\s+sie|vergiss|vergessen\s+sie|missachte)\s+(?:alle\s+)?(?:die\s+)?(?:vorherigen|bisherigen|obigen|vorigen|fr[üu]heren)\s+(?:anweisungen|instruktionen|regeln|befehle)`},
	{kConceal, "German", cHigh, []string{"benutzer", "nutzer", "anwender", "sag", "sage", "sagen", "verrate", "ohne"},
		`\b(?:sag|sage|sagen\s+sie|erw[äa]hne|erw[äa]hnen\s+sie|verrate|verraten\s+sie)\s+(?:es\s+|das\s+|dies\s+)?(?:dem|den)\s+(?:benutzer|nutzer|anwender)\s+nicht` +
			`|\bohne\s+(?:den|dem)\s+(?:benutzer|nutzer|anwender)\s+(?:zu\s+)?(?:informieren|benachrichtigen|fragen|sagen)` +
			`|\b(?:der|die)\s+(?:benutzer|nutzer|anwender)(?:in)?\s+(?:darf|soll)\s+(?:nichts|nicht)\s+(?:davon\s+)?(?:wissen|erfahren|merken)` +
			`|\berw[äa]hne\s+(?:das|dies|es)\s+(?:dem\s+(?:benutzer|nutzer|anwender)\s+(?:gegen[üu]ber\s+)?)?(?:niemals|nie|nicht)\b`},
	{kLineJump, "German", cHigh, []string{"bevor", "allen", "rest"},
		`\bbevor\s+(?:du|sie)\s+(?:ein\s+|irgendein\s+)?(?:anderes\s+)?(?:werkzeug|tool)\s+(?:verwendest|benutzt|aufrufst|verwenden|benutzen|aufrufen)` +
			`|\bbevor\s+(?:du|sie)\s+(?:dem\s+(?:benutzer|nutzer)\s+)?antwort(?:est|en)\b` +
			`|\bin\s+allen\s+(?:weiteren|folgenden|k[üu]nftigen)\s+antworten\b` +
			`|\bf[üu]r\s+den\s+rest\s+(?:des\s+gespr[äa]chs|der\s+(?:unterhaltung|sitzung|konversation))\b`},
	{kSleeper, "German", cHigh, []string{"wenn", "sobald", "aufgerufen", "verwendet", "benutzt"},
		`\b(?:wenn|sobald|jedes\s+mal\s+wenn)\s+[` + "`" + `'"]?[a-z][a-z0-9]*(?:[_.-][a-z0-9]+)+[` + "`" + `'"]?(?:\s+tool)?\s+(?:aufgerufen|verwendet|benutzt|ausgef[üu]hrt)\s+wird\s*,`},
	{kSendAddr, "Russian", cHigh, []string{"http", "https", "ftp", "ftps"},
		`(?:перешли|перешлите|отправь|отправьте|пришли|загрузи|передай)[^.\n]{0,80}?(?:на|в|по\s+адресу)\s+` + addr},
	{kSendAddr, "German", cAt, []string{"http", "https", "ftp", "ftps"},
		`\b(?:sende|senden\s+sie|schicke|schicken\s+sie|leite)\b[^.\n]{0,80}?\b(?:an|nach)\s+` + addr},
	{kCovertCC, "Spanish, French or German", cAt, nil,
		`\b(?:copia\s+oculta\s+a|copie\s+cach[ée]e\s+(?:à|a)|blindkopie\s+an)\s+` + addr},
	// Dutch.
	{kPriority, "Dutch", 0, []string{"belangrijk"},
		`\bbelangrijk\s*[:!]\s*[^.\n]{0,100}?\b(?:doorsturen|doorstuurt|sturen|verzenden|versturen|kopi[eë]ren|uploaden)\b`},
	{kConceal, "Dutch", 0, []string{"gebruiker", "zonder", "vertel"},
		`\bzonder\s+(?:de\s+)?gebruiker\s+(?:iets\s+)?te\s+(?:vertellen|informeren|melden)|\bvertel\s+(?:het\s+|dit\s+)?(?:niet\s+aan\s+de\s+gebruiker|de\s+gebruiker\s+(?:niets|niet))`},
	// Portuguese.
	{kOverride, "Portuguese", cHigh, []string{"ignore"},
		`\b(?:ignore|esque[çc]a)\s+(?:todas\s+)?as\s+instru[çc][õo]es\s+anteriores`},
	{kConceal, "Portuguese", cHigh, []string{"conte", "diga", "informe", "sem"},
		`\bn[ãa]o\s+(?:conte|diga|informe|mencione)\s+(?:nada\s+)?(?:disso\s+|isso\s+)?ao\s+usu[áa]rio` +
			`|\bsem\s+(?:contar|dizer|informar|avisar)\s+(?:nada\s+)?ao\s+usu[áa]rio` +
			`|\bn[ãa]o\s+(?:[ée]|s[ãa]o|deve\s+ser|devem\s+ser)\s+(?:mostrad[ao]s?|exibid[ao]s?|revelad[ao]s?|informad[ao]s?)\s+(?:a|ao|aos)\s+usu[áa]rios?`},
	// Italian.
	{kOverride, "Italian", 0, []string{"ignora", "dimentica", "istruzioni"},
		`\b(?:ignora|dimentica)\s+(?:tutte\s+)?le\s+istruzioni\s+precedenti`},
	{kConceal, "Italian", 0, []string{"utente", "dire", "dirlo", "senza"},
		`\bnon\s+(?:dire|dirlo|dirgli|informare|menzionare)\s+(?:nulla\s+)?(?:all['’]|a\s+l['’])utente` +
			`|\bsenza\s+(?:dirlo|informare|avvisare)\s+(?:all['’]|l['’])utente`},
	// Russian.
	{kOverride, "Russian", cHigh, nil,
		`(?:игнорируй|игнорируйте|забудь|забудьте)\s+(?:все\s+)?(?:предыдущие|прошлые|прежние|вышеуказанные)\s+(?:инструкции|указания|правила)`},
	{kConceal, "Russian", cHigh, nil,
		`не\s+(?:говори|говорите|сообщай|сообщайте|рассказывай|рассказывайте)\s+(?:об\s+этом\s+|ничего\s+)?пользователю` +
			`|пользователю\s+(?:об\s+этом\s+|ничего\s+)?не\s+(?:говори|говорите|сообщай|сообщайте|рассказывай|рассказывайте)`},
	// Chinese.
	{kOverride, "Chinese", cHigh, nil,
		`(?:忽略|无视|忘记|忽视|忘掉)(?:掉)?(?:所有|全部)?(?:的)?(?:之前|以前|先前|上面|上述|以上|前面)(?:的)?(?:所有|全部)?(?:的)?(?:指令|指示|说明|规则|提示)`},
	{kConceal, "Chinese", cHigh, nil,
		`(?:不要|别|切勿|请勿|不得|不可)(?:告诉|告知|通知|提醒|透露给?)(?:用户|使用者)|不要让(?:用户|使用者)(?:知道|发现|看到)|(?:瞒着|隐瞒)(?:用户|使用者)`},
	{kSendAddr, "Chinese, Japanese or Korean", cHigh, nil,
		`(?:发送|发给|发到|转发|上传|寄送)[^。\n]{0,40}?` + addr +
			// Japanese and Korean put the verb last: the address, its
			// particle (に, へ; 로, 으로, 에) and the verb.
			`|` + addr + `\S*\s*(?:に|へ|まで)\s*(?:送信|送っ|送る|転送|アップロード|置き換え|変更)` +
			`|` + addr + `\S*\s*(?:로|으로|에게|에)[^.。]{0,24}?(?:전송|보내|업로드|전달)`},
	// Japanese.
	// Chinese, Japanese and Korean: every later reply.
	{kLineJump, "Chinese, Japanese or Korean", cHigh, nil,
		`(?:之后|以后|此后|接下来)(?:的)?(?:所有|每一?条|每个|每次)(?:回复|回答|响应)` +
			`|(?:今後|以降)の?(?:すべての|全ての)?(?:応答|返答|回答)` +
			`|이후\s*(?:의\s*)?모든\s*(?:응답|답변|대답)`},
	{kOverride, "Japanese", cHigh, nil,
		`(?:以前|前|上記|これまで)の(?:すべての)?(?:指示|命令|ルール)を無視`},
	{kConceal, "Japanese", cHigh, nil,
		`ユーザー(?:に|には)(?:言わない|伝えない|知らせない|教えない|言うな|伝えるな)`},
	// Korean.
	{kConceal, "Korean", cHigh, nil,
		`사용자(?:에게)?\s*(?:는\s*)?(?:알리지|말하지|전하지)\s*(?:마세요|말\s*것|마)`},
	// Turkish, Vietnamese, Indonesian, Arabic and Hindi: the override
	// and the concealment, each as a native writer phrases it.
	{kOverride, "Turkish, Vietnamese, Indonesian, Arabic or Hindi", cHigh, []string{"abaikan", "lupakan", "instruksi", "perintah"},
		`(?:^|[\s,.;:(])[öo]nceki\s+(?:t[üu]m\s+)?(?:talimatlar[ıi]|kurallar[ıi])\s+(?:yok\s+say|g[öo]rmezden\s+gel|unut)` +
			`|(?:^|[\s,.;:(])b[ỏo]\s+qua\s+(?:t[ấa]t\s+c[ảa]\s+)?(?:c[áa]c\s+|m[ọo]i\s+)?(?:h[ưu][ớo]ng\s+d[ẫa]n|ch[ỉi]\s+d[ẫa]n|ch[ỉi]\s+th[ịi])\s+(?:tr[ưu][ớo]c\s+(?:đ[óo]|kia)|tr[ưu][ớo]c|[ởo]\s+tr[êe]n)` +
			`|\b(?:abaikan|lupakan)\s+(?:semua\s+|seluruh\s+)?(?:instruksi|perintah|petunjuk|aturan)\s+(?:sebelumnya|di\s+atas|terdahulu)` +
			`|(?:تجاهل|انس)\s+(?:جميع\s+|كل\s+)?(?:التعليمات|الإرشادات|الأوامر)\s+(?:السابقة|أعلاه)` +
			`|(?:पिछले|पहले\s+के|ऊपर\s+के)\s+(?:सभी\s+)?(?:निर्देशों|आदेशों)\s+को\s+(?:अनदेखा|नज़रअंदाज़|नजरअंदाज|भूल)`},
	{kConceal, "Turkish, Vietnamese, Indonesian, Arabic or Hindi", cHigh, []string{"jangan", "tanpa", "pengguna"},
		`kullan[ıi]c[ıi](?:ya|dan)?\s+(?:bundan\s+|bu\s+konuda\s+|hi[çc]bir\s+şey\s+)?(?:söyleme|bahsetme|haber\s+verme|söylemeyin|bahsetmeyin)` +
			`|(?:^|[\s,.;:(])(?:kh[ôo]ng\s+(?:đ[ưu][ợo]c\s+)?|đ[ừu]ng\s+)(?:n[óo]i|cho\s+bi[ếe]t|th[ôo]ng\s+b[áa]o|đ[ềe]\s+c[ậa]p|ti[ếe]t\s+l[ộo])[^.\n]{0,30}?ng[ưu][ờo]i\s+d[ùu]ng` +
			`|\b(?:jangan|tanpa)\s+(?:pernah\s+)?(?:beri\s+tahu|memberi\s+tahu|memberitahu|beritahu|sebutkan|menyebutkan|katakan|mengatakan)\b[^.\n]{0,30}?\bpengguna\b` +
			`|(?:لا|دون)\s+(?:تخبر|تذكر|تُعلم|تعلم|إخبار|إعلام)\s+(?:ال)?مستخدم` +
			`|उपयोगकर्ता\s+को\s+(?:इसके\s+बारे\s+में\s+|यह\s+)?(?:मत|न|ना)\s+(?:बताएं|बताओ|बताना|बताएँ)|उपयोगकर्ता\s+को\s+बताए\s+बिना`},
}

// cueRows returns the table rows of MCP-SEC-MODEL-INSTRUCTION: one per
// cue, each with its own prefilter and regexp, all reporting the one
// rule (the first that matches a field is its finding).
func cueRows(rule string, fields fieldMask) []*detector {
	rows := make([]*detector, len(cues))
	for i, c := range cues {
		kind := c.kind
		if c.lang != "" {
			kind += ", " + c.lang
		}
		m := pattern(`(?i)` + c.expr)
		if c.kind == kTag {
			m = tags(c.expr)
		}
		rows[i] = &detector{rule: rule, what: "text addressed to the model", kind: kind, fields: fields,
			classes: c.classes, words: c.words, match: m}
	}
	return rows
}

// sectionTag is an opening tag: a description written as a document of
// tagged sections (<use_case>, <workflow>, <example>) has several.
var sectionTag = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`<([A-Za-z][A-Za-z0-9_-]{1,30})>`)
})

// minSections is how many distinct section tags, other than the
// instruction tags themselves, make a description a tagged document.
const minSections = 3

// tags returns the matcher of the instruction-tag row. An <instructions>
// tag in a description written as tagged sections (Neon's <use_case>,
// <workflow>, <next_steps>, <instructions>) is one section among others,
// not a block set apart from the description; <important>, <system>,
// <hidden> and the chat-template tokens count wherever they are.
func tags(expr string) matcher {
	re := sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)` + expr) })
	instr := sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)^<\s*/?\s*instructions?\s*>$`) })
	return func(text []byte, _ *scanContext) match {
		all := re().FindAllIndex(text, maxCount)
		if len(all) == 0 {
			return match{}
		}
		sections := map[string]bool{}
		for _, t := range sectionTag().FindAllSubmatch(text, -1) {
			if name := strings.ToLower(string(t[1])); !re().Match(t[0]) {
				sections[name] = true
			}
		}
		var m match
		for _, a := range all {
			if len(sections) >= minSections && instr().Match(text[a[0]:a[1]]) {
				continue
			}
			if m.count == 0 {
				m.off, m.n = a[0], a[1]-a[0]
			}
			m.count++
		}
		return m
	}
}
