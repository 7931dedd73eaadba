package core_test

import (
	"strings"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/coretest"
)

// walkFixture holds one term of every construct, with known children.
type walkFixture struct {
	name string
	t    core.Term
	kids []core.Term
	// bound[k] lists the names bound in child k
	bound map[int][]string
}

func walkFixtures(t *testing.T, d core.Dtype) []walkFixture {
	ok := okTerm(t)
	ty := func(sh ...int) core.Type { return core.Type{Shape: sh, Dtype: d} }
	x := mustVar(t, "x", ty(3, 4))
	y := mustVar(t, "y", ty(3, 4))
	s := mustVar(t, "s", ty())
	b := mustVar(t, "b", coretest.Bool())
	i := mustVar(t, "i", coretest.I64())
	j := mustVar(t, "j", coretest.I64())
	k := mustVar(t, "k", coretest.I64())
	w := mustVar(t, "w", ty(3, 4))
	one := core.ScalarI(1)
	ipk := ok(term(core.NewBinary(core.OpAdd, i, k)))
	lit := ok(term(core.NewLitF(ty(2), []float64{1, 2})))
	return []walkFixture{
		{"var", x, nil, nil},
		{"lit", lit, nil, nil},
		{"iota", ok(term(core.NewIota(4))), nil, nil},
		{"let", ok(term(core.NewLet(w, x, y))), []core.Term{x, y}, map[int][]string{1: {"w"}}},
		{"share", ok(term(core.NewShare(4, x))), []core.Term{x}, nil},
		{"cond", ok(term(core.NewCond(b, x, y))), []core.Term{b, x, y}, nil},
		{"unary", ok(term(core.NewUnary(core.OpExp, x))), []core.Term{x}, nil},
		{"cast", ok(term(core.NewCast(core.Int64, x))), []core.Term{x}, nil},
		{"binary", ok(term(core.NewBinary(core.OpMul, x, y))), []core.Term{x, y}, nil},
		{"index", ok(term(core.NewIndex(x, []core.Term{k, one}))), []core.Term{x, k, one}, nil},
		{"sumOuter", ok(term(core.NewSumOuter(x))), []core.Term{x}, nil},
		{"argmaxOuter", ok(term(core.NewArgmaxOuter(x))), []core.Term{x}, nil},
		{"gather", ok(term(core.NewGather(core.Shape{5, 4}, x, mustFn(t, []*core.Var{i}, ipk)))), []core.Term{x, ipk}, map[int][]string{1: {"i"}}},
		{"scatter", ok(term(core.NewScatter(core.Shape{2, 2}, x, mustFn(t, []*core.Var{i, j}, j, one)))), []core.Term{x, j, one}, map[int][]string{1: {"i", "j"}, 2: {"i", "j"}}},
		{"fromVector", ok(term(core.NewFromVector([]core.Term{x, y, x}))), []core.Term{x, y, x}, nil},
		{"replicate", ok(term(core.NewReplicate(2, x))), []core.Term{x}, nil},
		{"tr", ok(term(core.NewTranspose([]int{1, 0}, x))), []core.Term{x}, nil},
		{"reshape", ok(term(core.NewReshape(core.Shape{12}, x))), []core.Term{x}, nil},
		{"build1", ok(term(core.NewBuild1(3, i, s))), []core.Term{s}, map[int][]string{0: {"i"}}},
		{"matmul", ok(term(core.NewMatMul(x, ok(term(core.NewTranspose([]int{1, 0}, y)))))), nil, nil},
		{"tuple", ok(term(core.NewTuple([]core.Term{x, s}))), []core.Term{x, s}, nil},
	}
}

// TestChildrenRebuild checks Children, BoundIn and Rebuild on every construct: the same
// children give back the same node; new children give a re-checked node of the same
// construct; ill-typed or miscounted children give errors.
func TestChildrenRebuild(t *testing.T) {
	for _, d := range []core.Dtype{core.Float64, core.Float32} {
		for _, f := range walkFixtures(t, d) {
			kids := core.Children(f.t)
			if f.kids != nil {
				if len(kids) != len(f.kids) {
					t.Errorf("%v %s: %d children, want %d", d, f.name, len(kids), len(f.kids))
					continue
				}
				for n := range kids {
					if kids[n] != f.kids[n] {
						t.Errorf("%v %s: child %d is %v, want %v", d, f.name, n, kids[n], f.kids[n])
					}
				}
			}
			for n := range kids {
				var names []string
				for _, v := range core.BoundIn(f.t, n) {
					names = append(names, v.Name)
				}
				if strings.Join(names, ",") != strings.Join(f.bound[n], ",") {
					t.Errorf("%v %s: BoundIn child %d = %v, want %v", d, f.name, n, names, f.bound[n])
				}
			}
			same, err := core.Rebuild(f.t, append([]core.Term{}, kids...))
			if err != nil || same != f.t {
				t.Errorf("%v %s: Rebuild with the same children gave %v, %v; want the node itself", d, f.name, same, err)
			}
			if _, err := core.Rebuild(f.t, append(kids, kids...)); len(kids) > 0 && err == nil {
				t.Errorf("%v %s: Rebuild with %d children accepted", d, f.name, 2*len(kids))
			}
			if len(kids) == 0 {
				continue
			}
			// Replace every child by a fresh variable of the same type: a new node of the same
			// construct, structurally equal to the expected rebuilt text.
			fresh := make([]core.Term, len(kids))
			for n, c := range kids {
				if _, isVar := c.(*core.Var); isVar {
					fresh[n] = c
					continue
				}
				if _, isLit := c.(*core.Lit); isLit && c.Type().Dtype == core.Int64 {
					fresh[n] = core.ScalarI(0) // index constants: keep them i64 scalars
					continue
				}
				fresh[n] = mustVar(t, "q", c.Type())
			}
			changed := false
			for n := range kids {
				if fresh[n] != kids[n] {
					changed = true
				}
			}
			if changed {
				r, err := core.Rebuild(f.t, fresh)
				if err != nil {
					t.Errorf("%v %s: Rebuild with fresh children: %v", d, f.name, err)
				} else {
					if r == f.t {
						t.Errorf("%v %s: Rebuild with new children returned the old node", d, f.name)
					}
					if typeName(r) != typeName(f.t) {
						t.Errorf("%v %s: Rebuild gave %T", d, f.name, r)
					}
					rk := core.Children(r)
					for n := range rk {
						if rk[n] != fresh[n] {
							t.Errorf("%v %s: rebuilt child %d is %v", d, f.name, n, rk[n])
						}
					}
				}
			}
			// An ill-typed first child is rejected: a bool scalar or a bool [7,7,7] array fits
			// no construct's first position except those that accept any operand.
			switch f.name {
			case "tuple", "share", "cast", "replicate", "build1":
				continue
			}
			rejected := false
			for _, badT := range []core.Type{coretest.Bool(), coretest.Bool(7, 7, 7)} {
				bad := append([]core.Term{}, kids...)
				bad[0] = mustVar(t, "bad", badT)
				if _, err := core.Rebuild(f.t, bad); err != nil {
					rejected = true
				}
			}
			if !rejected {
				t.Errorf("%v %s: Rebuild accepted ill-typed first children", d, f.name)
			}
		}
	}
}

// TestFreeVars checks free variables under every binder, sorted by name.
func TestFreeVars(t *testing.T) {
	env := map[string]core.Type{"x": coretest.F64(3), "z": coretest.F64(), "n": coretest.I64()}
	cases := []struct{ src, want string }{
		{`x`, "x"},
		{`let y = x in y + x`, "x"},
		{`let x = x in x`, "x"},
		{`let y = z in x`, "x z"},
		{`build1 3 (\i -> x ! [i] + z)`, "x z"},
		{`build1 3 (\n -> x ! [n])`, "x"},
		{`x ! [n]`, "n x"},
		{`gather [2] x (\[i] -> [i + n])`, "n x"},
		{`scatter [3] x (\[n] -> [n])`, "x"},
		{`1.0`, ""},
		{`(x, z)`, "x z"},
	}
	for _, c := range cases {
		tm, err := core.Parse(c.src, env)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, v := range core.FreeVars(tm) {
			names = append(names, v.Name)
			if !v.Type().Equal(env[v.Name]) {
				t.Errorf("FreeVars(%s): %s has type %v", c.src, v.Name, v.Type())
			}
		}
		if got := strings.Join(names, " "); got != c.want {
			t.Errorf("FreeVars(%s) = %q, want %q", c.src, got, c.want)
		}
		for _, name := range []string{"x", "z", "n"} {
			if core.HasFree(tm, name) != strings.Contains(" "+c.want+" ", " "+name+" ") {
				t.Errorf("HasFree(%s, %s) = %v", c.src, name, !strings.Contains(c.want, name))
			}
		}
	}
}

func parseT(t *testing.T, src string, env map[string]core.Type) core.Term {
	t.Helper()
	tm, err := core.Parse(src, env)
	if err != nil {
		t.Fatalf("Parse(%s): %v", src, err)
	}
	return tm
}

// TestSubst checks substitution: replacement of free occurrences, shadowing, capture
// avoidance and preservation of unrelated shared subterms.
func TestSubst(t *testing.T) {
	env := map[string]core.Type{"x": coretest.F64(3), "y": coretest.F64(3), "n": coretest.I64(), "i": coretest.I64()}
	sub := func(src string, repl map[string]string) core.Term {
		t.Helper()
		m := map[string]core.Term{}
		for name, r := range repl {
			m[name] = parseT(t, r, env)
		}
		out, err := core.Subst(parseT(t, src, env), m)
		if err != nil {
			t.Fatalf("Subst(%s): %v", src, err)
		}
		return out
	}
	cases := []struct {
		src  string
		repl map[string]string
		want string // printed result, written by hand
	}{
		{`x + y`, map[string]string{"x": "exp y"}, `exp y + y`},
		{`x + y`, map[string]string{"x": "y", "y": "x"}, `y + x`},
		{`let x = x + y in x * x`, map[string]string{"x": "y"}, `let x = y + y in x * x`},
		{`let z = x in z + x`, map[string]string{"x": "sin y"}, `let z = sin y in z + sin y`},
		{`build1 3 (\i -> x ! [i] + 1.0)`, map[string]string{"i": "n"}, `build1 3 (\i -> index x [i] + 1.0)`},
		// capture: the binder i is renamed because the replacement mentions the free i
		{`build1 3 (\j -> x ! [j + n])`, map[string]string{"n": "i"}, `build1 3 (\j -> index x [j + i])`},
		{`build1 3 (\i -> x ! [i + n])`, map[string]string{"n": "i"}, `build1 3 (\i_0 -> index x [i_0 + i])`},
		{`gather [2] x (\[i] -> [i + n])`, map[string]string{"n": "i * 2"}, `gather [2] x (\[i_0] -> [i_0 + i * 2])`},
		{`scatter [4] x (\[i] -> [n])`, map[string]string{"n": "i"}, `scatter [4] x (\[i_0] -> [i])`},
		{`let i = n in i + n`, map[string]string{"n": "i"}, `let i_0 = i in i_0 + i`},
		{`(x, y)`, map[string]string{"y": "x"}, `(x, x)`},
	}
	for _, c := range cases {
		if got := sub(c.src, c.repl).String(); got != c.want {
			t.Errorf("Subst(%s, %v)\n got %s\nwant %s", c.src, c.repl, got, c.want)
		}
	}
	// type mismatch and nil replacement
	if _, err := core.Subst(parseT(t, `x`, env), map[string]core.Term{"x": parseT(t, `n`, env)}); err == nil ||
		err.Error() != "core: subst: x has type [3] f64, replacement has type [] i64" {
		t.Errorf("type mismatch: %v", err)
	}
	if _, err := core.Subst(parseT(t, `x`, env), map[string]core.Term{"x": nil}); err == nil ||
		err.Error() != "core: subst: replacement for x is nil" {
		t.Errorf("nil replacement: %v", err)
	}
	// Pointer identity: the unrelated shared subterm u = exp y is kept; the shared subterm
	// v = sin x is rewritten once and both uses point to the same new node.
	tm := parseT(t, `let a = share 1 (exp y) in share 2 (sin x) * share 2 + share 1`, env)
	l := tm.(*core.Let)
	u := l.Bound
	out, err := core.Subst(tm, map[string]core.Term{"x": parseT(t, `y + y`, env)})
	if err != nil {
		t.Fatal(err)
	}
	ol := out.(*core.Let)
	if ol.Bound != u {
		t.Errorf("unrelated shared subterm was copied")
	}
	add := ol.Body.(*core.Binary)
	mul := add.X.(*core.Binary)
	if add.Y != u {
		t.Errorf("unrelated shared subterm (second use) was copied")
	}
	if mul.X != mul.Y {
		t.Errorf("rewritten shared subterm was duplicated")
	}
	if got, want := out.String(), `let a = share 1 (exp y) in share 2 (sin (y + y)) * share 2 + share 1`; got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	// Nothing to substitute: the very same term comes back.
	if r, err := core.Subst(tm, map[string]core.Term{"n": parseT(t, `1`, env)}); err != nil || r != tm {
		t.Errorf("Subst without occurrences returned a new term")
	}
}

// TestEqual checks structural equality.
func TestEqual(t *testing.T) {
	env := map[string]core.Type{"x": coretest.F64(3), "y": coretest.F64(3), "n": coretest.I64()}
	same := [][2]string{
		{`x + y`, `(x + y)`},
		{`lit [2] f64 [nan, 1]`, `lit [2] f64 [nan, 1.0]`},
		{`build1 3 (\i -> x ! [i])`, `build1 3 (\i -> index x [i])`},
		{`gather [2] x (\[i] -> [i])`, `gather [2] x (\[i] -> [i])`},
	}
	for _, c := range same {
		if !core.Equal(parseT(t, c[0], env), parseT(t, c[1], env)) {
			t.Errorf("Equal(%s, %s) = false", c[0], c[1])
		}
	}
	diff := [][2]string{
		{`x + y`, `y + x`},
		{`x + y`, `x - y`},
		{`x`, `y`},
		{`1.0`, `2.0`},
		{`1`, `1.0`},
		{`lit [2] f64 [1, 2]`, `lit [2] f32 [1, 2]`},
		{`lit [2,1] f64 [1, 2]`, `lit [1,2] f64 [1, 2]`},
		{`build1 3 (\i -> x ! [i])`, `build1 3 (\j -> x ! [j])`},
		{`build1 3 (\i -> x ! [i])`, `build1 2 (\i -> x ! [i])`},
		{`gather [2] x (\[i] -> [i])`, `gather [2] x (\[i] -> [i + 1])`},
		{`gather [2] x (\[i] -> [i])`, `gather [3] x (\[i] -> [i])`},
		{`share 1 (exp x)`, `share 2 (exp x)`},
		{`tr [0] x`, `tr [] x`},
		{`reshape [3,1] x`, `reshape [1,3] x`},
		{`cast f32 x`, `cast i64 x`},
		{`let a = x in a`, `let b = x in b`},
		{`(x, y)`, `(x, y, x)`},
		{`replicate 2 x`, `replicate 3 x`},
		{`x ! [n]`, `x ! [0]`},
	}
	for _, c := range diff {
		if core.Equal(parseT(t, c[0], env), parseT(t, c[1], env)) {
			t.Errorf("Equal(%s, %s) = true", c[0], c[1])
		}
	}
	// two distinct Share nodes with one ID and equal bodies are equal to one shared node
	ok := okTerm(t)
	x := parseT(t, "x", env)
	s1 := ok(term(core.NewShare(1, ok(term(core.NewUnary(core.OpExp, x))))))
	s1b := ok(term(core.NewShare(1, ok(term(core.NewUnary(core.OpExp, x))))))
	if !core.Equal(ok(term(core.NewBinary(core.OpAdd, s1, s1))), ok(term(core.NewBinary(core.OpAdd, s1, s1b)))) {
		t.Errorf("Equal on shares with equal bodies = false")
	}
	if core.Equal(nil, parseT(t, "x", env)) || !core.Equal(nil, nil) {
		t.Errorf("Equal with nil")
	}
	p1, _ := core.ParseProgram(`fn (x : [3] f64) => x`)
	p2, _ := core.ParseProgram(`fn (x : [3] f32) => cast f64 x`)
	p3, _ := core.ParseProgram(`fn (x : [3] f64) => x`)
	if core.ProgramEqual(p1, p2) || !core.ProgramEqual(p1, p3) || core.ProgramEqual(p1, nil) {
		t.Errorf("ProgramEqual")
	}
}

// TestNamer checks fresh names avoid every name in the terms.
func TestNamer(t *testing.T) {
	tm := parseT(t, `let x_0 = x in build1 2 (\x_1 -> gather [1] y (\[x_3] -> [x_1]))`, map[string]core.Type{"x": coretest.F64(), "y": coretest.F64(4)})
	nm := core.NewNamer(tm)
	got := []string{nm.Fresh("x"), nm.Fresh("x"), nm.Fresh("y")}
	want := []string{"x_2", "x_4", "y_0"}
	for k := range want {
		if got[k] != want[k] {
			t.Errorf("Fresh sequence %v, want %v", got, want)
			break
		}
	}
	nm.AvoidName("z_0")
	if v := nm.FreshVar("z", coretest.F32(2)); v.Name != "z_1" || !v.Type().Equal(coretest.F32(2)) {
		t.Errorf("FreshVar = %s : %v", v.Name, v.Type())
	}
	// independent namers do not share state
	if n2 := core.NewNamer(tm); n2.Fresh("x") != "x_2" {
		t.Errorf("second Namer does not start afresh")
	}
}

// TestCheck checks the program checker's errors.
func TestCheck(t *testing.T) {
	ok := okTerm(t)
	x := mustVar(t, "x", coretest.F64(3))
	x4 := mustVar(t, "x", coretest.F64(4))
	y := mustVar(t, "y", coretest.F64(3))
	pair := ok(term(core.NewTuple([]core.Term{x, x})))
	cases := []struct {
		name string
		p    *core.Program
		err  string
	}{
		{"ok", &core.Program{Params: []*core.Var{x}, Body: ok(term(core.NewLet(y, x, pair)))}, ""},
		{"unbound", &core.Program{Params: []*core.Var{x}, Body: y}, "core: program: free variable y ([3] f64) is not a parameter"},
		{"wrong param type", &core.Program{Params: []*core.Var{x4}, Body: x}, "core: program: parameter x has type [4] f64 but is used with type [3] f64"},
		{"binder type", &core.Program{Params: []*core.Var{x}, Body: ok(term(core.NewLet(y, x, ok(term(core.NewSumOuter(mustVar(t, "y", coretest.F64(4))))))))},
			"core: program: variable y bound with type [3] f64 is used with type [4] f64"},
		{"tuple below top", &core.Program{Params: []*core.Var{x}, Body: &core.Binary{Op: core.OpAdd, X: pair, Y: x}}, "core: program: a tuple appears below the top level"},
		{"duplicate params", &core.Program{Params: []*core.Var{x, x4}, Body: x}, "core: program: parameter x declared twice"},
		{"nil", nil, "core: program: nil program or body"},
	}
	for _, c := range cases {
		err := core.Check(c.p)
		if c.err == "" && err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		if c.err != "" && (err == nil || err.Error() != c.err) {
			t.Errorf("%s: error %v, want %s", c.name, err, c.err)
		}
	}
}

// TestDAG60 builds x_{i+1} = x_i + x_i for 60 levels, as a let chain and as raw pointer
// sharing through Share nodes, and checks that printing, checking, FreeVars, Size, Equal,
// Subst and the parse round trip all work on it. Each is linear in the distinct nodes; an
// exponential traversal would visit 2^60 nodes and never finish.
func TestDAG60(t *testing.T) {
	const levels = 60
	ok := okTerm(t)
	x := mustVar(t, "x", coretest.F64(2))

	// let chain
	vars := []*core.Var{x}
	for k := 1; k <= levels; k++ {
		vars = append(vars, mustVar(t, "x"+itoa(k), coretest.F64(2)))
	}
	var body core.Term = vars[levels]
	for k := levels; k >= 1; k-- {
		body = ok(term(core.NewLet(vars[k], ok(term(core.NewBinary(core.OpAdd, vars[k-1], vars[k-1]))), body)))
	}
	letProg, err := core.NewProgram([]*core.Var{x}, body)
	if err != nil {
		t.Fatal(err)
	}
	// levels lets + levels sums + levels+1 variables
	if n := core.Size(letProg.Body); n != 3*levels+1 {
		t.Errorf("let chain Size = %d, want %d", n, 3*levels+1)
	}

	// raw sharing: s_{i+1} = share (i+1) (s_i + s_i), the sum's operands the same pointer
	var s core.Term = x
	for k := 1; k <= levels; k++ {
		s = ok(term(core.NewShare(k, ok(term(core.NewBinary(core.OpAdd, s, s))))))
	}
	shareProg, err := core.NewProgram([]*core.Var{x}, s)
	if err != nil {
		t.Fatal(err)
	}
	if n := core.Size(s); n != 2*levels+1 {
		t.Errorf("share chain Size = %d, want %d", n, 2*levels+1)
	}

	for _, p := range []*core.Program{letProg, shareProg} {
		src := p.String()
		if len(src) > 60*levels {
			t.Errorf("printed program has %d bytes, want linear size", len(src))
		}
		if err := core.Check(p); err != nil {
			t.Error(err)
		}
		fv := core.FreeVars(p.Body)
		if len(fv) != 1 || fv[0].Name != "x" {
			t.Errorf("FreeVars = %v", fv)
		}
		q, err := core.ParseProgram(src)
		if err != nil {
			t.Fatal(err)
		}
		if !core.ProgramEqual(p, q) {
			t.Errorf("round trip differs")
		}
		if core.Size(q.Body) != core.Size(p.Body) {
			t.Errorf("reparsed Size %d, want %d", core.Size(q.Body), core.Size(p.Body))
		}
		n := 0
		core.PostOrder(q.Body, func(core.Term) { n++ })
		if n != core.Size(p.Body) {
			t.Errorf("PostOrder visited %d nodes", n)
		}
		y := mustVar(t, "y", coretest.F64(2))
		r, err := core.Subst(p.Body, map[string]core.Term{"x": y})
		if err != nil {
			t.Fatal(err)
		}
		if core.Size(r) != core.Size(p.Body) || core.HasFree(r, "x") || !core.HasFree(r, "y") {
			t.Errorf("Subst: Size %d, free %v", core.Size(r), core.FreeVars(r))
		}
	}
	// the share chain prints every body once: "share 60 (share 59 (… + share 1) + share 59)"
	// each body once, and one reference to each share but the outermost
	if got := strings.Count(shareProg.String(), "share "); got != 2*levels-1 {
		t.Errorf("share chain prints %d shares, want %d", got, 2*levels-1)
	}
	if !strings.HasPrefix(shareProg.String(), "fn (x : [2] f64) => share 60 (share 59 (share 58 (") {
		t.Errorf("share chain prints as %.80s…", shareProg.String())
	}
}

// TestStructLiteralTerms checks that terms built as struct literals (no type, nil fields)
// are rejected with errors by the constructors and the checker, and that no traversal
// panics on them.
func TestStructLiteralTerms(t *testing.T) {
	x := mustVar(t, "x", coretest.F64(3))
	mk := func() []core.Term {
		return []core.Term{&core.Var{}, &core.Lit{}, &core.Let{}, &core.Share{}, &core.Cond{}, &core.Unary{},
			&core.Cast{}, &core.Binary{}, &core.Index{}, &core.SumOuter{}, &core.ArgmaxOuter{}, &core.Gather{},
			&core.Scatter{}, &core.FromVector{}, &core.Replicate{}, &core.Transpose{}, &core.Reshape{},
			&core.Build1{}, &core.Iota{}, &core.MatMul{}, &core.Tuple{}}
	}
	as, bs := mk(), mk()
	for k, l := range as {
		ops := []struct {
			name string
			f    func() error
		}{
			{"NewProgram", func() error {
				_, err := core.NewProgram([]*core.Var{x}, l)
				if _, isTuple := l.(*core.Tuple); !isTuple && err == nil {
					return errorf("accepted")
				}
				return nil
			}},
			{"NewUnary", func() error {
				if _, err := core.NewUnary(core.OpExp, l); err == nil {
					return errorf("accepted")
				}
				return nil
			}},
			{"String", func() error { _ = l.String(); return nil }},
			{"FreeVars", func() error { core.FreeVars(l); return nil }},
			{"Size", func() error { core.Size(l); return nil }},
			{"Equal", func() error { core.Equal(l, bs[k]); core.Equal(l, x); return nil }},
			{"Subst", func() error { _, _ = core.Subst(l, map[string]core.Term{"x": x}); return nil }},
			{"Rebuild", func() error { _, _ = core.Rebuild(l, core.Children(l)); return nil }},
			{"Namer", func() error { core.NewNamer(l); return nil }},
		}
		for _, op := range ops {
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("%T: %s panics: %v", l, op.name, r)
					}
				}()
				if err := op.f(); err != nil {
					t.Errorf("%T: %s: %v", l, op.name, err)
				}
			}()
		}
	}
}

type errString string

func (e errString) Error() string { return string(e) }

func errorf(s string) error { return errString(s) }
