package coretest

import (
	"fmt"
	"math"

	"github.com/bulkad/bulkad/core"
	"gorgonia.org/tensor"
)

// NaiveEval is a deliberately simple tree-walking evaluator of core programs (no sharing,
// no compilation, a fresh environment per binder), written independently of core.Eval so
// that tests can cross-check the two. It follows the semantics documented on core.Exec:
// out-of-bounds index/gather read 0, scatter drops out-of-range writes, quot/rem by 0 give
// 0, float→int casts truncate (NaN and out-of-range give 0), float32 arithmetic rounds every
// result to float32. It is exponential on DAGs with much sharing; use it on small programs.
// The body must not be a tuple.
func NaiveEval(p *core.Program, args map[string]*tensor.Dense) (out *tensor.Dense, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("coretest: naive eval: %v", r)
		}
	}()
	env := map[string]*nval{}
	for _, v := range p.Params {
		d, ok := args[v.Name]
		if !ok {
			return nil, fmt.Errorf("coretest: naive eval: no argument %s", v.Name)
		}
		env[v.Name] = fromDense(d, v.Type())
	}
	r := neval(p.Body, env)
	return r.dense(), nil
}

type nval struct {
	t core.Type
	f []float64
	i []int64
	b []bool
}

func newVal(t core.Type) *nval {
	v := &nval{t: core.Type{Shape: t.Shape.Clone(), Dtype: t.Dtype}}
	n := t.Shape.Size()
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

func fromDense(d *tensor.Dense, t core.Type) *nval {
	v := newVal(t)
	switch x := d.Data().(type) {
	case []float64:
		copy(v.f, x)
	case []float32:
		for k, e := range x {
			v.f[k] = float64(e)
		}
	case []int64:
		copy(v.i, x)
	case []bool:
		copy(v.b, x)
	case float64:
		v.f[0] = x
	case float32:
		v.f[0] = float64(x)
	case int64:
		v.i[0] = x
	case bool:
		v.b[0] = x
	}
	return v
}

func (v *nval) dense() *tensor.Dense {
	var back interface{}
	switch v.t.Dtype {
	case core.Float64:
		back = append([]float64{}, v.f...)
	case core.Float32:
		s := make([]float32, len(v.f))
		for k, e := range v.f {
			s[k] = float32(e)
		}
		back = s
	case core.Int64:
		back = append([]int64{}, v.i...)
	default:
		back = append([]bool{}, v.b...)
	}
	return tensor.New(tensor.WithShape([]int(v.t.Shape.Clone())...), tensor.WithBacking(back))
}

// copyElem copies element src[j] to dst[k] (same dtype).
func copyElem(dst *nval, k int, src *nval, j int) {
	switch {
	case dst.f != nil:
		dst.f[k] = src.f[j]
	case dst.i != nil:
		dst.i[k] = src.i[j]
	default:
		dst.b[k] = src.b[j]
	}
}

func rnd(d core.Dtype, x float64) float64 {
	if d == core.Float32 {
		return float64(float32(x))
	}
	return x
}

func extend(env map[string]*nval, name string, v *nval) map[string]*nval {
	e := make(map[string]*nval, len(env)+1)
	for k, x := range env {
		e[k] = x
	}
	e[name] = v
	return e
}

func scalarI(v int64) *nval { return &nval{t: core.Scalar(core.Int64), i: []int64{v}} }

// offset returns the row-major offset of index ix (a prefix) in shape sh, and whether it is
// in bounds.
func offset(sh core.Shape, ix []int64) (int, bool) {
	st := sh.Strides()
	off := 0
	for k, e := range ix {
		if e < 0 || e >= int64(sh[k]) {
			return 0, false
		}
		off += int(e) * st[k]
	}
	return off, true
}

// multi returns the multi-index of linear position n in shape sh.
func multi(sh core.Shape, n int) []int64 {
	out := make([]int64, len(sh))
	for k := len(sh) - 1; k >= 0; k-- {
		if sh[k] > 0 {
			out[k] = int64(n % sh[k])
			n /= sh[k]
		}
	}
	return out
}

func neval(t core.Term, env map[string]*nval) *nval {
	switch x := t.(type) {
	case *core.Var:
		v, ok := env[x.Name]
		if !ok {
			panic("unbound " + x.Name)
		}
		return v
	case *core.Lit:
		v := newVal(x.Type())
		copy(v.f, x.F)
		copy(v.i, x.I)
		copy(v.b, x.B)
		return v
	case *core.Let:
		return neval(x.Body, extend(env, x.Var.Name, neval(x.Bound, env)))
	case *core.Share:
		return neval(x.Body, env)
	case *core.Cond:
		c := neval(x.C, env)
		a, b := neval(x.Then, env), neval(x.Else, env)
		if c.b[0] {
			return a
		}
		return b
	case *core.Unary:
		return nunary(x.Op, neval(x.X, env))
	case *core.Cast:
		return ncast(x.To, neval(x.X, env))
	case *core.Binary:
		return nbinary(x.Op, neval(x.X, env), neval(x.Y, env), x.Type())
	case *core.Index:
		a := neval(x.X, env)
		ix := make([]int64, len(x.Ix))
		for k, e := range x.Ix {
			ix[k] = neval(e, env).i[0]
		}
		out := newVal(x.Type())
		off, ok := offset(a.t.Shape, ix)
		if ok {
			for k := 0; k < x.Type().Shape.Size(); k++ {
				copyElem(out, k, a, off+k)
			}
		}
		return out
	case *core.SumOuter:
		a := neval(x.X, env)
		out := newVal(x.Type())
		inner := x.Type().Shape.Size()
		for j := 0; j < a.t.Shape[0]; j++ {
			for k := 0; k < inner; k++ {
				if out.f != nil {
					out.f[k] = rnd(a.t.Dtype, out.f[k]+a.f[j*inner+k])
				} else {
					out.i[k] += a.i[j*inner+k]
				}
			}
		}
		return out
	case *core.ArgmaxOuter:
		a := neval(x.X, env)
		out := newVal(x.Type())
		inner := x.Type().Shape.Size()
		for k := 0; k < inner; k++ {
			best := -1
			for j := 0; j < a.t.Shape[0]; j++ {
				if a.f != nil {
					e := a.f[j*inner+k]
					if math.IsNaN(e) {
						continue
					}
					if best < 0 || e > a.f[best*inner+k] {
						best = j
					}
				} else if best < 0 || a.i[j*inner+k] > a.i[best*inner+k] {
					best = j
				}
			}
			if best < 0 {
				best = 0
			}
			out.i[k] = int64(best)
		}
		return out
	case *core.Gather:
		a := neval(x.X, env)
		out := newVal(x.Type())
		n := len(x.Fn.Vars)
		dom := x.Shape[:n]
		rest := core.Shape(x.Shape[n:]).Size()
		for d := 0; d < dom.Size(); d++ {
			is := multi(dom, d)
			e := env
			for k, v := range x.Fn.Vars {
				e = extend(e, v.Name, scalarI(is[k]))
			}
			ix := make([]int64, len(x.Fn.Out))
			for k, o := range x.Fn.Out {
				ix[k] = neval(o, e).i[0]
			}
			off, ok := offset(a.t.Shape, ix)
			if !ok {
				continue
			}
			for r := 0; r < rest; r++ {
				copyElem(out, d*rest+r, a, off+r)
			}
		}
		return out
	case *core.Scatter:
		a := neval(x.X, env)
		out := newVal(x.Type())
		n := len(x.Fn.Vars)
		dom := a.t.Shape[:n]
		rest := core.Shape(a.t.Shape[n:]).Size()
		for d := 0; d < dom.Size(); d++ {
			is := multi(dom, d)
			e := env
			for k, v := range x.Fn.Vars {
				e = extend(e, v.Name, scalarI(is[k]))
			}
			ix := make([]int64, len(x.Fn.Out))
			for k, o := range x.Fn.Out {
				ix[k] = neval(o, e).i[0]
			}
			off, ok := offset(x.Shape, ix)
			if !ok {
				continue
			}
			for r := 0; r < rest; r++ {
				if out.f != nil {
					out.f[off+r] = rnd(out.t.Dtype, out.f[off+r]+a.f[d*rest+r])
				} else {
					out.i[off+r] += a.i[d*rest+r]
				}
			}
		}
		return out
	case *core.FromVector:
		out := newVal(x.Type())
		inner := x.Elems[0].Type().Shape.Size()
		for j, el := range x.Elems {
			a := neval(el, env)
			for k := 0; k < inner; k++ {
				copyElem(out, j*inner+k, a, k)
			}
		}
		return out
	case *core.Replicate:
		a := neval(x.X, env)
		out := newVal(x.Type())
		inner := a.t.Shape.Size()
		for j := 0; j < x.N; j++ {
			for k := 0; k < inner; k++ {
				copyElem(out, j*inner+k, a, k)
			}
		}
		return out
	case *core.Transpose:
		a := neval(x.X, env)
		out := newVal(x.Type())
		for k := 0; k < x.Type().Shape.Size(); k++ {
			ri := multi(x.Type().Shape, k)
			si := append([]int64{}, ri...)
			for p, q := range x.Perm {
				si[q] = ri[p]
			}
			off, _ := offset(a.t.Shape, si)
			copyElem(out, k, a, off)
		}
		return out
	case *core.Reshape:
		a := neval(x.X, env)
		out := newVal(x.Type())
		copy(out.f, a.f)
		copy(out.i, a.i)
		copy(out.b, a.b)
		return out
	case *core.Build1:
		out := newVal(x.Type())
		inner := x.Body.Type().Shape.Size()
		for j := 0; j < x.N; j++ {
			a := neval(x.Body, extend(env, x.Var.Name, scalarI(int64(j))))
			for k := 0; k < inner; k++ {
				copyElem(out, j*inner+k, a, k)
			}
		}
		return out
	case *core.Iota:
		out := newVal(x.Type())
		for j := range out.i {
			out.i[j] = int64(j)
		}
		return out
	case *core.MatMul:
		a, b := neval(x.X, env), neval(x.Y, env)
		m, c, n := a.t.Shape[0], a.t.Shape[1], b.t.Shape[1]
		out := newVal(x.Type())
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				s := 0.0
				for k := 0; k < c; k++ {
					s = rnd(out.t.Dtype, s+rnd(out.t.Dtype, a.f[i*c+k]*b.f[k*n+j]))
				}
				out.f[i*n+j] = s
			}
		}
		return out
	}
	panic(fmt.Sprintf("cannot evaluate %T", t))
}

func nunary(op core.UnOp, a *nval) *nval {
	out := newVal(a.t)
	d := a.t.Dtype
	switch {
	case a.b != nil:
		for k, e := range a.b {
			out.b[k] = !e
		}
	case a.i != nil:
		for k, e := range a.i {
			switch op {
			case core.OpNeg:
				out.i[k] = -e
			case core.OpAbs:
				if e < 0 {
					e = -e
				}
				out.i[k] = e
			case core.OpSign:
				switch {
				case e > 0:
					out.i[k] = 1
				case e < 0:
					out.i[k] = -1
				}
			}
		}
	default:
		for k, e := range a.f {
			var r float64
			switch op {
			case core.OpNeg:
				r = -e
			case core.OpAbs:
				r = math.Abs(e)
			case core.OpSign:
				switch {
				case e > 0:
					r = 1
				case e < 0:
					r = -1
				default:
					r = e // 0 (and NaN stays NaN)
				}
			case core.OpExp:
				r = math.Exp(e)
			case core.OpLog:
				r = math.Log(e)
			case core.OpSqrt:
				r = math.Sqrt(e)
			case core.OpSin:
				r = math.Sin(e)
			case core.OpCos:
				r = math.Cos(e)
			case core.OpTan:
				r = math.Tan(e)
			case core.OpTanh:
				r = math.Tanh(e)
			case core.OpSigmoid:
				r = 1 / (1 + math.Exp(-e))
			case core.OpRecip:
				r = 1 / e
			case core.OpFloor:
				r = math.Floor(e)
			case core.OpCeil:
				r = math.Ceil(e)
			case core.OpLog1p:
				r = math.Log1p(e)
			case core.OpExpm1:
				r = math.Expm1(e)
			}
			out.f[k] = rnd(d, r)
		}
	}
	return out
}

func ncast(to core.Dtype, a *nval) *nval {
	out := newVal(core.Type{Shape: a.t.Shape, Dtype: to})
	n := a.t.Shape.Size()
	for k := 0; k < n; k++ {
		var f float64
		var i int64
		var b bool
		switch {
		case a.f != nil:
			f = a.f[k]
			if !math.IsNaN(f) && f > -9.2e18 && f < 9.2e18 {
				i = int64(f)
			}
			b = f != 0
		case a.i != nil:
			i = a.i[k]
			f = float64(i)
			b = i != 0
		default:
			if a.b[k] {
				f, i, b = 1, 1, true
			}
		}
		switch to {
		case core.Float64, core.Float32:
			out.f[k] = rnd(to, f)
		case core.Int64:
			out.i[k] = i
		default:
			out.b[k] = b
		}
	}
	return out
}

func nbinary(op core.BinOp, a, b *nval, rt core.Type) *nval {
	out := newVal(rt)
	n := a.t.Shape.Size()
	d := a.t.Dtype
	for k := 0; k < n; k++ {
		switch {
		case a.b != nil:
			x, y := a.b[k], b.b[k]
			switch op {
			case core.OpAnd:
				out.b[k] = x && y
			case core.OpOr:
				out.b[k] = x || y
			case core.OpEq:
				out.b[k] = x == y
			case core.OpNe:
				out.b[k] = x != y
			}
		case a.i != nil:
			x, y := a.i[k], b.i[k]
			var r int64
			var c, isCmp bool
			switch op {
			case core.OpAdd:
				r = x + y
			case core.OpSub:
				r = x - y
			case core.OpMul:
				r = x * y
			case core.OpMax:
				r = max(x, y)
			case core.OpMin:
				r = min(x, y)
			case core.OpQuot:
				switch y {
				case 0:
				case -1:
					r = -x
				default:
					r = x / y
				}
			case core.OpRem:
				if y != 0 && y != -1 {
					r = x % y
				}
			default:
				isCmp = true
				c = cmpOp(op, float64(0), float64(0), x, y, false)
			}
			if isCmp {
				out.b[k] = c
			} else {
				out.i[k] = r
			}
		default:
			x, y := a.f[k], b.f[k]
			var r float64
			switch op {
			case core.OpAdd:
				r = x + y
			case core.OpSub:
				r = x - y
			case core.OpMul:
				r = x * y
			case core.OpDiv:
				r = x / y
			case core.OpPow:
				r = math.Pow(x, y)
			case core.OpMax:
				if math.IsNaN(x) || math.IsNaN(y) {
					r = math.NaN()
				} else {
					r = math.Max(x, y)
				}
			case core.OpMin:
				if math.IsNaN(x) || math.IsNaN(y) {
					r = math.NaN()
				} else {
					r = math.Min(x, y)
				}
			case core.OpAtan2:
				r = math.Atan2(x, y)
			default:
				out.b[k] = cmpOp(op, x, y, 0, 0, true)
				continue
			}
			out.f[k] = rnd(d, r)
		}
	}
	return out
}

func cmpOp(op core.BinOp, x, y float64, a, b int64, isFloat bool) bool {
	var lt, eq bool
	if isFloat {
		lt, eq = x < y, x == y
		if math.IsNaN(x) || math.IsNaN(y) {
			return op == core.OpNe
		}
	} else {
		lt, eq = a < b, a == b
	}
	switch op {
	case core.OpLt:
		return lt
	case core.OpLe:
		return lt || eq
	case core.OpGt:
		return !lt && !eq
	case core.OpGe:
		return !lt
	case core.OpEq:
		return eq
	case core.OpNe:
		return !eq
	}
	return false
}
