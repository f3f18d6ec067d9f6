package probe_test

import (
	"go/ast"
	"go/parser"
	gotoken "go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/driftd/driftd/internal/catalogue"
)

// Where is rule X emitted: one hop. Every catalogue row names the function
// that builds its findings (Rule.Emitter); these tests read the source of
// the probe and catalogue packages and hold the table and the code to each
// other, in both directions.

// notEmitters are functions that read a rule constant without emitting the
// rule, each with the reason. An entry that no longer applies fails too.
var notEmitters = map[string]string{
	"catalogue.ServedChangeID": "maps a CompareTool finding's rule to a served-change id",
}

// emitterPackages are the packages whose functions build findings, by the
// qualifier Rule.Emitter uses, with their directory from here.
var emitterPackages = map[string]string{"probe": ".", "catalogue": "../catalogue", "poison": "../poison"}

// ruleRef is one reference to a rule constant inside a function body.
type ruleRef struct{ fn, rule string }

// parsed holds the package-qualified names of the functions and methods
// declared, and every reference to a rule constant from their bodies.
type parsed struct {
	funcs map[string]bool
	refs  []ruleRef
}

func parseEmitters(t *testing.T) parsed {
	t.Helper()
	constRule := ruleConstants(t)
	p := parsed{funcs: map[string]bool{}}
	for pkg, dir := range emitterPackages {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		fset := gotoken.NewFileSet()
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Body == nil {
					continue
				}
				name := pkg + "." + fd.Name.Name
				p.funcs[name] = true
				for _, c := range referencedConstants(fd.Body, pkg) {
					if rule, ok := constRule[c]; ok {
						p.refs = append(p.refs, ruleRef{name, rule})
					}
				}
			}
		}
	}
	return p
}

// referencedConstants returns the catalogue identifiers a body names:
// catalogue.X from another package, X inside catalogue.
func referencedConstants(body *ast.BlockStmt, pkg string) []string {
	var out []string
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if x, ok := n.X.(*ast.Ident); ok && x.Name == "catalogue" && pkg != "catalogue" {
				out = append(out, n.Sel.Name)
			}
			return pkg == "catalogue" // elsewhere the selector's parts are not catalogue names
		case *ast.Ident:
			if pkg == "catalogue" {
				out = append(out, n.Name)
			}
		}
		return true
	})
	return out
}

// ruleConstants maps the names of catalogue's rule id constants to the ids,
// read from its source.
func ruleConstants(t *testing.T) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(gotoken.NewFileSet(), "../catalogue/rules.go", nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != gotoken.CONST {
			continue
		}
		for _, s := range gd.Specs {
			vs := s.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if i >= len(vs.Values) {
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != gotoken.STRING {
					continue
				}
				if id, err := strconv.Unquote(lit.Value); err == nil {
					if _, isRule := catalogue.Lookup(id); isRule {
						out[name.Name] = id
					}
				}
			}
		}
	}
	if len(out) != len(catalogue.Rules) {
		t.Fatalf("found %d rule constants in rules.go for %d rows", len(out), len(catalogue.Rules))
	}
	return out
}

// TestEveryRuleNamesItsEmitter: each row's Emitter is a function of the
// probe, catalogue or poison package whose body names the row's constant.
func TestEveryRuleNamesItsEmitter(t *testing.T) {
	p := parseEmitters(t)
	for _, r := range catalogue.Rules {
		pkg, _, _ := strings.Cut(r.Emitter, ".")
		if _, ok := emitterPackages[pkg]; !ok {
			t.Errorf("%s: emitter %q is not probe.F, catalogue.F or poison.F", r.ID, r.Emitter)
			continue
		}
		if !p.funcs[r.Emitter] {
			t.Errorf("%s: emitter %s is not a function in the source", r.ID, r.Emitter)
			continue
		}
		if !slices.Contains(p.refs, ruleRef{r.Emitter, r.ID}) {
			t.Errorf("%s: emitter %s does not name the rule's constant", r.ID, r.Emitter)
		}
	}
}

// TestEveryEmitterIsNamed: a function that names a rule constant is that
// rule's Emitter, or listed in notEmitters with a reason.
func TestEveryEmitterIsNamed(t *testing.T) {
	p := parseEmitters(t)
	used := map[string]bool{}
	for _, ref := range p.refs {
		r, _ := catalogue.Lookup(ref.rule)
		if r.Emitter == ref.fn {
			continue
		}
		if _, ok := notEmitters[ref.fn]; ok {
			used[ref.fn] = true
			continue
		}
		t.Errorf("%s names %s, whose row says it is emitted by %s: fix the row, or move the finding into its emitter", ref.fn, ref.rule, r.Emitter)
	}
	for fn := range notEmitters {
		if !used[fn] {
			t.Errorf("stale notEmitters entry %s: it names no rule constant any more", fn)
		}
	}
}
