package core_test

import (
	"fmt"
	"math"
	"math/rand"
	"os"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/coretest"
	"gorgonia.org/tensor"
)

// A deliberately naive reference interpreter, written from the semantics in the Exec doc
// comment and paper 000 §3.2–3.3 without looking at the evaluator's kernels: recursive,
// element by element, floats in float64 storage rounded to float32 after every operation for
// f32. The evaluator (hoisting, fusion, compiled index functions) is checked against it on
// random programs from coretest.

type nval struct {
	sh []int
	dt core.Dtype
	f  []float64
	i  []int64
	b  []bool
}

func size(sh []int) int {
	n := 1
	for _, k := range sh {
		n *= k
	}
	return n
}

func newNval(t core.Type) *nval {
	n := size(t.Shape)
	v := &nval{sh: append([]int{}, t.Shape...), dt: t.Dtype}
	switch t.Dtype {
	case core.Float64, core.Float32:
		v.f = make([]float64, n)
	case core.Int64:
		v.i = make([]int64, n)
	default:
		v.b = make([]bool, n)
	}
	return v
}

// copyElem copies element so of src into element do of dst.
func (v *nval) set(do int, src *nval, so int) {
	switch v.dt {
	case core.Float64, core.Float32:
		v.f[do] = src.f[so]
	case core.Int64:
		v.i[do] = src.i[so]
	default:
		v.b[do] = src.b[so]
	}
}

type nenv struct {
	name string
	val  *nval
	next *nenv
}

func (e *nenv) look(n string) *nval {
	for ; e != nil; e = e.next {
		if e.name == n {
			return e.val
		}
	}
	panic("unbound " + n)
}

type naive struct {
	memo   map[naiveKey]*nval
	shares map[int]*nval
}

type naiveKey struct {
	t core.Term
	e *nenv
}

func (n *naive) rnd(dt core.Dtype, x float64) float64 {
	if dt == core.Float32 {
		return float64(float32(x))
	}
	return x
}

func (n *naive) eval(t core.Term, env *nenv) *nval {
	k := naiveKey{t, env}
	if v, ok := n.memo[k]; ok {
		return v
	}
	v := n.eval1(t, env)
	n.memo[k] = v
	return v
}

func (n *naive) scalarI(t core.Term, env *nenv) int64 { return n.eval(t, env).i[0] }

func (n *naive) eval1(t core.Term, env *nenv) *nval {
	typ := t.Type()
	switch t := t.(type) {
	case *core.Var:
		return env.look(t.Name)
	case *core.Lit:
		v := newNval(typ)
		copy(v.f, t.F)
		copy(v.i, t.I)
		copy(v.b, t.B)
		return v
	case *core.Let:
		b := n.eval(t.Bound, env)
		return n.eval(t.Body, &nenv{t.Var.Name, b, env})
	case *core.Share:
		// IDs are global; sharing under build1 would need the environment too, so memoise
		// by ID only for closed-over-parameters bodies (the generator does not emit shares).
		return n.eval(t.Body, env)
	case *core.Cond:
		c := n.eval(t.C, env)
		a, b := n.eval(t.Then, env), n.eval(t.Else, env)
		if c.b[0] {
			return a
		}
		return b
	case *core.Unary:
		x := n.eval(t.X, env)
		v := newNval(typ)
		for e := range v.f {
			a := x.f[e]
			var r float64
			switch t.Op {
			case core.OpNeg:
				r = -a
			case core.OpAbs:
				r = math.Abs(a)
			case core.OpSign:
				switch {
				case a > 0:
					r = 1
				case a < 0:
					r = -1
				default:
					r = a
				}
			case core.OpExp:
				r = math.Exp(a)
			case core.OpLog:
				r = math.Log(a)
			case core.OpSqrt:
				r = math.Sqrt(a)
			case core.OpSin:
				r = math.Sin(a)
			case core.OpCos:
				r = math.Cos(a)
			case core.OpTan:
				r = math.Tan(a)
			case core.OpTanh:
				r = math.Tanh(a)
			case core.OpSigmoid:
				if a >= 0 {
					r = 1 / (1 + math.Exp(-a))
				} else {
					r = math.Exp(a) / (1 + math.Exp(a))
				}
			case core.OpRecip:
				r = 1 / a
			case core.OpFloor:
				r = math.Floor(a)
			case core.OpCeil:
				r = math.Ceil(a)
			case core.OpLog1p:
				r = math.Log1p(a)
			case core.OpExpm1:
				r = math.Expm1(a)
			}
			v.f[e] = n.rnd(typ.Dtype, r)
		}
		for e := range v.i {
			a := x.i[e]
			switch t.Op {
			case core.OpNeg:
				v.i[e] = -a
			case core.OpAbs:
				if a < 0 {
					a = -a
				}
				v.i[e] = a
			case core.OpSign:
				switch {
				case a > 0:
					v.i[e] = 1
				case a < 0:
					v.i[e] = -1
				}
			}
		}
		for e := range v.b {
			v.b[e] = !x.b[e]
		}
		return v
	case *core.Cast:
		x := n.eval(t.X, env)
		v := newNval(typ)
		for e := 0; e < size(typ.Shape); e++ {
			var f float64
			switch {
			case x.f != nil:
				f = x.f[e]
			case x.i != nil:
				f = float64(x.i[e])
			default:
				if x.b[e] {
					f = 1
				}
			}
			switch typ.Dtype {
			case core.Float64, core.Float32:
				v.f[e] = n.rnd(typ.Dtype, f)
			case core.Int64:
				switch {
				case x.i != nil:
					v.i[e] = x.i[e]
				case math.IsNaN(f) || f >= math.MaxInt64 || f < math.MinInt64:
					v.i[e] = 0
				default:
					v.i[e] = int64(math.Trunc(f))
				}
			default:
				if x.i != nil {
					v.b[e] = x.i[e] != 0
				} else {
					v.b[e] = f != 0
				}
			}
		}
		return v
	case *core.Binary:
		x, y := n.eval(t.X, env), n.eval(t.Y, env)
		v := newNval(typ)
		dt := t.X.Type().Dtype
		for e := 0; e < size(typ.Shape); e++ {
			switch dt {
			case core.Float64, core.Float32:
				a, b := x.f[e], y.f[e]
				var r float64
				switch t.Op {
				case core.OpAdd:
					r = a + b
				case core.OpSub:
					r = a - b
				case core.OpMul:
					r = a * b
				case core.OpDiv:
					r = a / b
				case core.OpPow:
					r = math.Pow(a, b)
				case core.OpMax:
					r = math.Max(a, b)
				case core.OpMin:
					r = math.Min(a, b)
				case core.OpAtan2:
					r = math.Atan2(a, b)
				case core.OpLt:
					v.b[e] = a < b
				case core.OpLe:
					v.b[e] = a <= b
				case core.OpGt:
					v.b[e] = a > b
				case core.OpGe:
					v.b[e] = a >= b
				case core.OpEq:
					v.b[e] = a == b
				case core.OpNe:
					v.b[e] = a != b
				}
				if v.f != nil {
					v.f[e] = n.rnd(dt, r)
				}
			case core.Int64:
				a, b := x.i[e], y.i[e]
				switch t.Op {
				case core.OpAdd:
					v.i[e] = a + b
				case core.OpSub:
					v.i[e] = a - b
				case core.OpMul:
					v.i[e] = a * b
				case core.OpMax:
					v.i[e] = max(a, b)
				case core.OpMin:
					v.i[e] = min(a, b)
				case core.OpQuot:
					if b != 0 && !(b == -1 && a == math.MinInt64) {
						v.i[e] = a / b
					} else if b == -1 {
						v.i[e] = a
					}
				case core.OpRem:
					if b != 0 && b != -1 {
						v.i[e] = a % b
					}
				case core.OpLt:
					v.b[e] = a < b
				case core.OpLe:
					v.b[e] = a <= b
				case core.OpGt:
					v.b[e] = a > b
				case core.OpGe:
					v.b[e] = a >= b
				case core.OpEq:
					v.b[e] = a == b
				case core.OpNe:
					v.b[e] = a != b
				}
			default:
				a, b := x.b[e], y.b[e]
				switch t.Op {
				case core.OpAnd:
					v.b[e] = a && b
				case core.OpOr:
					v.b[e] = a || b
				case core.OpEq:
					v.b[e] = a == b
				case core.OpNe:
					v.b[e] = a != b
				}
			}
		}
		return v
	case *core.Index:
		x := n.eval(t.X, env)
		ix := make([]int64, len(t.Ix))
		for k, e := range t.Ix {
			ix[k] = n.scalarI(e, env)
		}
		return n.sub(x, ix, typ)
	case *core.SumOuter:
		x := n.eval(t.X, env)
		v := newNval(typ)
		inner := size(typ.Shape)
		for r := 0; r < x.sh[0]; r++ {
			for e := 0; e < inner; e++ {
				if v.f != nil {
					v.f[e] = n.rnd(typ.Dtype, v.f[e]+x.f[r*inner+e])
				} else {
					v.i[e] += x.i[r*inner+e]
				}
			}
		}
		return v
	case *core.ArgmaxOuter:
		x := n.eval(t.X, env)
		v := newNval(typ)
		inner := size(typ.Shape)
		for e := 0; e < inner; e++ {
			best := -1
			var bv float64
			for r := 0; r < x.sh[0]; r++ {
				var a float64
				if x.f != nil {
					a = x.f[r*inner+e]
				} else {
					a = float64(x.i[r*inner+e])
				}
				if math.IsNaN(a) {
					continue
				}
				if best < 0 || a > bv {
					best, bv = r, a
				}
			}
			if best < 0 {
				best = 0
			}
			v.i[e] = int64(best)
		}
		return v
	case *core.Gather:
		x := n.eval(t.X, env)
		v := newNval(typ)
		nv := len(t.Fn.Vars)
		restSz := size(typ.Shape[nv:])
		o := 0
		forEach(typ.Shape[:nv], func(pt []int) {
			e := env
			for j, iv := range t.Fn.Vars {
				e = &nenv{iv.Name, &nval{dt: core.Int64, i: []int64{int64(pt[j])}}, e}
			}
			ix := make([]int64, len(t.Fn.Out))
			for k, oe := range t.Fn.Out {
				ix[k] = n.scalarI(oe, e)
			}
			s := n.sub(x, ix, core.Type{Shape: typ.Shape[nv:], Dtype: typ.Dtype})
			for r := 0; r < restSz; r++ {
				v.set(o, s, r)
				o++
			}
		})
		return v
	case *core.Scatter:
		x := n.eval(t.X, env)
		v := newNval(typ)
		nv := len(t.Fn.Vars)
		m := len(t.Fn.Out)
		restSz := size(x.sh[nv:])
		o := 0
		forEach(x.sh[:nv], func(pt []int) {
			e := env
			for j, iv := range t.Fn.Vars {
				e = &nenv{iv.Name, &nval{dt: core.Int64, i: []int64{int64(pt[j])}}, e}
			}
			off, ok := 0, true
			for k, oe := range t.Fn.Out {
				iv := n.scalarI(oe, e)
				if iv < 0 || iv >= int64(typ.Shape[k]) {
					ok = false
				}
				off = off*typ.Shape[k] + int(iv)
			}
			off *= size(typ.Shape[m:])
			for r := 0; r < restSz; r++ {
				if ok {
					if v.f != nil {
						v.f[off+r] = n.rnd(typ.Dtype, v.f[off+r]+x.f[o])
					} else {
						v.i[off+r] += x.i[o]
					}
				}
				o++
			}
		})
		return v
	case *core.FromVector:
		v := newNval(typ)
		o := 0
		for _, el := range t.Elems {
			x := n.eval(el, env)
			for e := 0; e < size(x.sh); e++ {
				v.set(o, x, e)
				o++
			}
		}
		return v
	case *core.Replicate:
		x := n.eval(t.X, env)
		v := newNval(typ)
		sz := size(x.sh)
		for k := 0; k < t.N; k++ {
			for e := 0; e < sz; e++ {
				v.set(k*sz+e, x, e)
			}
		}
		return v
	case *core.Transpose:
		x := n.eval(t.X, env)
		v := newNval(typ)
		o := 0
		forEach(typ.Shape, func(pt []int) {
			in := make([]int, len(pt))
			for p := range pt {
				if p < len(t.Perm) {
					in[t.Perm[p]] = pt[p]
				} else {
					in[p] = pt[p]
				}
			}
			off := 0
			for k, i := range in {
				off = off*x.sh[k] + i
			}
			v.set(o, x, off)
			o++
		})
		return v
	case *core.Reshape:
		x := n.eval(t.X, env)
		v := newNval(typ)
		for e := 0; e < size(typ.Shape); e++ {
			v.set(e, x, e)
		}
		return v
	case *core.Build1:
		v := newNval(typ)
		sz := size(typ.Shape[1:])
		for i := 0; i < t.N; i++ {
			x := n.eval(t.Body, &nenv{t.Var.Name, &nval{dt: core.Int64, i: []int64{int64(i)}}, env})
			for e := 0; e < sz; e++ {
				v.set(i*sz+e, x, e)
			}
		}
		return v
	case *core.Iota:
		v := newNval(typ)
		for i := range v.i {
			v.i[i] = int64(i)
		}
		return v
	case *core.MatMul:
		x, y := n.eval(t.X, env), n.eval(t.Y, env)
		v := newNval(typ)
		M, K, N := x.sh[0], x.sh[1], y.sh[1]
		for i := 0; i < M; i++ {
			for j := 0; j < N; j++ {
				s := 0.0
				for p := 0; p < K; p++ {
					s = n.rnd(typ.Dtype, s+n.rnd(typ.Dtype, x.f[i*K+p]*y.f[p*N+j]))
				}
				v.f[i*N+j] = s
			}
		}
		return v
	}
	panic(fmt.Sprintf("naive: unknown term %T", t))
}

// sub is the subarray of x at index ix (zeros when out of bounds).
func (n *naive) sub(x *nval, ix []int64, t core.Type) *nval {
	v := newNval(t)
	off := 0
	for k, i := range ix {
		if i < 0 || i >= int64(x.sh[k]) {
			return v
		}
		off = off*x.sh[k] + int(i)
	}
	sz := size(t.Shape)
	off *= sz
	for e := 0; e < sz; e++ {
		v.set(e, x, off+e)
	}
	return v
}

func forEach(dims []int, f func(pt []int)) {
	pt := make([]int, len(dims))
	total := size(dims)
	for p := 0; p < total; p++ {
		q := p
		for j := len(dims) - 1; j >= 0; j-- {
			pt[j] = q % dims[j]
			q /= dims[j]
		}
		f(pt)
	}
}

func naiveEval(p *core.Program, args map[string]*tensor.Dense) *nval {
	var env *nenv
	for _, v := range p.Params {
		d := args[v.Name]
		x := newNval(v.Type())
		switch v.Type().Dtype {
		case core.Float64:
			copy(x.f, d.Float64s())
		case core.Float32:
			for i, f := range d.Float32s() {
				x.f[i] = float64(f)
			}
		case core.Int64:
			copy(x.i, d.Int64s())
		default:
			copy(x.b, d.Bools())
		}
		env = &nenv{v.Name, x, env}
	}
	n := &naive{memo: map[naiveKey]*nval{}, shares: map[int]*nval{}}
	return n.eval(p.Body, env)
}

func TestEvalAgainstNaiveInterpreter(t *testing.T) {
	iters := 300
	if testing.Short() {
		iters = 60
	}
	for seed := int64(1); seed <= int64(iters); seed++ {
		rng := rand.New(rand.NewSource(seed))
		p := coretest.RandomProgram(rng, coretest.Config{})
		args := coretest.RandomArgs(rng, p)
		got, err := core.Eval(p, args)
		if err != nil {
			t.Fatalf("seed %d: %s: %v", seed, p, err)
		}
		want := naiveEval(p, args)
		if err := sameNval(got, want); err != nil {
			t.Fatalf("seed %d: %s\nargs %v\n%v", seed, p, args, err)
		}
	}
}

func sameNval(d *tensor.Dense, v *nval) error {
	var got []float64
	switch d.Dtype() {
	case tensor.Float64:
		got = d.Float64s()
	case tensor.Float32:
		for _, f := range d.Float32s() {
			got = append(got, float64(f))
		}
	default:
		return fmt.Errorf("unexpected result dtype %v", d.Dtype())
	}
	if len(got) != len(v.f) {
		return fmt.Errorf("got %d elements, want %d", len(got), len(v.f))
	}
	tol := 1e-9
	if v.dt == core.Float32 {
		tol = 1e-4
	}
	for i, w := range v.f {
		g := got[i]
		if math.IsNaN(w) && math.IsNaN(g) || g == w {
			continue
		}
		if math.Abs(g-w) > tol*(1+math.Abs(w)) {
			return fmt.Errorf("element %d: got %v, want %v\ngot  %v\nwant %v", i, g, w, got, v.f)
		}
	}
	return nil
}

// TestEvalNaiveHeavy runs 7500 random programs of several generator configurations (about
// 6 s); it is skipped unless EVAL_HEAVY is set.
func TestEvalNaiveHeavy(t *testing.T) {
	if os.Getenv("EVAL_HEAVY") == "" {
		t.Skip()
	}
	cfgs := []coretest.Config{{}, {MaxDepth: 9, MaxDim: 5}, {Dtype: core.Float32, MaxDepth: 8}, {TargetNodes: 60}, {ScalarResult: true, Smooth: true}}
	for ci, cfg := range cfgs {
		for seed := int64(1); seed <= 1500; seed++ {
			rng := rand.New(rand.NewSource(seed))
			p := coretest.RandomProgram(rng, cfg)
			args := coretest.RandomArgs(rng, p)
			got, err := core.Eval(p, args)
			if err != nil {
				t.Fatalf("cfg %d seed %d: %s: %v", ci, seed, p, err)
			}
			want := naiveEval(p, args)
			if err := sameNval(got, want); err != nil {
				t.Fatalf("cfg %d seed %d: %s\nargs %v\n%v", ci, seed, p, args, err)
			}
		}
	}
}
