package provider

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// engineFile reports whether name holds an engine's code, where the
// engines may be told apart: engine.go and engine_*.go.
func engineFile(name string) bool {
	return name == "engine.go" || strings.HasPrefix(name, "engine_")
}

// engineBranches lists, in the package's non-test Go files outside the
// engines' files, every place that tells the engines apart: a comparison
// with an engine's name or with the engine attribute, a switch on either,
// or a use of an engine's implementation type.
func engineBranches(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	engineNames := map[string]bool{"engineHelm": true, "engineFlux": true}
	implementations := map[string]bool{"helmEngine": true, "fluxEngine": true, "helmFound": true, "fluxFound": true}
	// mentionsEngine reports whether e names an engine, reads the engine
	// attribute (m.Engine) or an engine's name (engine.name()).
	mentionsEngine := func(e ast.Expr) bool {
		found := false
		ast.Inspect(e, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.Ident:
				found = found || engineNames[n.Name]
			case *ast.SelectorExpr:
				found = found || n.Sel.Name == "Engine"
			case *ast.CallExpr:
				sel, ok := n.Fun.(*ast.SelectorExpr)
				found = found || ok && sel.Sel.Name == "name" && len(n.Args) == 0
			}
			return !found
		})
		return found
	}
	var out []string
	fset := token.NewFileSet()
	for _, file := range files {
		name := filepath.Base(file)
		if strings.HasSuffix(name, "_test.go") || engineFile(name) {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		report := func(n ast.Node, what string) {
			out = append(out, fset.Position(n.Pos()).String()+": "+what)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BinaryExpr:
				if (n.Op == token.EQL || n.Op == token.NEQ) && (mentionsEngine(n.X) || mentionsEngine(n.Y)) {
					report(n, "compares with an engine")
				}
			case *ast.SwitchStmt:
				if n.Tag != nil && mentionsEngine(n.Tag) {
					report(n, "switches on the engine")
				}
			case *ast.Ident:
				if implementations[n.Name] {
					report(n, "uses "+n.Name)
				}
			}
			return true
		})
	}
	return out
}

// TestEngineBranches: outside the engines' files nothing tells the engines
// apart; engineOf and engineFound choose one, and everything that differs
// is a method of it.
func TestEngineBranches(t *testing.T) {
	for _, b := range engineBranches(t, ".") {
		t.Errorf("%s: outside the engines' files (engine.go, engine_*.go); make it a method of the engine", b)
	}
}

// TestEngineBranchesFound: the check finds the branches it is meant to.
func TestEngineBranchesFound(t *testing.T) {
	dir := t.TempDir()
	const src = `package provider

func a(m *releaseModel) bool { return m.Engine.ValueString() == engineFlux }

func b(m *releaseModel) {
	switch m.Engine.ValueString() {
	}
}

func c(r *releaseResource) engine { return fluxEngine{r} }

func d(m *releaseModel) string { return engineFlux + " is a name, not a branch" }

func e(r *releaseResource, a, b *releaseModel) bool { return r.engineOf(a).name() != r.engineOf(b).name() }
`
	if err := os.WriteFile(filepath.Join(dir, "release_branchy.go"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "engine_flux_ok.go"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	got := engineBranches(t, dir)
	if len(got) != 4 {
		t.Fatalf("found %d branches, want 4 (a comparison, a switch, a type, engines' names compared), all in release_branchy.go: %q", len(got), got)
	}
	for _, b := range got {
		if !strings.Contains(b, "release_branchy.go") {
			t.Errorf("%s: in an engine's file, which may tell the engines apart", b)
		}
	}
}
