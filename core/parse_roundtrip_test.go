package core_test

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/coretest"
	"github.com/bulkad/bulkad/core/tensors"
	"gorgonia.org/tensor"
)

// TestRoundTripRandom checks parse(print(p)) == p on generated well-typed programs.
func TestRoundTripRandom(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 500
	}
	kinds := map[string]int{}
	for seed := int64(0); seed < int64(n); seed++ {
		p := newRTGen(seed).program()
		core.PostOrder(p.Body, func(x core.Term) { kinds[strings.TrimPrefix(typeName(x), "*core.")]++ })
		src := p.String()
		q := roundTrip(t, fmt.Sprintf("seed %d", seed), p)
		if q.String() != src {
			t.Fatalf("seed %d: reprint differs\n%s\n%s", seed, src, q.String())
		}
	}
	for _, k := range []string{"Var", "Lit", "Let", "Share", "Cond", "Unary", "Cast", "Binary", "Index",
		"SumOuter", "ArgmaxOuter", "Gather", "Scatter", "FromVector", "Replicate", "Transpose",
		"Reshape", "Build1", "Iota", "MatMul", "Tuple"} {
		if kinds[k] == 0 {
			t.Errorf("generator never produced a %s", k)
		}
	}
	t.Logf("constructs generated: %v", kinds)
}

// TestRoundTripCoretest runs the round trip over the programs of the shared generator
// (package coretest), small ones and a few large let chains.
func TestRoundTripCoretest(t *testing.T) {
	n := 1000
	if testing.Short() {
		n = 200
	}
	skipped := 0
	for seed := int64(0); seed < int64(n); seed++ {
		cfg := coretest.Config{}
		switch seed % 4 {
		case 1:
			cfg.Dtype = core.Float32
		case 2:
			cfg.Smooth, cfg.ScalarResult = true, true
		case 3:
			cfg.Dtype = core.Float64
		}
		if seed%100 == 0 {
			cfg.TargetNodes = 2000
		}
		p := coretestProgram(seed, cfg)
		if p == nil {
			skipped++
			continue
		}
		roundTrip(t, fmt.Sprintf("seed %d", seed), p)
	}
	if skipped > n/10 {
		t.Errorf("coretest.RandomProgram failed on %d of %d seeds", skipped, n)
	} else if skipped > 0 {
		t.Logf("coretest.RandomProgram failed on %d of %d seeds (skipped)", skipped, n)
	}
}

// coretestProgram calls coretest.RandomProgram, returning nil if the generator itself fails
// (it panics on its own bugs; e.g. it may form the reserved name "i64" from prefix "i").
func coretestProgram(seed int64, cfg coretest.Config) (p *core.Program) {
	defer func() {
		if r := recover(); r != nil {
			p = nil
		}
	}()
	return coretest.RandomProgram(rand.New(rand.NewSource(seed)), cfg)
}

// roundTrip prints p, parses the text and requires an equal program, which it returns.
func roundTrip(t *testing.T, label string, p *core.Program) *core.Program {
	t.Helper()
	src := p.String()
	q, err := core.ParseProgram(src)
	if err != nil {
		t.Fatalf("%s: reparse failed: %v\nprinted: %s", label, err, src)
	}
	if !core.ProgramEqual(p, q) {
		t.Fatalf("%s: round trip differs\nprinted:   %s\nreprinted: %s", label, src, q.String())
	}
	return q
}

func typeName(x interface{}) string { return fmt.Sprintf("%T", x) }

// FuzzParse checks that parsing arbitrary input never panics and that whatever parses
// round-trips through the printer.
func FuzzParse(f *testing.F) {
	seeds := []string{
		`fn (a : [5] f64, b : [5] f64, k : [] i64) => let w = a * sin b in (atan2 b w + b * w, a ! [k])`,
		`fn (t : [9] f64) => scatter [6] t (\[i] -> [quot i 2])`,
		`fn (x : [2,3] f32) => build [2,3] (\[i,j] -> x ! [i, j] * (-1.5)) + lit [2,3] f32 [1,2,3,4,5,-inf]`,
		`fn (x : [4] f64) => let y = share 1 (x + x) in share 2 (share 1 * share 1) + max 0.0 x`,
		`fn (x : [3,2] f64) => gather [4,2] x (\[i,j] -> [quot i 2])`,
		`fn (x : [2,3] f64, y : [3,4] f64) => tr [1,0] (matmul x y) ! [0]`,
		`fn (b : [] bool) => cond b (iota 3) (argmaxOuter (reshape [2,3] (replicate 6 nan)))`,
	}
	for seed := int64(0); seed < 20; seed++ {
		seeds = append(seeds, newRTGen(seed).program().String())
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		p, err := core.ParseProgram(src)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "core: parse: ") {
				t.Fatalf("error without the parse prefix: %v", err)
			}
			return
		}
		roundTrip(t, fmt.Sprintf("input %q", src), p)
		// Evaluate what parsed (on zero arguments) when its arrays are small: evaluation may
		// fail with an error but must not panic or exhaust memory.
		if core.CheckArrayLimit(p, 1<<16, "fuzz") != nil {
			return
		}
		args := map[string]*tensor.Dense{}
		for _, v := range p.Params {
			args[v.Name] = zeroDense(v.Type())
		}
		if _, err := tensors.EvalTuple(p, args); err != nil && !strings.HasPrefix(err.Error(), "core: ") {
			t.Fatalf("eval error without the core prefix: %v", err)
		}
	})
}

// rtGen generates random well-typed programs covering every construct: nested build1, lets
// (with shadowing), gathers and scatters with index functions over bound variables, shares
// reused by pointer, literals of every dtype (negative, -0, inf, nan), casts and tuples.
// Every term is built with the core Builder; a builder error is a generator bug.
type rtGen struct {
	r      *rand.Rand
	b      core.Builder
	fd     core.Dtype // the program's main float dtype
	scope  []*core.Var
	params map[string]bool
	shares []core.Term // shares whose free variables are parameters only (reusable anywhere)
	nextID int
	nodes  int // budget counter
}

func newRTGen(seed int64) *rtGen {
	g := &rtGen{r: rand.New(rand.NewSource(seed)), fd: core.Float64, params: map[string]bool{}}
	if g.r.Intn(2) == 0 {
		g.fd = core.Float32
	}
	return g
}

var rtBinderNames = []string{"x", "y", "i", "j", "k", "v_1", "w'"}

func (g *rtGen) shape(maxRank int) core.Shape {
	r := g.r.Intn(maxRank + 1)
	sh := make(core.Shape, r)
	for i := range sh {
		sh[i] = 1 + g.r.Intn(3)
	}
	return sh
}

func (g *rtGen) dtype() core.Dtype {
	switch g.r.Intn(6) {
	case 0:
		return core.Int64
	case 1:
		return core.Bool
	case 2:
		if g.fd == core.Float64 {
			return core.Float32
		}
		return core.Float64
	}
	return g.fd
}

// program makes a random program.
func (g *rtGen) program() *core.Program {
	np := 1 + g.r.Intn(3)
	var params []*core.Var
	for k := 0; k < np; k++ {
		d := g.fd
		if g.r.Intn(4) == 0 {
			d = g.dtype()
		}
		v := g.b.Var(fmt.Sprintf("a%d", k), core.Type{Shape: g.shape(3), Dtype: d})
		params = append(params, v)
		g.params[v.Name] = true
	}
	g.scope = append(g.scope, params...)
	depth := 2 + g.r.Intn(4)
	var body core.Term
	if g.r.Intn(6) == 0 {
		n := g.r.Intn(4)
		elems := make([]core.Term, n)
		for k := range elems {
			elems[k] = g.term(g.ty(), depth)
		}
		body = g.b.Tuple(elems...)
		if g.r.Intn(2) == 0 {
			v := g.fresh(g.ty())
			bound := g.term(v.Type(), depth)
			body = g.b.Let(v, bound, body)
		}
	} else {
		body = g.term(g.ty(), depth)
	}
	if err := g.b.Err(); err != nil {
		panic(fmt.Sprintf("generator bug: %v", err))
	}
	p, err := core.NewProgram(params, body)
	if err != nil {
		panic(fmt.Sprintf("generator bug: %v\n%v", err, (&core.Program{Params: params, Body: body}).String()))
	}
	return p
}

// indexed is a gather (or scatter) of result shape sh: n domain variables (the result's outer
// dims for a gather, drawn for a scatter) and m computed indices (drawn for a gather, the
// result's outer dims for a scatter).
func (g *rtGen) indexed(sh core.Shape, dt core.Dtype, d int, scatter bool) core.Term {
	outer := g.r.Intn(len(sh) + 1) // dims of sh addressed by the domain (gather) or the indices (scatter)
	k := g.r.Intn(3)               // dims of x addressed by the indices (gather) or the domain (scatter)
	xsh := make(core.Shape, k)
	for i := range xsh {
		xsh[i] = 1 + g.r.Intn(4)
	}
	xsh = append(xsh, sh[outer:]...)
	x := g.term(core.Type{Shape: xsh, Dtype: dt}, d)
	n, m := outer, k
	if scatter {
		n, m = k, outer
	}
	vs := g.indexVars(n)
	var outs []core.Term
	g.with(vs, func() core.Term { outs = g.indexes(m, d); return nil })
	if scatter {
		return g.b.Scatter(sh, x, g.b.IndexFn(vs, outs...))
	}
	return g.b.Gather(sh, x, g.b.IndexFn(vs, outs...))
}

func (g *rtGen) ty() core.Type { return core.Type{Shape: g.shape(3), Dtype: g.dtype()} }

func (g *rtGen) fresh(t core.Type) *core.Var {
	return g.b.Var(rtBinderNames[g.r.Intn(len(rtBinderNames))], t)
}

// visible returns the in-scope variables of type t (the innermost binding of each name).
func (g *rtGen) visible(t core.Type) []*core.Var {
	seen := map[string]bool{}
	var out []*core.Var
	for k := len(g.scope) - 1; k >= 0; k-- {
		v := g.scope[k]
		if seen[v.Name] {
			continue
		}
		seen[v.Name] = true
		if v.Type().Equal(t) {
			out = append(out, v)
		}
	}
	return out
}

func (g *rtGen) with(vs []*core.Var, f func() core.Term) core.Term {
	n := len(g.scope)
	g.scope = append(g.scope, vs...)
	t := f()
	g.scope = g.scope[:n]
	return t
}

func (g *rtGen) float(d core.Dtype) float64 {
	switch g.r.Intn(12) {
	case 0:
		return math.Inf(1)
	case 1:
		return math.Inf(-1)
	case 2:
		return math.NaN()
	case 3:
		return math.Copysign(0, -1)
	case 4:
		return float64(g.r.Intn(7) - 3)
	case 5:
		return g.r.NormFloat64() * 1e30
	case 6:
		return g.r.NormFloat64() * 1e-30
	}
	return g.r.NormFloat64()
}

func (g *rtGen) lit(t core.Type) core.Term {
	l, err := coretest.Lit(t, func() float64 { return g.float(t.Dtype) }, func() int64 {
		switch g.r.Intn(8) {
		case 0:
			return math.MinInt64
		case 1:
			return math.MaxInt64
		}
		return int64(g.r.Intn(11) - 5)
	}, func() bool { return g.r.Intn(2) == 0 })
	if err != nil {
		g.b.SetErr(err)
		return nil
	}
	return l
}

// index makes a small i64 scalar index term, preferring the in-scope i64 variables.
func (g *rtGen) index(depth int) core.Term {
	vs := g.visible(core.Scalar(core.Int64))
	switch {
	case len(vs) > 0 && g.r.Intn(3) > 0:
		v := vs[g.r.Intn(len(vs))]
		switch g.r.Intn(4) {
		case 0:
			return g.b.Binary(core.OpQuot, v, core.ScalarI(2))
		case 1:
			return g.b.Add(v, core.ScalarI(int64(g.r.Intn(3))))
		}
		return v
	case depth > 0 && g.r.Intn(3) == 0:
		return g.term(core.Scalar(core.Int64), depth-1)
	}
	return core.ScalarI(int64(g.r.Intn(4) - 1))
}

func (g *rtGen) indexes(n, depth int) []core.Term {
	ix := make([]core.Term, n)
	for k := range ix {
		ix[k] = g.index(depth)
	}
	return ix
}

func (g *rtGen) indexVars(n int) []*core.Var {
	vs := make([]*core.Var, n)
	used := map[string]bool{}
	for k := range vs {
		name := rtBinderNames[g.r.Intn(len(rtBinderNames))]
		for used[name] {
			name += "'"
		}
		used[name] = true
		vs[k] = g.b.Var(name, core.Scalar(core.Int64))
	}
	return vs
}

// term makes a random term of type t.
func (g *rtGen) term(t core.Type, depth int) core.Term {
	if g.b.Err() != nil {
		return nil
	}
	g.nodes++
	if depth <= 0 || g.nodes > 400 {
		if vs := g.visible(t); len(vs) > 0 && g.r.Intn(3) > 0 {
			return vs[g.r.Intn(len(vs))]
		}
		if t.Dtype == core.Int64 && len(t.Shape) == 1 && g.r.Intn(3) == 0 {
			return g.b.Iota(t.Shape[0])
		}
		return g.lit(t)
	}
	d := depth - 1
	var opts []func() core.Term
	add := func(f func() core.Term) { opts = append(opts, f) }
	add(func() core.Term { return g.lit(t) })
	if vs := g.visible(t); len(vs) > 0 {
		add(func() core.Term { return vs[g.r.Intn(len(vs))] })
	}
	g.elementwise(add, t, d)
	g.binding(add, t, d)
	g.arrays(add, t, d)
	g.reshapes(add, t, d)
	return opts[g.r.Intn(len(opts))]()
}

// elementwise offers (through add) the element-wise terms of type t: unary, binary,
// comparison, cast and cond, with operands of depth d.
func (g *rtGen) elementwise(add func(func() core.Term), t core.Type, d int) {
	sh, dt := t.Shape, t.Dtype
	add(func() core.Term {
		var ops []core.UnOp
		for _, op := range core.UnOps() {
			switch {
			case op == core.OpNot && dt == core.Bool,
				(op == core.OpNeg || op == core.OpAbs || op == core.OpSign) && dt.IsNumeric(),
				op != core.OpNot && op != core.OpNeg && op != core.OpAbs && op != core.OpSign && dt.IsFloat():
				ops = append(ops, op)
			}
		}
		if len(ops) == 0 {
			return g.lit(t)
		}
		return g.b.Unary(ops[g.r.Intn(len(ops))], g.term(t, d))
	})
	add(func() core.Term {
		var ops []core.BinOp
		for _, op := range core.BinOps() {
			if op.IsComparison() {
				continue
			}
			switch {
			case (op == core.OpAnd || op == core.OpOr) && dt == core.Bool,
				(op == core.OpQuot || op == core.OpRem) && dt == core.Int64,
				(op == core.OpDiv || op == core.OpPow || op == core.OpAtan2) && dt.IsFloat(),
				(op == core.OpAdd || op == core.OpSub || op == core.OpMul || op == core.OpMax || op == core.OpMin) && dt.IsNumeric():
				ops = append(ops, op)
			}
		}
		if len(ops) == 0 {
			return g.lit(t)
		}
		return g.b.Binary(ops[g.r.Intn(len(ops))], g.term(t, d), g.term(t, d))
	})
	if dt == core.Bool {
		add(func() core.Term {
			ops := []core.BinOp{core.OpLt, core.OpLe, core.OpGt, core.OpGe, core.OpEq, core.OpNe}
			op := ops[g.r.Intn(len(ops))]
			od := []core.Dtype{g.fd, core.Int64, core.Bool}[g.r.Intn(3)]
			if od == core.Bool && op != core.OpEq && op != core.OpNe {
				od = g.fd
			}
			ot := core.Type{Shape: sh, Dtype: od}
			return g.b.Binary(op, g.term(ot, d), g.term(ot, d))
		})
	}
	add(func() core.Term {
		return g.b.Cast(dt, g.term(core.Type{Shape: sh, Dtype: g.dtype()}, d))
	})
	add(func() core.Term {
		return g.b.Cond(g.term(core.Scalar(core.Bool), d), g.term(t, d), g.term(t, d))
	})
}

// binding offers (through add) a let and a share of type t.
func (g *rtGen) binding(add func(func() core.Term), t core.Type, d int) {
	add(func() core.Term {
		v := g.fresh(g.ty())
		bound := g.term(v.Type(), d)
		return g.b.Let(v, bound, g.with([]*core.Var{v}, func() core.Term { return g.term(t, d) }))
	})
	add(func() core.Term {
		var same []core.Term
		for _, s := range g.shares {
			if s.Type().Equal(t) {
				same = append(same, s)
			}
		}
		if len(same) > 0 && g.r.Intn(2) == 0 {
			return same[g.r.Intn(len(same))]
		}
		g.nextID++
		id := g.nextID
		s := g.b.Share(id, g.term(t, d))
		if s != nil {
			closed := true
			for _, v := range core.FreeVars(s) {
				if !g.params[v.Name] {
					closed = false
				}
			}
			if closed {
				g.shares = append(g.shares, s)
			}
		}
		return s
	})
}

// arrays offers (through add) the array constructs of type t: index, sums, argmax, iota,
// gather, scatter, fromVector, replicate and build1.
func (g *rtGen) arrays(add func(func() core.Term), t core.Type, d int) {
	sh, dt := t.Shape, t.Dtype
	add(func() core.Term {
		m := g.r.Intn(3)
		full := make(core.Shape, m)
		for k := range full {
			full[k] = 1 + g.r.Intn(3)
		}
		full = append(full, sh...)
		return g.b.Index(g.term(core.Type{Shape: full, Dtype: dt}, d), g.indexes(m, d)...)
	})
	if dt.IsNumeric() {
		add(func() core.Term {
			return g.b.SumOuter(g.term(core.Type{Shape: append(core.Shape{1 + g.r.Intn(3)}, sh...), Dtype: dt}, d))
		})
	}
	if dt == core.Int64 {
		add(func() core.Term {
			od := []core.Dtype{g.fd, core.Int64}[g.r.Intn(2)]
			return g.b.ArgmaxOuter(g.term(core.Type{Shape: append(core.Shape{1 + g.r.Intn(3)}, sh...), Dtype: od}, d))
		})
		if len(sh) == 1 {
			add(func() core.Term { return g.b.Iota(sh[0]) })
		}
	}
	// gather: result sh = domain(n) ++ rest; x shape = [k1..km] ++ rest
	add(func() core.Term { return g.indexed(sh, dt, d, false) })
	if dt.IsNumeric() {
		// scatter: x shape = domain(n) ++ rest; result sh = [k'1..k'm] ++ rest
		add(func() core.Term { return g.indexed(sh, dt, d, true) })
	}
	if len(sh) > 0 {
		inner := core.Type{Shape: sh[1:], Dtype: dt}
		add(func() core.Term {
			elems := make([]core.Term, sh[0])
			for k := range elems {
				elems[k] = g.term(inner, d)
			}
			return g.b.FromVector(elems...)
		})
		add(func() core.Term { return g.b.Replicate(sh[0], g.term(inner, d)) })
		add(func() core.Term {
			v := g.b.Var(rtBinderNames[g.r.Intn(len(rtBinderNames))], core.Scalar(core.Int64))
			return g.b.Build1(sh[0], v, g.with([]*core.Var{v}, func() core.Term { return g.term(inner, d) }))
		})
	}
}

// reshapes offers (through add) the terms of type t that rearrange another array:
// transpose, reshape and matmul.
func (g *rtGen) reshapes(add func(func() core.Term), t core.Type, d int) {
	sh, dt := t.Shape, t.Dtype
	if len(sh) > 0 {
		add(func() core.Term {
			m := 1 + g.r.Intn(len(sh))
			perm := g.r.Perm(m)
			xsh := append(core.Shape{}, sh...)
			for i := 0; i < m; i++ {
				xsh[perm[i]] = sh[i]
			}
			return g.b.Transpose(perm, g.term(core.Type{Shape: xsh, Dtype: dt}, d))
		})
	}
	add(func() core.Term {
		// reshape from the flattened shape, or from the shape with a unit dimension added
		var xsh core.Shape
		if g.r.Intn(2) == 0 {
			xsh = core.Shape{sh.Size()}
		} else {
			xsh = append(core.Shape{1}, sh...)
		}
		return g.b.Reshape(sh, g.term(core.Type{Shape: xsh, Dtype: dt}, d))
	})
	if dt.IsFloat() && len(sh) >= 2 {
		add(func() core.Term {
			k := 1 + g.r.Intn(3)
			r := len(sh)
			return g.b.MatMul(g.term(core.Type{Shape: append(sh[:r-1].Clone(), k), Dtype: dt}, d),
				g.term(core.Type{Shape: append(sh[:r-2].Clone(), k, sh[r-1]), Dtype: dt}, d))
		})
	}
}

// zeroDense returns a zero array of type t.
func zeroDense(t core.Type) *tensor.Dense {
	n := t.Shape.Size()
	var back interface{}
	switch t.Dtype {
	case core.Float32:
		back = make([]float32, n)
	case core.Int64:
		back = make([]int64, n)
	case core.Bool:
		back = make([]bool, n)
	default:
		back = make([]float64, n)
	}
	if len(t.Shape) == 0 {
		switch b := back.(type) {
		case []float32:
			return tensor.New(tensor.FromScalar(b[0]))
		case []int64:
			return tensor.New(tensor.FromScalar(b[0]))
		case []bool:
			return tensor.New(tensor.FromScalar(b[0]))
		default:
			return tensor.New(tensor.FromScalar(float64(0)))
		}
	}
	return tensor.New(tensor.WithShape(t.Shape...), tensor.WithBacking(back))
}
