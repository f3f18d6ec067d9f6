package memo

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoPackageLevelCaches holds the rule that caches have one owner,
// built where the program starts (probe.Caches): no package under
// internal/ keeps a Memo, a schema.Cache or a Caches in a package-level
// variable, nor builds one there.
func TestNoPackageLevelCaches(t *testing.T) {
	cacheTypes := []string{"memo.Memo", "Memo[", "schema.Cache", "probe.Caches", "*Cache", "*Caches"}
	constructors := map[string]bool{"New": true, "NewCache": true, "NewCaches": true, "newLRU": true}
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				if vs.Type != nil {
					typ := types(vs.Type)
					for _, c := range cacheTypes {
						if strings.Contains(typ, c) {
							t.Errorf("%s: package-level %s of type %s", fset.Position(vs.Pos()), vs.Names[0].Name, typ)
						}
					}
				}
				for _, v := range vs.Values {
					ast.Inspect(v, func(n ast.Node) bool {
						call, ok := n.(*ast.CallExpr)
						if !ok {
							return true
						}
						fun := call.Fun
						if ix, ok := fun.(*ast.IndexExpr); ok { // memo.New[K]
							fun = ix.X
						}
						if ix, ok := fun.(*ast.IndexListExpr); ok {
							fun = ix.X
						}
						name := ""
						switch fn := fun.(type) {
						case *ast.Ident:
							if fn.Name != "New" { // a package's own New is not memo's
								name = fn.Name
							}
						case *ast.SelectorExpr:
							if x, ok := fn.X.(*ast.Ident); ok && (x.Name == "memo" || x.Name == "schema" || x.Name == "probe") {
								name = fn.Sel.Name
							}
						}
						if constructors[name] {
							t.Errorf("%s: package-level %s is built by %s", fset.Position(vs.Pos()), vs.Names[0].Name, name)
						}
						return true
					})
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read only %d files under internal/", files)
	}
}

// types is an expression's source form, enough to name a type.
func types(e ast.Expr) string {
	var b strings.Builder
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.StarExpr:
			b.WriteString("*")
		case *ast.SelectorExpr:
			b.WriteString(types(n.X) + "." + n.Sel.Name)
			return false
		case *ast.Ident:
			b.WriteString(n.Name)
		case *ast.IndexExpr, *ast.IndexListExpr:
			// Memo[K, V]: the generic's name, then "[".
			var x ast.Expr
			if ix, ok := n.(*ast.IndexExpr); ok {
				x = ix.X
			} else {
				x = n.(*ast.IndexListExpr).X
			}
			b.WriteString(types(x) + "[")
			return false
		}
		return true
	})
	return b.String()
}
