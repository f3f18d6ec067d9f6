package format

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/manifest"
	"github.com/driftd/driftd/internal/probe"
)

// invisibles are one or more code points of each class the sanitiser
// makes visible: zero-width, BOM, bidi controls, tag characters,
// variation selectors with no base, other format characters, controls,
// separators, default-ignorables and noncharacters. U+FE0F is left out
// on purpose: after U+26A0 it is the ⚠️ of driftd's own Markdown.
var invisibles = []rune{
	0x200b, 0x200c, 0x200d, 0x200e, 0x200f, 0x2060, 0x2061, 0x2064, 0xfeff,
	0x202a, 0x202d, 0x202e, 0x2066, 0x2067, 0x2069, 0x061c,
	0xe0001, 0xe0020, 0xe0041, 0xe007f,
	0xfe00, 0xfe01, 0xe0100, 0xe01ef,
	0x00ad, 0x180e, 0xfff9, 0x2028, 0x2029, 0x1b, 0x07, 0x0d, 0x0a, 0x85, 0x9b,
	0x034f, 0x3164, 0xffa0, 0xfdd0, 0xfffe,
}

// hidden is a string of every invisible: the variation selectors follow
// other invisibles, so none of them has a base.
func hidden() string {
	var b strings.Builder
	for _, r := range invisibles {
		b.WriteRune(r)
	}
	return b.String()
}

// TestNoFormatCarriesRawInvisibles runs driftd diff's pipeline (the
// probe's border, then each renderer) over two manifests whose tool
// names, property names, enum values, titles and descriptions carry
// every invisible character, and holds every format — SARIF, JUnit,
// Markdown, the JSON report and the text output — to none of them raw,
// and to their escapes being there (made visible, not dropped).
func TestNoFormatCarriesRawInvisibles(t *testing.T) {
	h := hidden()
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	tool := func(name, enum string) string {
		return fmt.Sprintf(`{"name":%s,"title":%s,"description":%s,"inputSchema":{"type":"object","properties":{%s:{"type":"string","enum":[%s]}}}}`,
			q(name), q("title"+h), q("desc"+h+enum), q("p"+h), q(enum+h))
	}
	read := func(name, body string) (File, *manifest.Manifest) {
		m, err := manifest.FromBytes(name, []byte(body))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return File{Path: name, Bytes: []byte(body)}, m
	}
	oldFile, old := read("old.json", `{"tools":[`+tool("shared"+h, "a")+`,`+tool("gone"+h, "a")+`]}`)
	newFile, updated := read("new.json", `{"tools":[`+tool("shared"+h, "b")+`,`+tool("added"+h, "a")+`]}`)
	rep := probe.Diff("orders", old, updated, probe.Options{Version: "1.2.3"})
	if len(rep.Findings) < 3 {
		t.Fatalf("want findings about the hostile tools, got %d", len(rep.Findings))
	}
	run := &Run{Report: rep, Command: "diff", Declared: DeclaredOf(old), Files: []File{newFile, oldFile},
		FailOn: catalogue.Error, Version: "1.2.3"}

	outputs := map[string][]byte{}
	for ext := range renderers {
		outputs[ext] = render(t, ext, run)
	}
	var js bytes.Buffer
	enc := json.NewEncoder(&js)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(rep); err != nil {
		t.Fatal(err)
	}
	outputs["json"] = js.Bytes()
	var text bytes.Buffer
	if err := probe.WriteText(&text, rep); err != nil {
		t.Fatal(err)
	}
	outputs["text"] = text.Bytes()

	for name, out := range outputs {
		for _, r := range invisibles {
			if r == '\n' {
				continue // the formats' own line breaks; the escapes below show the server's
			}
			if i := bytes.IndexRune(out, r); i >= 0 {
				t.Errorf("%s carries a raw %U: …%+q…", name, r, out[max(0, i-40):min(len(out), i+40)])
			}
		}
		if !bytes.Contains(out, []byte(`u200b`)) || !bytes.Contains(out, []byte(`U000e0041`)) {
			t.Errorf("%s does not show the escapes (\\u200b, \\U000e0041): the characters were dropped, or never reached it:\n%.1500s", name, out)
		}
	}
}
