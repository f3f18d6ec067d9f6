package poison

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/mcp"
)

// changeVerbs are the verbs — a description's first (after an adverb or
// two), or a tool name's first word — that say a tool destroys or changes
// something: deletes, empties, changes, writes, moves, deploys, pays.
// Sending and submitting are left out: servers mark a feedback form
// read-only because nothing of the user's changes.
var changeVerbs = func() map[string]bool {
	m := map[string]bool{}
	for _, v := range strings.Fields(`delete remove wipe drop destroy purge erase truncate overwrite terminate kill
		revoke uninstall shred empty clear reset flush change update modify write move rename edit deploy install
		transfer pay`) {
		m[v] = true
		m[v+"s"] = true
		if strings.HasSuffix(v, "y") && v != "pay" {
			m[strings.TrimSuffix(v, "y")+"ies"] = true // empties, modifies
		}
		if strings.HasSuffix(v, "sh") {
			m[v+"es"] = true // flushes
		}
	}
	m["rm"], m["del"] = true, true
	return m
}()

// adverbs may come before a description's first verb.
var adverbs = map[string]bool{"permanently": true, "irreversibly": true, "recursively": true, "forcibly": true, "completely": true, "immediately": true}

// undoable are the phrases that say what a tool does cannot be undone.
var undoable = func() []string {
	out := []string{"rreversib"}
	for _, neg := range []string{"cannot", "can't", "can not", "not"} {
		for _, v := range []string{"restored", "recovered", "undone", "reversed"} {
			out = append(out, neg+" be "+v)
		}
	}
	return out
}()

// annotationClaim returns the MCP-SEC-ANNOTATION-CLAIM finding of a tool
// whose annotations claim readOnlyHint while its name or description
// says it destroys or changes something, or nil. The annotations are
// decoded only for a tool whose words say so.
func annotationClaim(t mcp.Tool) []catalogue.Finding {
	if len(t.Annotations) == 0 || !bytes.Contains(t.Annotations, []byte(`"readOnlyHint"`)) {
		return nil
	}
	where := ""
	switch {
	case changeVerbs[firstWord(t.Name)]:
		where = "its name"
	case changeVerbs[firstVerb(t.Description)]:
		where = "the first verb of its description"
	case saysUndoable(t.Description):
		where = "its description (cannot be undone)"
	default:
		return nil
	}
	var a struct {
		ReadOnly *bool `json:"readOnlyHint"`
	}
	if json.Unmarshal(t.Annotations, &a) != nil || a.ReadOnly == nil || !*a.ReadOnly {
		return nil
	}
	f := catalogue.New(catalogue.SecAnnotationClaim, t.Name, fmt.Sprintf(
		"the annotations say readOnlyHint: true, but %s says the tool deletes or changes something", where))
	f.Pointer = "/annotations/readOnlyHint"
	return []catalogue.Finding{f}
}

// firstWord returns a name's first word, lower case (delete_repository,
// removeUser, wipe-cache).
func firstWord(name string) string {
	if w, _ := wordsOf([]byte(name), nil, nil); w != nil {
		name = string(w)
	}
	first, _, _ := strings.Cut(name, " ")
	return strings.ToLower(first)
}

// firstVerb returns a description's first word, lower case, after up to
// two adverbs of manner ("Permanently deletes …").
func firstVerb(desc string) string {
	for n := 0; n < 3; n++ {
		for desc != "" && !letter(desc[0]) {
			desc = desc[1:]
		}
		end := 0
		for end < len(desc) && letter(desc[end]) {
			end++
		}
		if w := strings.ToLower(desc[:end]); !adverbs[w] {
			return w
		}
		desc = desc[end:]
	}
	return ""
}

func saysUndoable(desc string) bool {
	for _, p := range undoable {
		if strings.Contains(desc, p) {
			return true
		}
	}
	return false
}
