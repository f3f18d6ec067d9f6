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

// destroys is a description that opens by saying the tool destroys
// something: its first verb, after an adverb or two, is one of
// deleting.
var destroys = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^\W*(?:(?:permanently|irreversibly|recursively|forcibly|completely|immediately)\s+){0,2}(?:deletes?|removes?|wipes?|drops?|destroys?|purges?|erases?|truncates?|overwrites?|terminates?|kills?|revokes?|uninstalls?|shreds?)\b`)
})

// destroyWords are the first words of a tool name that says it
// destroys (delete_repository, removeUser, wipe-cache).
var destroyWords = map[string]bool{"delete": true, "remove": true, "wipe": true, "drop": true, "destroy": true, "purge": true, "erase": true,
	"truncate": true, "overwrite": true, "terminate": true, "kill": true, "revoke": true, "uninstall": true, "shred": true, "rm": true, "del": true}

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
		"the annotations say readOnlyHint: true, but %s says the tool deletes or overwrites (a verb of destroying)", where))
	f.Pointer = "/annotations/readOnlyHint"
	return []catalogue.Finding{f}
}
