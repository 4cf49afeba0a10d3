package httpapi

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestEveryCodeHasAStatus checks that every code the package names, in errorf
// calls, Error literals and the domain and Echo tables, has its row in codes: a
// missing row would answer 500.
func TestEveryCodeHasAStatus(t *testing.T) {
	named := map[string]string{} // code → where
	for _, e := range domainErrors {
		named[e.code] = "domainErrors"
	}
	for status, code := range echoCodes {
		named[code] = "echoCodes"
		if codes[code] != status {
			t.Errorf("echoCodes: %d → %q, whose status is %d", status, code, codes[code])
		}
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			var lit ast.Expr
			switch n := n.(type) {
			case *ast.CallExpr:
				if id, ok := n.Fun.(*ast.Ident); ok && id.Name == "errorf" {
					lit = n.Args[0]
				}
			case *ast.CompositeLit:
				if id, ok := n.Type.(*ast.Ident); ok && id.Name == "Error" {
					for _, elt := range n.Elts {
						if kv, ok := elt.(*ast.KeyValueExpr); ok && kv.Key.(*ast.Ident).Name == "Code" {
							lit = kv.Value
						}
					}
				}
			}
			if b, ok := lit.(*ast.BasicLit); ok && b.Kind == token.STRING {
				code, _ := strconv.Unquote(b.Value)
				named[code] = fset.Position(b.Pos()).String()
			}
			return true
		})
	}
	// intParam and boolParam name "invalid_"+key.
	named["invalid_count"], named["invalid_force"] = "intParam", "boolParam"
	if len(named) < 20 {
		t.Fatalf("found only %d codes: %v", len(named), named)
	}
	for code, where := range named {
		if _, ok := codes[code]; !ok {
			t.Errorf("%s names code %q, which has no row in codes", where, code)
		}
	}
}
