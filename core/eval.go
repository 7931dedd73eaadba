package core

import (
	"fmt"
	"math"

	"github.com/pkg/errors"
)

// Eval evaluates a program whose body is not a tuple on the given arguments (one per
// parameter, by name) and returns a fresh literal (package core/tensors gives it a tensor face).
//
// Eval is the reference evaluator: the executable statement of the language's semantics,
// written to be obviously correct rather than fast (a recursive walk over the term, element by
// element, every value in a fresh array). Package kernel compiles programs into fast kernels
// and is tested against it. The semantics of the constructs (paper 000, §3.2–3.3 and §5.2):
//   - let binds its bound term, share nodes with one ID denote one value (§2.5), build1
//     evaluates its body once per index; a subterm is evaluated once per value of the
//     variables it mentions (a DAG is not unfolded into a tree);
//   - cond is strict: the condition and both branches are evaluated;
//   - f64 computes in float64, f32 in float32 (every operation rounds its result to float32),
//     i64 in two's-complement int64;
//   - index, gather: an out-of-bounds index reads zeros; scatter drops out-of-range writes and
//     adds colliding ones in the order of its domain (row-major);
//   - sumOuter adds along the outer dimension in order (an empty dimension gives 0); matmul
//     computes each result as the sum over k in order, one product per batch position;
//   - quot truncates toward zero, rem has the sign of the dividend (Go's / and %), both give 0
//     when dividing by zero;
//   - cast float→int truncates toward zero, NaN and values outside the int64 range give 0;
//     bool→number is 0 or 1; number→bool is x != 0 (so NaN → true);
//   - argmaxOuter: the first maximum wins, NaN is ignored unless every element is NaN (then
//     0), an empty outer dimension gives 0;
//   - sigmoid is numerically stable (never exp of a large positive number), pow is math.Pow,
//     sign(±0) = ±0 and sign(NaN) = NaN, recip(±0) = ±Inf, max and min return NaN when an
//     operand is NaN (also against ±Inf, where math.Max and math.Min return the infinity)
//     and otherwise follow math.Max and math.Min on signed zeros (Go's built-in max, min); comparisons
//     with NaN are false except !=.
//
// The program is type-checked first, and refused when one of its arrays is larger than the
// array limit (ArrayLimit). The arguments' shapes and dtypes must match the
// parameters; arguments that are not parameters are ignored.
func Eval(p *Program, args map[string]*Lit) (*Lit, error) {
	if p == nil {
		return nil, errors.New("core: eval: nil program")
	}
	if _, r := LetChain(p.Body); isTuple(r) {
		return nil, errors.New("core: eval: the program returns a tuple; use EvalTuple")
	}
	outs, err := EvalTuple(p, args)
	if err != nil {
		return nil, err
	}
	return outs[0], nil
}

// EvalTuple evaluates a program (see Eval) and returns its results: the components of a tuple
// body (possibly under lets), or the single result of any other body.
func EvalTuple(p *Program, args map[string]*Lit) (outs []*Lit, err error) {
	if p == nil {
		return nil, errors.New("core: eval: nil program")
	}
	if err := Check(p); err != nil {
		return nil, err
	}
	if err := checkLimit(p, "core: eval"); err != nil {
		return nil, err
	}
	ev := &evaluator{fv: newFVCache(), shares: map[*frame]map[int]*value{}}
	var fr *frame
	for _, v := range p.Params {
		d, ok := args[v.Name]
		if !ok {
			return nil, errors.Errorf("core: eval: missing argument for parameter %s : %v", v.Name, v.Type())
		}
		val, err := valueOfLit(d, v.Type())
		if err != nil {
			return nil, errors.Wrapf(err, "core: eval: argument %s", v.Name)
		}
		fr = &frame{name: v.Name, val: val, up: fr}
	}
	defer func() {
		if r := recover(); r != nil {
			outs, err = nil, errors.Errorf("core: eval: %v", r)
		}
	}()
	lets, result := LetChain(p.Body)
	for _, l := range lets {
		fr = &frame{name: l.Var.Name, val: ev.eval(l.Bound, fr), up: fr}
	}
	for _, e := range Results(result) {
		outs = append(outs, ev.eval(e, fr).lit())
	}
	return outs, nil
}

// EvalTerm evaluates a term with free variables (see Eval), taking the value of each free
// variable from env (entries for names that are not free in t are ignored). The term must not
// be a tuple.
func EvalTerm(t Term, env map[string]*Lit) (*Lit, error) {
	if t == nil {
		return nil, errors.New("core: eval: nil term")
	}
	if _, ok := t.(*Tuple); ok {
		return nil, errors.New("core: eval: term is a tuple")
	}
	fv := FreeVars(t)
	args := make(map[string]*Lit, len(fv))
	for _, v := range fv {
		d, ok := env[v.Name]
		if !ok {
			return nil, errors.Errorf("core: eval: no value for free variable %s : %v", v.Name, v.Type())
		}
		args[v.Name] = d
	}
	return Eval(&Program{Params: fv, Body: t}, args)
}

// value is an array during reference evaluation: floats (both widths) in f, integers in i,
// booleans in b, row-major. Float32 values are held in float64 and rounded to float32 after
// every operation.
type value struct {
	t Type
	f []float64
	i []int64
	b []bool
}

func newValue(t Type) *value {
	v := &value{t: t}
	n := t.Shape.Size()
	switch t.Dtype {
	case Float64, Float32:
		v.f = make([]float64, n)
	case Int64:
		v.i = make([]int64, n)
	default:
		v.b = make([]bool, n)
	}
	return v
}

func valueOfLit(l *Lit, t Type) (*value, error) {
	if l == nil {
		return nil, errors.New("value is nil")
	}
	if !l.Type().Equal(t) {
		return nil, errors.Errorf("has type %v, want %v", l.Type(), t)
	}
	v := newValue(t)
	if len(l.F) != len(v.f) || len(l.I) != len(v.i) || len(l.B) != len(v.b) {
		return nil, errors.Errorf("literal of type %v holds %d float, %d int and %d bool elements, want %d of its dtype",
			t, len(l.F), len(l.I), len(l.B), t.Shape.Size())
	}
	for k := range v.f {
		v.f[k] = round(t.Dtype, l.F[k])
	}
	copy(v.i, l.I)
	copy(v.b, l.B)
	return v, nil
}

// lit returns v as a literal (v's arrays are not shared with anything else).
func (v *value) lit() *Lit {
	return &Lit{node: node{v.t}, F: v.f, I: v.i, B: v.b}
}

// stack is the array of type t whose outer elements are elems (fromVector, replicate).
func stack(t Type, elems []*value) *value {
	out := newValue(t)
	if len(elems) == 0 {
		return out
	}
	inner := t.Shape.Size() / len(elems)
	for j, a := range elems {
		for k := range inner {
			out.set(j*inner+k, a, k)
		}
	}
	return out
}

// set copies element j of src into element k of v (same dtype).
func (v *value) set(k int, src *value, j int) {
	switch {
	case v.f != nil:
		v.f[k] = src.f[j]
	case v.i != nil:
		v.i[k] = src.i[j]
	default:
		v.b[k] = src.b[j]
	}
}

// add adds element j of src to element k of v (numeric dtypes).
func (v *value) add(k int, src *value, j int) {
	if v.f != nil {
		v.f[k] = round(v.t.Dtype, v.f[k]+src.f[j])
	} else {
		v.i[k] += src.i[j]
	}
}

// round rounds x to the precision of dtype d.
func round(d Dtype, x float64) float64 {
	if d == Float32 {
		return float64(float32(x))
	}
	return x
}

// frame is one binding of the environment (a parameter, a let, a build1 or index-function
// variable), with the values of the subterms evaluated in it.
type frame struct {
	name string
	val  *value
	up   *frame
	memo map[Term]*value
}

type evaluator struct {
	top    frame // memo of the closed subterms
	fv     *fvCache
	shares map[*frame]map[int]*value
}

// home returns the innermost frame that binds a free variable of t: t has the same value in
// fr and in home(t, fr), so it is evaluated (and memoised) there, once.
func (ev *evaluator) home(t Term, fr *frame) *frame {
	fv := ev.fv.of(t)
	for ; fr != nil; fr = fr.up {
		if _, ok := fv[fr.name]; ok {
			return fr
		}
	}
	return nil
}

func (ev *evaluator) eval(t Term, fr *frame) *value {
	h := ev.home(t, fr)
	key := h
	if key == nil {
		key = &ev.top
	}
	if v, ok := key.memo[t]; ok {
		return v
	}
	var v *value
	if s, ok := t.(*Share); ok {
		ids := ev.shares[key]
		if v, ok = ids[s.ID]; !ok {
			v = ev.eval(s.Body, fr)
			if ids == nil {
				ids = map[int]*value{}
				ev.shares[key] = ids
			}
			ids[s.ID] = v
		}
	} else {
		v = ev.eval1(t, h)
	}
	if key.memo == nil {
		key.memo = map[Term]*value{}
	}
	key.memo[t] = v
	return v
}

func (ev *evaluator) lookup(name string, fr *frame) *value {
	for ; fr != nil; fr = fr.up {
		if fr.name == name {
			return fr.val
		}
	}
	panic(fmt.Sprintf("unbound variable %s", name))
}

func intScalar(x int64) *value { return &value{t: Scalar(Int64), i: []int64{x}} }

// offset returns the row-major offset of the (possibly partial) index ix in shape sh and
// whether ix is in bounds.
func offset(sh Shape, ix []int64) (int, bool) {
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

// multiIndex returns the multi-index of row-major position n in shape sh.
func multiIndex(sh Shape, n int) []int64 {
	out := make([]int64, len(sh))
	for k := len(sh) - 1; k >= 0; k-- {
		out[k] = int64(n % sh[k])
		n /= sh[k]
	}
	return out
}

// indexFn evaluates fn at the domain point is.
func (ev *evaluator) indexFn(fn *IndexFn, is []int64, fr *frame) []int64 {
	for k, v := range fn.Vars {
		fr = &frame{name: v.Name, val: intScalar(is[k]), up: fr}
	}
	out := make([]int64, len(fn.Out))
	for k, o := range fn.Out {
		out[k] = ev.eval(o, fr).i[0]
	}
	return out
}

func (ev *evaluator) eval1(t Term, fr *frame) *value {
	switch x := t.(type) {
	case *Var:
		return ev.lookup(x.Name, fr)
	case *Lit:
		v := newValue(x.Type())
		copy(v.f, x.F)
		copy(v.i, x.I)
		copy(v.b, x.B)
		return v
	case *Let:
		b := ev.eval(x.Bound, fr)
		return ev.eval(x.Body, &frame{name: x.Var.Name, val: b, up: fr})
	case *Cond:
		c, a, b := ev.eval(x.C, fr), ev.eval(x.Then, fr), ev.eval(x.Else, fr)
		if c.b[0] {
			return a
		}
		return b
	case *Unary:
		return unaryValue(x.Op, ev.eval(x.X, fr))
	case *Cast:
		return castValue(x.To, ev.eval(x.X, fr))
	case *Binary:
		return binaryValue(x.Op, ev.eval(x.X, fr), ev.eval(x.Y, fr), x.Type())
	case *Index:
		a := ev.eval(x.X, fr)
		ix := make([]int64, len(x.Ix))
		for k, e := range x.Ix {
			ix[k] = ev.eval(e, fr).i[0]
		}
		out := newValue(x.Type())
		if off, ok := offset(a.t.Shape, ix); ok {
			for k := range x.Type().Shape.Size() {
				out.set(k, a, off+k)
			}
		}
		return out
	case *SumOuter:
		a := ev.eval(x.X, fr)
		out := newValue(x.Type())
		inner := x.Type().Shape.Size()
		for j := range a.t.Shape[0] {
			for k := range inner {
				out.add(k, a, j*inner+k)
			}
		}
		return out
	case *ArgmaxOuter:
		return argmaxValue(ev.eval(x.X, fr), x.Type())
	case *Gather:
		a := ev.eval(x.X, fr)
		out := newValue(x.Type())
		dom := x.Shape[:len(x.Fn.Vars)]
		rest := x.Shape[len(x.Fn.Vars):].Size()
		for d := range dom.Size() {
			if off, ok := offset(a.t.Shape, ev.indexFn(x.Fn, multiIndex(dom, d), fr)); ok {
				for r := range rest {
					out.set(d*rest+r, a, off+r)
				}
			}
		}
		return out
	case *Scatter:
		a := ev.eval(x.X, fr)
		out := newValue(x.Type())
		dom := a.t.Shape[:len(x.Fn.Vars)]
		rest := a.t.Shape[len(x.Fn.Vars):].Size()
		for d := range dom.Size() {
			if off, ok := offset(x.Shape, ev.indexFn(x.Fn, multiIndex(dom, d), fr)); ok {
				for r := range rest {
					out.add(off+r, a, d*rest+r)
				}
			}
		}
		return out
	case *FromVector:
		elems := make([]*value, len(x.Elems))
		for j, el := range x.Elems {
			elems[j] = ev.eval(el, fr)
		}
		return stack(x.Type(), elems)
	case *Replicate:
		a := ev.eval(x.X, fr)
		elems := make([]*value, x.N)
		for j := range elems {
			elems[j] = a
		}
		return stack(x.Type(), elems)
	case *Transpose:
		a := ev.eval(x.X, fr)
		out := newValue(x.Type())
		sh := x.Type().Shape
		for k := range sh.Size() {
			ri := multiIndex(sh, k)
			si := append([]int64{}, ri...)
			for p, q := range x.Perm {
				si[q] = ri[p]
			}
			off, _ := offset(a.t.Shape, si)
			out.set(k, a, off)
		}
		return out
	case *Reshape:
		a := ev.eval(x.X, fr)
		return &value{t: x.Type(), f: a.f, i: a.i, b: a.b}
	case *Build1:
		out := newValue(x.Type())
		inner := x.Body.Type().Shape.Size()
		for j := range x.N {
			a := ev.eval(x.Body, &frame{name: x.Var.Name, val: intScalar(int64(j)), up: fr})
			for k := range inner {
				out.set(j*inner+k, a, k)
			}
		}
		return out
	case *Iota:
		out := newValue(x.Type())
		for j := range out.i {
			out.i[j] = int64(j)
		}
		return out
	case *MatMul:
		a, b := ev.eval(x.X, fr), ev.eval(x.Y, fr)
		r := len(a.t.Shape)
		m, c, n := a.t.Shape[r-2], a.t.Shape[r-1], b.t.Shape[r-1]
		out := newValue(x.Type())
		d := x.Type().Dtype
		for p := range a.t.Shape[:r-2].Size() {
			af, bf, of := a.f[p*m*c:(p+1)*m*c], b.f[p*c*n:(p+1)*c*n], out.f[p*m*n:(p+1)*m*n]
			for i := range m {
				for j := range n {
					s := 0.0
					for k := range c {
						s = round(d, s+round(d, af[i*c+k]*bf[k*n+j]))
					}
					of[i*n+j] = s
				}
			}
		}
		return out
	case *Tuple:
		panic("a tuple appears below the top level")
	}
	panic(fmt.Sprintf("cannot evaluate %T", t))
}

func argmaxValue(a *value, t Type) *value {
	out := newValue(t)
	inner := t.Shape.Size()
	for k := range inner {
		best := -1
		for j := range a.t.Shape[0] {
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
		out.i[k] = int64(max(best, 0))
	}
	return out
}
