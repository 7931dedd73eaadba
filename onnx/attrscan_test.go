package onnx

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// A static scan of the package's own source for the attributes each operator's lowering
// reads: TestOperatorDocsAttributes compares it with the documentation of opDocs.
//
// The roots of an operator are its entry in an operator table (a package-level
// map[string]opFn literal: a function, a function literal or a call such as opReduce("sum")),
// its case in foldFn (the import-time evaluation on constants) and the extra roots below. From
// the roots the scan follows every package-level function and every method of the package
// that is named (called or passed as a value), transitively. An attribute is read by
//   - n.attrInt("name", …), n.attrFloat("name", …), n.attrInts("name");
//   - n.Attrs["name"];
//   - for k, a := range n.Attrs { switch k { case "name": … } };
//   - a call f("name", …) of a function literal f := func(p string, …) that passes its
//     parameter p to one of the forms above (opConvTranspose's attr).
//
// Any other use of Attrs, or an attribute name that is not a string literal, is reported as a
// problem: the scan cannot see which attribute it reads.

// isAttrAccessor reports whether name is a Node method that reads one attribute by name (its
// first argument).
func isAttrAccessor(name string) bool {
	return name == "attrInt" || name == "attrFloat" || name == "attrInts"
}

// extraRoots are the functions outside the operator tables and foldFn that lower operator op:
// Lower's early pass (fold.go) lowers a Cast of a term before the operator tables see it,
// reading the node's attributes only through these functions (TestAttrScanEarly checks that
// early reads none itself).
func extraRoots(op string) []string {
	if op == "Cast" {
		return []string{"castTerm", "castsToInteger"}
	}
	return nil
}

// srcScan is the parsed non-test source of the package.
type srcScan struct {
	fset    *token.FileSet
	imports map[string]bool            // names of imported packages
	funcs   map[string]*ast.FuncDecl   // package-level functions
	methods map[string][]*ast.FuncDecl // methods by name (of any receiver type)
	tables  map[string]ast.Expr        // operator → its operator-table value
	folds   map[string]ast.Expr        // operator → foldFn's result for it
	where   map[string]string          // operator → the table that holds it
}

// parseOwnSource parses the package's non-test Go files.
func parseOwnSource(t *testing.T) *srcScan {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	srcs := map[string][]byte{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		if srcs[name], err = os.ReadFile(name); err != nil {
			t.Fatal(err)
		}
	}
	return parseSources(t, srcs)
}

// parseSources parses the files srcs (name → source) of one package.
func parseSources(t *testing.T, srcs map[string][]byte) *srcScan {
	t.Helper()
	s := &srcScan{fset: token.NewFileSet(), imports: map[string]bool{}, funcs: map[string]*ast.FuncDecl{},
		methods: map[string][]*ast.FuncDecl{}, tables: map[string]ast.Expr{}, folds: map[string]ast.Expr{},
		where: map[string]string{}}
	names := make([]string, 0, len(srcs))
	for name := range srcs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		src := srcs[name]
		f, err := parser.ParseFile(s.fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			local := p[strings.LastIndex(p, "/")+1:]
			if im.Name != nil {
				local = im.Name.Name
			}
			s.imports[local] = true
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv != nil {
					s.methods[d.Name.Name] = append(s.methods[d.Name.Name], d)
				} else {
					s.funcs[d.Name.Name] = d
				}
			case *ast.GenDecl:
				s.opTableLits(t, d)
			}
		}
	}
	fold := s.funcs["foldFn"]
	if fold == nil {
		t.Fatal("no function foldFn in the package")
	}
	ast.Inspect(fold.Body, func(x ast.Node) bool {
		cc, ok := x.(*ast.CaseClause)
		if !ok || len(cc.Body) != 1 {
			return true
		}
		ret, ok := cc.Body[0].(*ast.ReturnStmt)
		if !ok || len(ret.Results) != 1 {
			t.Fatalf("%s: a case of foldFn that is not one return", s.fset.Position(cc.Pos()))
		}
		for _, e := range cc.List {
			if op, ok := stringLit(e); ok {
				s.folds[op] = ret.Results[0]
			}
		}
		return false
	})
	if len(s.folds) == 0 {
		t.Fatal("foldFn: no cases found")
	}
	return s
}

// opTableLits records the entries of package-level map[string]opFn literals.
func (s *srcScan) opTableLits(t *testing.T, d *ast.GenDecl) {
	for _, sp := range d.Specs {
		vs, ok := sp.(*ast.ValueSpec)
		if !ok {
			continue
		}
		for i, v := range vs.Values {
			cl, ok := v.(*ast.CompositeLit)
			if !ok {
				continue
			}
			mt, ok := cl.Type.(*ast.MapType)
			if !ok {
				continue
			}
			if id, ok := mt.Value.(*ast.Ident); !ok || id.Name != "opFn" {
				continue
			}
			for _, el := range cl.Elts {
				kv := el.(*ast.KeyValueExpr)
				op, ok := stringLit(kv.Key)
				if !ok {
					t.Fatalf("%s: an operator table key that is not a string literal", s.fset.Position(kv.Pos()))
				}
				if prev, dup := s.where[op]; dup {
					t.Fatalf("operator %s is in two tables (%s and %s)", op, prev, vs.Names[i].Name)
				}
				s.tables[op] = kv.Value
				s.where[op] = vs.Names[i].Name
			}
		}
	}
}

func stringLit(e ast.Expr) (string, bool) {
	bl, ok := e.(*ast.BasicLit)
	if !ok || bl.Kind != token.STRING {
		return "", false
	}
	v, err := strconv.Unquote(bl.Value)
	return v, err == nil
}

// reads is the set of attribute names read from the roots (expressions and functions by name),
// not following the functions in stop, and the problems the scan met.
func (s *srcScan) reads(roots []ast.Node, stop map[string]bool) (map[string]bool, []string) {
	attrs := map[string]bool{}
	var problems []string
	seen := map[*ast.FuncDecl]bool{}
	var queue []ast.Node
	enqueue := func(d *ast.FuncDecl) {
		if d != nil && !seen[d] && !stop[d.Name.Name] && !(d.Recv != nil && isAttrAccessor(d.Name.Name)) {
			seen[d] = true
			queue = append(queue, d.Body)
		}
	}
	queue = append(queue, roots...)
	for len(queue) > 0 {
		x := queue[0]
		queue = queue[1:]
		s.scanBody(x, attrs, &problems, func(name string, method bool) {
			if method {
				for _, d := range s.methods[name] {
					enqueue(d)
				}
				return
			}
			enqueue(s.funcs[name])
		})
	}
	sort.Strings(problems)
	return attrs, problems
}

// scanBody records the attributes read in x and names every function and method it refers to.
func (s *srcScan) scanBody(x ast.Node, attrs map[string]bool, problems *[]string, refer func(name string, method bool)) {
	// local function literals that read the attribute named by their parameter i
	localAttrFns := map[string][]int{}
	resolved := map[*ast.Ident]bool{} // attribute-name parameters of those literals
	accounted := map[*ast.SelectorExpr]bool{}
	ast.Inspect(x, func(y ast.Node) bool {
		as, ok := y.(*ast.AssignStmt)
		if !ok || len(as.Lhs) != 1 || len(as.Rhs) != 1 {
			return true
		}
		lhs, ok1 := as.Lhs[0].(*ast.Ident)
		fl, ok2 := as.Rhs[0].(*ast.FuncLit)
		if !ok1 || !ok2 {
			return true
		}
		var params []string
		for _, f := range fl.Type.Params.List {
			for _, nm := range f.Names {
				params = append(params, nm.Name)
			}
		}
		ast.Inspect(fl.Body, func(z ast.Node) bool {
			if id := attrNameArg(z); id != nil {
				if arg, ok := id.(*ast.Ident); ok {
					for i, p := range params {
						if p == arg.Name {
							localAttrFns[lhs.Name] = append(localAttrFns[lhs.Name], i)
							resolved[arg] = true
						}
					}
				}
			}
			return true
		})
		return true
	})
	pos := func(n ast.Node) string { return s.fset.Position(n.Pos()).String() }
	var visit func(y ast.Node) bool
	visit = func(y ast.Node) bool {
		switch y := y.(type) {
		case *ast.CallExpr:
			if arg := attrNameArg(y); arg != nil {
				if name, ok := stringLit(arg); ok {
					attrs[name] = true
				} else if id, ok := arg.(*ast.Ident); !ok || !resolved[id] {
					*problems = append(*problems, pos(y)+": an attribute read by a name that is not a string literal")
				}
			}
			if id, ok := y.Fun.(*ast.Ident); ok {
				for _, i := range localAttrFns[id.Name] {
					if i >= len(y.Args) {
						continue
					}
					if name, ok := stringLit(y.Args[i]); ok {
						attrs[name] = true
					} else {
						*problems = append(*problems, pos(y)+": "+id.Name+" reads an attribute whose name is not a string literal")
					}
				}
			}
		case *ast.IndexExpr:
			if sel, ok := y.X.(*ast.SelectorExpr); ok && sel.Sel.Name == "Attrs" {
				accounted[sel] = true
				if name, ok := stringLit(y.Index); ok {
					attrs[name] = true
				} else if id, ok := y.Index.(*ast.Ident); !ok || !resolved[id] {
					*problems = append(*problems, pos(y)+": Attrs indexed by a name that is not a string literal")
				}
			}
		case *ast.RangeStmt:
			if sel, ok := y.X.(*ast.SelectorExpr); ok && sel.Sel.Name == "Attrs" {
				accounted[sel] = true
				key, _ := y.Key.(*ast.Ident)
				found := false
				ast.Inspect(y.Body, func(z ast.Node) bool {
					sw, ok := z.(*ast.SwitchStmt)
					if !ok || key == nil {
						return true
					}
					if tag, ok := sw.Tag.(*ast.Ident); ok && tag.Name == key.Name {
						found = true
						for _, st := range sw.Body.List {
							for _, e := range st.(*ast.CaseClause).List {
								if name, ok := stringLit(e); ok {
									attrs[name] = true
								}
							}
						}
					}
					return true
				})
				if !found {
					*problems = append(*problems, pos(y)+": a range over Attrs without a switch on the attribute's name")
				}
			}
		case *ast.SelectorExpr:
			if y.Sel.Name == "Attrs" && !accounted[y] {
				*problems = append(*problems, pos(y)+": a use of Attrs the scan does not understand")
			}
			if pkg, ok := y.X.(*ast.Ident); ok && s.imports[pkg.Name] {
				return false // a qualified identifier of another package
			}
			refer(y.Sel.Name, true)
			ast.Inspect(y.X, visit)
			return false
		case *ast.Ident:
			if _, ok := s.funcs[y.Name]; ok {
				refer(y.Name, false)
			}
		}
		return true
	}
	ast.Inspect(x, visit)
}

// attrNameArg is the attribute-name argument of a call of an attribute accessor, or nil.
func attrNameArg(y ast.Node) ast.Expr {
	call, ok := y.(*ast.CallExpr)
	if !ok {
		return nil
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || !isAttrAccessor(sel.Sel.Name) || len(call.Args) == 0 {
		return nil
	}
	return call.Args[0]
}

// opReads is, for every operator of the tables, the attributes its lowering reads, and the
// problems the scan met on the way (by operator).
func (s *srcScan) opReads(t *testing.T) (map[string]map[string]bool, map[string][]string) {
	t.Helper()
	out := map[string]map[string]bool{}
	problems := map[string][]string{}
	for op, e := range s.tables {
		roots := []ast.Node{e}
		if f, ok := s.folds[op]; ok {
			roots = append(roots, f)
		}
		for _, name := range extraRoots(op) {
			d := s.funcs[name]
			if d == nil {
				if ms := s.methods[name]; len(ms) == 1 {
					d = ms[0]
				}
			}
			if d == nil {
				t.Fatalf("extra root %s of %s: no such function or method", name, op)
			}
			roots = append(roots, d.Body)
		}
		attrs, ps := s.reads(roots, nil)
		out[op] = attrs
		if len(ps) > 0 {
			problems[op] = ps
		}
	}
	return out, problems
}
