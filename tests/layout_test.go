package tests

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/pkg/errors"
)

// The layout limits of issue 27, for every Go file of the repository that is not generated.
const (
	maxFileLines = 900 // lines of one file
	maxFuncLines = 150 // lines of one function, from "func" to its closing brace
)

// layoutAllowed lists the files that break a limit today, in packages whose owners split
// them: each entry is a path relative to the repository root, with "file" (too many lines)
// or the names of the functions over the limit. TestLayout fails when a file breaks a limit
// not listed here, and when a listed file or function no longer breaks it, so the list only
// shrinks: delete an entry once its file is split.
var layoutAllowed = map[string][]string{}

// generatedRE is Go's marker of a generated file (go help generate): a line of its own,
// before the package clause.
var generatedRE = regexp.MustCompile(`^// Code generated .* DO NOT EDIT\.$`)

// layoutViolation is one broken limit: a file too long ("file") or a function too long (its
// name, Recv.Name for a method).
type layoutViolation struct {
	path, what string
	lines      int
}

// TestLayout walks the repository from its root (the folder above this package) and checks
// every .go file outside testdata and hidden folders (nested modules included) against
// maxFileLines and maxFuncLines. Exempt: generated files, and type-switch dispatchers —
// functions whose body is a single switch or type-switch statement.
func TestLayout(t *testing.T) {
	found, err := layoutViolations("..")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, v := range found {
		key := v.path + " " + v.what
		seen[key] = true
		if !listed(v.path, v.what) {
			t.Errorf("%s: %s has %d lines (limits: %d per file, %d per function outside generated code and single-switch dispatchers); split it",
				v.path, v.what, v.lines, maxFileLines, maxFuncLines)
		}
	}
	for path, whats := range layoutAllowed {
		for _, w := range whats {
			if !seen[path+" "+w] {
				t.Errorf("%s: %s is within the limits now (or gone): remove it from layoutAllowed", path, w)
			}
		}
	}
}

// listed reports whether layoutAllowed lists what in path.
func listed(path, what string) bool {
	for _, w := range layoutAllowed[path] {
		if w == what {
			return true
		}
	}
	return false
}

// layoutViolations returns every broken limit under root, sorted by path and name.
func layoutViolations(root string) ([]layoutViolation, error) {
	var out []layoutViolation
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		vs, err := fileViolations(path, filepath.ToSlash(rel))
		out = append(out, vs...)
		return err
	})
	sort.Slice(out, func(i, j int) bool {
		if out[i].path != out[j].path {
			return out[i].path < out[j].path
		}
		return out[i].what < out[j].what
	})
	return out, err
}

// fileViolations parses one file and returns its broken limits (none for a generated file).
func fileViolations(path, rel string) ([]layoutViolation, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
	if err != nil {
		return nil, errors.Wrapf(err, "tests: layout: parsing %s", rel)
	}
	if isGenerated(f) {
		return nil, nil
	}
	var out []layoutViolation
	if n := fset.File(f.Pos()).LineCount(); n > maxFileLines {
		out = append(out, layoutViolation{rel, "file", n})
	}
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Body == nil || isDispatcher(fn.Body) {
			continue
		}
		if n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1; n > maxFuncLines {
			out = append(out, layoutViolation{rel, funcName(fn), n})
		}
	}
	return out, nil
}

// isGenerated reports whether a comment before the package clause is Go's generated-code
// marker.
func isGenerated(f *ast.File) bool {
	for _, g := range f.Comments {
		if g.Pos() >= f.Package {
			break
		}
		for _, c := range g.List {
			if generatedRE.MatchString(c.Text) {
				return true
			}
		}
	}
	return false
}

// isDispatcher reports whether a function body is a single switch or type-switch statement.
func isDispatcher(body *ast.BlockStmt) bool {
	if len(body.List) != 1 {
		return false
	}
	switch body.List[0].(type) {
	case *ast.SwitchStmt, *ast.TypeSwitchStmt:
		return true
	}
	return false
}

// funcName is a function's name, Recv.Name for a method (the receiver's type without * or
// type parameters).
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	typ := fn.Recv.List[0].Type
	for {
		switch x := typ.(type) {
		case *ast.StarExpr:
			typ = x.X
			continue
		case *ast.IndexExpr:
			typ = x.X
			continue
		case *ast.IndexListExpr:
			typ = x.X
			continue
		case *ast.Ident:
			return x.Name + "." + fn.Name.Name
		}
		return fn.Name.Name
	}
}

// TestLayoutRules checks the checker on small made-up files, the line counts by
// construction: a function of maxFuncLines lines passes and one more fails; a single switch
// of any length passes, a switch with one statement more does not; a file of maxFileLines
// lines passes and one more fails; a generated file passes whatever its length; a method is
// named by its receiver type.
func TestLayoutRules(t *testing.T) {
	// fn is a function of n lines: "func name() {", n−2 statements, "}".
	fn := func(head string, n int) string {
		return head + " {\n" + strings.Repeat("\t_ = 0\n", n-2) + "}\n"
	}
	// sw is a function of n lines whose body is one switch (plus extra statements before it).
	sw := func(name string, n int, extra string) string {
		return "func " + name + "(x int) {\n" + extra + "\tswitch x {\n" + strings.Repeat("\tcase 0:\n", n-4) + "\t}\n}\n"
	}
	// pad fills a file to n lines with blank lines.
	pad := func(src string, n int) string {
		return src + strings.Repeat("\n", n-strings.Count(src, "\n"))
	}
	const pkg = "package p\n\n"
	const gen = "// Code generated by hand. DO NOT EDIT.\n\n"
	cases := []struct {
		name string
		src  string
		want []string // "what lines" of each violation
	}{
		{"function at the limit", pkg + fn("func f()", maxFuncLines), nil},
		{"function one over", pkg + fn("func f()", maxFuncLines+1), []string{fmt.Sprintf("f %d", maxFuncLines+1)}},
		{"method one over", pkg + "type T[E any] struct{}\n\n" + fn("func (t *T[E]) m()", maxFuncLines+1), []string{fmt.Sprintf("T.m %d", maxFuncLines+1)}},
		{"single switch dispatcher", pkg + sw("d", 3*maxFuncLines, ""), nil},
		{"switch and one statement more", pkg + sw("d", 3*maxFuncLines, "\t_ = x\n"), []string{fmt.Sprintf("d %d", 3*maxFuncLines+1)}},
		{"file at the limit", pad(pkg, maxFileLines), nil},
		{"file one over", pad(pkg, maxFileLines+1), []string{fmt.Sprintf("file %d", maxFileLines+1)}},
		{"generated", pad(gen+pkg+fn("func f()", 2*maxFuncLines), 2*maxFileLines), nil},
		{"generated marker after the package clause", pkg + gen + fn("func f()", maxFuncLines+1), []string{fmt.Sprintf("f %d", maxFuncLines+1)}},
	}
	dir := t.TempDir()
	for _, c := range cases {
		path := filepath.Join(dir, "x.go")
		if err := os.WriteFile(path, []byte(c.src), 0o644); err != nil {
			t.Fatal(err)
		}
		vs, err := fileViolations(path, "x.go")
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var got []string
		for _, v := range vs {
			got = append(got, fmt.Sprintf("%s %d", v.what, v.lines))
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: violations %q, want %q", c.name, got, c.want)
		}
	}
}
