package poison

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/mcp"
)

// destroys is a description that opens by saying the tool destroys or
// changes something — its first verb, after an adverb or two, deletes,
// empties, changes, writes, moves, deploys, pays — or that says anywhere
// that what it does cannot be undone. Sending and submitting are left
// out: servers mark a feedback form read-only because nothing of the
// user's changes.
var destroys = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^\W*(?:(?:permanently|irreversibly|recursively|forcibly|completely|immediately)\s+){0,2}(?:deletes?|removes?|wipes?|drops?|destroys?|purges?|erases?|truncates?|overwrites?|terminates?|kills?|revokes?|uninstalls?|shreds?|empties|empty|clears?|resets?|flush(?:es)?|changes?|updates?|modif(?:y|ies)|writes?|moves?|renames?|edits?|deploys?|installs?|transfers?|pays?)\b` +
		// Or says anywhere that what it does cannot be undone.
		`|\b(?:cannot|can'?t|can\s+not)\s+be\s+(?:restored|recovered|undone|reversed)\b|\birreversibl[ey]\b`)
})

// destroyWords are the first words of a tool name that says it destroys
// or changes (delete_repository, removeUser, wipe-cache, update_record).
var destroyWords = map[string]bool{"delete": true, "remove": true, "wipe": true, "drop": true, "destroy": true, "purge": true, "erase": true,
	"truncate": true, "overwrite": true, "terminate": true, "kill": true, "revoke": true, "uninstall": true, "shred": true, "rm": true, "del": true,
	"empty": true, "clear": true, "reset": true, "flush": true, "update": true, "write": true, "change": true, "modify": true,
	"move": true, "rename": true, "edit": true, "deploy": true, "install": true, "transfer": true, "pay": true}

// annotationClaim returns the MCP-SEC-ANNOTATION-CLAIM finding of a tool
// whose annotations claim readOnlyHint while its name or description
// says it destroys, or nil. Only the annotations are decoded, and only
// when they name readOnlyHint.
func annotationClaim(t mcp.Tool) []catalogue.Finding {
	if len(t.Annotations) == 0 || !bytes.Contains(t.Annotations, []byte(`"readOnlyHint"`)) {
		return nil
	}
	var a struct {
		ReadOnly *bool `json:"readOnlyHint"`
	}
	if json.Unmarshal(t.Annotations, &a) != nil || a.ReadOnly == nil || !*a.ReadOnly {
		return nil
	}
	where := ""
	if w, _ := wordsOf([]byte(t.Name), nil, nil); w != nil {
		if first, _, _ := strings.Cut(strings.ToLower(string(w)), " "); destroyWords[first] {
			where = "its name"
		}
	} else if destroyWords[strings.ToLower(t.Name)] {
		where = "its name"
	}
	if where == "" && destroys().MatchString(t.Description) {
		where = "the first sentence of its description"
	}
	if where == "" {
		return nil
	}
	f := catalogue.New(catalogue.SecAnnotationClaim, t.Name, fmt.Sprintf(
		"the annotations say readOnlyHint: true, but %s says the tool deletes or changes something (a verb of changing)", where))
	f.Pointer = "/annotations/readOnlyHint"
	return []catalogue.Finding{f}
}
