package ad

import (
	"math"

	"github.com/bulkad/bulkad/core"
	"github.com/pkg/errors"
	"gorgonia.org/tensor"
)

// value is a concrete array used by ad's own small evaluator: the concrete reverse pass of
// Fig. 17 works on these, and the tests use the evaluator as an oracle independent of
// core.Eval. Floating arrays keep float64 storage; float32 results are rounded to float32
// after every operation, so float32 programs behave like float32 arithmetic.
type value struct {
	typ core.Type
	f   []float64
	i   []int64
	b   []bool
}

func newValue(t core.Type) *value {
	v := &value{typ: core.Type{Shape: t.Shape.Clone(), Dtype: t.Dtype}}
	n := t.Shape.Size()
	switch t.Dtype {
	case core.Float64, core.Float32:
		v.f = make([]float64, n)
	case core.Int64:
		v.i = make([]int64, n)
	case core.Bool:
		v.b = make([]bool, n)
	}
	return v
}

func (v *value) round() {
	if v.typ.Dtype == core.Float32 {
		for k, x := range v.f {
			v.f[k] = float64(float32(x))
		}
	}
}

// numAt returns element k as a float64 (for numeric arrays).
func (v *value) numAt(k int) float64 {
	if v.f != nil {
		return v.f[k]
	}
	if v.i != nil {
		return float64(v.i[k])
	}
	if v.b[k] {
		return 1
	}
	return 0
}

// toDense converts a value into a tensor of its dtype and shape.
func (v *value) toDense() *tensor.Dense {
	var backing interface{}
	switch v.typ.Dtype {
	case core.Float64:
		backing = append([]float64{}, v.f...)
	case core.Float32:
		f := make([]float32, len(v.f))
		for k, x := range v.f {
			f[k] = float32(x)
		}
		backing = f
	case core.Int64:
		backing = append([]int64{}, v.i...)
	case core.Bool:
		backing = append([]bool{}, v.b...)
	}
	if len(v.typ.Shape) == 0 {
		switch b := backing.(type) {
		case []float64:
			return tensor.New(tensor.FromScalar(b[0]))
		case []float32:
			return tensor.New(tensor.FromScalar(b[0]))
		case []int64:
			return tensor.New(tensor.FromScalar(b[0]))
		case []bool:
			return tensor.New(tensor.FromScalar(b[0]))
		}
	}
	return tensor.New(tensor.WithShape([]int(v.typ.Shape)...), tensor.WithBacking(backing))
}

// evaluator is a direct, unoptimised interpreter of core terms over values. Variables are
// looked up in env and then in the parent evaluator (the scope outside an index function or
// build1 body). Results are memoised per node within one scope.
type evaluator struct {
	parent *evaluator
	env    map[string]*value
	memo   map[core.Term]*value
	shares map[int]*value
}

func newEvaluator(env map[string]*value) *evaluator {
	if env == nil {
		env = map[string]*value{}
	}
	return &evaluator{env: env, memo: map[core.Term]*value{}, shares: map[int]*value{}}
}

func (e *evaluator) child(vars []*core.Var, vals []int64) *evaluator {
	c := &evaluator{parent: e, env: map[string]*value{}, memo: map[core.Term]*value{}, shares: e.shares}
	for k, v := range vars {
		x := newValue(core.Scalar(core.Int64))
		x.i[0] = vals[k]
		c.env[v.Name] = x
	}
	return c
}

func (e *evaluator) lookup(name string) (*value, bool) {
	for s := e; s != nil; s = s.parent {
		if v, ok := s.env[name]; ok {
			return v, true
		}
	}
	return nil, false
}

// evalProgram evaluates p's body (a Tuple gives several results).
func evalProgram(p *core.Program, args map[string]*value) ([]*value, error) {
	// With distinct let names, a let can extend the environment in place and results can be
	// memoised by node.
	p, err := uniquify(p, nil)
	if err != nil {
		return nil, err
	}
	e := newEvaluator(map[string]*value{})
	for _, v := range p.Params {
		a, ok := args[v.Name]
		if !ok {
			return nil, errors.Errorf("ad: eval: argument %s is missing", v.Name)
		}
		e.env[v.Name] = a
	}
	t := p.Body
	for {
		l, ok := t.(*core.Let)
		if !ok {
			break
		}
		x, err := e.eval(l.Bound)
		if err != nil {
			return nil, err
		}
		e.env[l.Var.Name] = x
		t = l.Body
	}
	if tu, ok := t.(*core.Tuple); ok {
		out := make([]*value, len(tu.Elems))
		for k, el := range tu.Elems {
			x, err := e.eval(el)
			if err != nil {
				return nil, err
			}
			out[k] = x
		}
		return out, nil
	}
	x, err := e.eval(t)
	if err != nil {
		return nil, err
	}
	return []*value{x}, nil
}

func (e *evaluator) ints(ts []core.Term) ([]int64, error) {
	out := make([]int64, len(ts))
	for k, t := range ts {
		v, err := e.eval(t)
		if err != nil {
			return nil, err
		}
		out[k] = v.i[0]
	}
	return out, nil
}

// offset is the row-major offset of the (partial) index ix into shape sh, or -1 if out of bounds.
func offset(sh core.Shape, ix []int64) int {
	off := 0
	for k, i := range ix {
		if i < 0 || i >= int64(sh[k]) {
			return -1
		}
		off = off*sh[k] + int(i)
	}
	return off * core.Shape(sh[len(ix):]).Size()
}

// forEachIndex calls f with every multi-index of sh in row-major order.
func forEachIndex(sh core.Shape, f func(ix []int64) error) error {
	n := sh.Size()
	ix := make([]int64, len(sh))
	for k := 0; k < n; k++ {
		if err := f(ix); err != nil {
			return err
		}
		for d := len(sh) - 1; d >= 0; d-- {
			ix[d]++
			if ix[d] < int64(sh[d]) {
				break
			}
			ix[d] = 0
		}
	}
	return nil
}

func copyBlock(dst *value, doff int, src *value, soff, n int, add bool) {
	switch {
	case dst.f != nil:
		for k := 0; k < n; k++ {
			if add {
				dst.f[doff+k] += src.f[soff+k]
			} else {
				dst.f[doff+k] = src.f[soff+k]
			}
		}
	case dst.i != nil:
		for k := 0; k < n; k++ {
			if add {
				dst.i[doff+k] += src.i[soff+k]
			} else {
				dst.i[doff+k] = src.i[soff+k]
			}
		}
	case dst.b != nil:
		for k := 0; k < n; k++ {
			dst.b[doff+k] = src.b[soff+k]
		}
	}
}

func (e *evaluator) eval(t core.Term) (*value, error) {
	if v, ok := e.memo[t]; ok {
		return v, nil
	}
	v, err := e.eval1(t)
	if err != nil {
		return nil, err
	}
	e.memo[t] = v
	return v, nil
}

func (e *evaluator) eval1(t core.Term) (*value, error) {
	switch t := t.(type) {
	case *core.Var:
		v, ok := e.lookup(t.Name)
		if !ok {
			return nil, errors.Errorf("ad: eval: unbound variable %s", t.Name)
		}
		return v, nil
	case *core.Lit:
		v := newValue(t.Type())
		copy(v.f, t.F)
		copy(v.i, t.I)
		copy(v.b, t.B)
		return v, nil
	case *core.Let:
		x, err := e.eval(t.Bound)
		if err != nil {
			return nil, err
		}
		e.env[t.Var.Name] = x
		return e.eval(t.Body)
	case *core.Share:
		if v, ok := e.shares[t.ID]; ok {
			return v, nil
		}
		v, err := e.eval(t.Body)
		if err != nil {
			return nil, err
		}
		e.shares[t.ID] = v
		return v, nil
	case *core.Cond:
		c, err := e.eval(t.C)
		if err != nil {
			return nil, err
		}
		a, err := e.eval(t.Then)
		if err != nil {
			return nil, err
		}
		b, err := e.eval(t.Else)
		if err != nil {
			return nil, err
		}
		if c.b[0] {
			return a, nil
		}
		return b, nil
	case *core.Unary:
		x, err := e.eval(t.X)
		if err != nil {
			return nil, err
		}
		return unaryValue(t.Op, x), nil
	case *core.Cast:
		x, err := e.eval(t.X)
		if err != nil {
			return nil, err
		}
		return castValue(t.To, x), nil
	case *core.Binary:
		x, err := e.eval(t.X)
		if err != nil {
			return nil, err
		}
		y, err := e.eval(t.Y)
		if err != nil {
			return nil, err
		}
		return binaryValue(t.Op, x, y, t.Type()), nil
	case *core.Index:
		x, err := e.eval(t.X)
		if err != nil {
			return nil, err
		}
		ix, err := e.ints(t.Ix)
		if err != nil {
			return nil, err
		}
		out := newValue(t.Type())
		if off := offset(x.typ.Shape, ix); off >= 0 {
			copyBlock(out, 0, x, off, t.Type().Shape.Size(), false)
		}
		return out, nil
	case *core.SumOuter:
		x, err := e.eval(t.X)
		if err != nil {
			return nil, err
		}
		out := newValue(t.Type())
		n := t.Type().Shape.Size()
		for k := 0; k < x.typ.Shape[0]; k++ {
			copyBlock(out, 0, x, k*n, n, true)
		}
		out.round()
		return out, nil
	case *core.ArgmaxOuter:
		x, err := e.eval(t.X)
		if err != nil {
			return nil, err
		}
		out := newValue(t.Type())
		n := t.Type().Shape.Size()
		for j := 0; j < n; j++ {
			best := -1
			var bv float64
			for k := 0; k < x.typ.Shape[0]; k++ {
				c := x.numAt(k*n + j)
				if c != c {
					continue
				}
				if best < 0 || c > bv {
					best, bv = k, c
				}
			}
			if best < 0 {
				best = 0
			}
			out.i[j] = int64(best)
		}
		return out, nil
	case *core.Gather:
		x, err := e.eval(t.X)
		if err != nil {
			return nil, err
		}
		out := newValue(t.Type())
		n := len(t.Fn.Vars)
		inner := core.Shape(t.Shape[n:]).Size()
		pos := 0
		err = forEachIndex(core.Shape(t.Shape[:n]), func(is []int64) error {
			ix, err := e.child(t.Fn.Vars, is).ints(t.Fn.Out)
			if err != nil {
				return err
			}
			if off := offset(x.typ.Shape, ix); off >= 0 {
				copyBlock(out, pos, x, off, inner, false)
			}
			pos += inner
			return nil
		})
		return out, err
	case *core.Scatter:
		x, err := e.eval(t.X)
		if err != nil {
			return nil, err
		}
		out := newValue(t.Type())
		n := len(t.Fn.Vars)
		inner := core.Shape(x.typ.Shape[n:]).Size()
		pos := 0
		err = forEachIndex(core.Shape(x.typ.Shape[:n]), func(is []int64) error {
			ix, err := e.child(t.Fn.Vars, is).ints(t.Fn.Out)
			if err != nil {
				return err
			}
			if off := offset(t.Shape, ix); off >= 0 {
				copyBlock(out, off, x, pos, inner, true)
			}
			pos += inner
			return nil
		})
		out.round()
		return out, err
	case *core.FromVector:
		out := newValue(t.Type())
		inner := t.Elems[0].Type().Shape.Size()
		for k, el := range t.Elems {
			x, err := e.eval(el)
			if err != nil {
				return nil, err
			}
			copyBlock(out, k*inner, x, 0, inner, false)
		}
		return out, nil
	case *core.Replicate:
		x, err := e.eval(t.X)
		if err != nil {
			return nil, err
		}
		out := newValue(t.Type())
		inner := x.typ.Shape.Size()
		for k := 0; k < t.N; k++ {
			copyBlock(out, k*inner, x, 0, inner, false)
		}
		return out, nil
	case *core.Transpose:
		x, err := e.eval(t.X)
		if err != nil {
			return nil, err
		}
		out := newValue(t.Type())
		xs := x.typ.Shape.Strides()
		m := len(t.Perm)
		inner := core.Shape(x.typ.Shape[m:]).Size()
		pos := 0
		err = forEachIndex(core.Shape(t.Type().Shape[:m]), func(is []int64) error {
			off := 0
			for p, i := range is {
				off += int(i) * xs[t.Perm[p]]
			}
			copyBlock(out, pos, x, off, inner, false)
			pos += inner
			return nil
		})
		return out, err
	case *core.Reshape:
		x, err := e.eval(t.X)
		if err != nil {
			return nil, err
		}
		out := newValue(t.Type())
		copyBlock(out, 0, x, 0, x.typ.Shape.Size(), false)
		return out, nil
	case *core.Build1:
		out := newValue(t.Type())
		inner := t.Body.Type().Shape.Size()
		for k := 0; k < t.N; k++ {
			x, err := e.child([]*core.Var{t.Var}, []int64{int64(k)}).eval(t.Body)
			if err != nil {
				return nil, err
			}
			copyBlock(out, k*inner, x, 0, inner, false)
		}
		return out, nil
	case *core.Iota:
		out := newValue(t.Type())
		for k := range out.i {
			out.i[k] = int64(k)
		}
		return out, nil
	case *core.MatMul:
		x, err := e.eval(t.X)
		if err != nil {
			return nil, err
		}
		y, err := e.eval(t.Y)
		if err != nil {
			return nil, err
		}
		m, k, n := x.typ.Shape[0], x.typ.Shape[1], y.typ.Shape[1]
		out := newValue(t.Type())
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				s := 0.0
				for l := 0; l < k; l++ {
					s += x.f[i*k+l] * y.f[l*n+j]
				}
				out.f[i*n+j] = s
			}
		}
		out.round()
		return out, nil
	}
	return nil, errors.Errorf("ad: eval: unsupported term %T", t)
}

func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	z := math.Exp(x)
	return z / (1 + z)
}

func unaryValue(op core.UnOp, x *value) *value {
	out := newValue(x.typ)
	if x.typ.Dtype == core.Bool {
		for k, b := range x.b {
			out.b[k] = !b
		}
		return out
	}
	if x.typ.Dtype == core.Int64 {
		for k, a := range x.i {
			switch op {
			case core.OpNeg:
				out.i[k] = -a
			case core.OpAbs:
				if a < 0 {
					a = -a
				}
				out.i[k] = a
			case core.OpSign:
				switch {
				case a > 0:
					out.i[k] = 1
				case a < 0:
					out.i[k] = -1
				}
			}
		}
		return out
	}
	for k, a := range x.f {
		var r float64
		switch op {
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
			r = sigmoid(a)
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
		out.f[k] = r
	}
	out.round()
	return out
}

func castValue(to core.Dtype, x *value) *value {
	out := newValue(core.Type{Shape: x.typ.Shape, Dtype: to})
	n := x.typ.Shape.Size()
	for k := 0; k < n; k++ {
		a := x.numAt(k)
		switch to {
		case core.Float64, core.Float32:
			if x.i != nil {
				out.f[k] = float64(x.i[k])
			} else {
				out.f[k] = a
			}
		case core.Int64:
			if x.i != nil {
				out.i[k] = x.i[k]
			} else if a != a || a >= 9.2e18 || a <= -9.2e18 {
				out.i[k] = 0
			} else {
				out.i[k] = int64(a)
			}
		case core.Bool:
			if x.i != nil {
				out.b[k] = x.i[k] != 0
			} else {
				out.b[k] = a != 0
			}
		}
	}
	out.round()
	return out
}

func binaryValue(op core.BinOp, x, y *value, t core.Type) *value {
	out := newValue(t)
	n := t.Shape.Size()
	d := x.typ.Dtype
	for k := 0; k < n; k++ {
		switch {
		case op.IsComparison():
			var r bool
			if d == core.Bool {
				a, b := x.b[k], y.b[k]
				if op == core.OpEq {
					r = a == b
				} else {
					r = a != b
				}
			} else if d == core.Int64 {
				a, b := x.i[k], y.i[k]
				switch op {
				case core.OpLt:
					r = a < b
				case core.OpLe:
					r = a <= b
				case core.OpGt:
					r = a > b
				case core.OpGe:
					r = a >= b
				case core.OpEq:
					r = a == b
				case core.OpNe:
					r = a != b
				}
			} else {
				a, b := x.f[k], y.f[k]
				switch op {
				case core.OpLt:
					r = a < b
				case core.OpLe:
					r = a <= b
				case core.OpGt:
					r = a > b
				case core.OpGe:
					r = a >= b
				case core.OpEq:
					r = a == b
				case core.OpNe:
					r = a != b
				}
			}
			out.b[k] = r
		case d == core.Bool:
			if op == core.OpAnd {
				out.b[k] = x.b[k] && y.b[k]
			} else {
				out.b[k] = x.b[k] || y.b[k]
			}
		case d == core.Int64:
			a, b := x.i[k], y.i[k]
			var r int64
			switch op {
			case core.OpAdd:
				r = a + b
			case core.OpSub:
				r = a - b
			case core.OpMul:
				r = a * b
			case core.OpMax:
				r = a
				if b > a {
					r = b
				}
			case core.OpMin:
				r = a
				if b < a {
					r = b
				}
			case core.OpQuot:
				if b != 0 {
					r = a / b
				}
			case core.OpRem:
				if b != 0 {
					r = a % b
				}
			}
			out.i[k] = r
		default:
			a, b := x.f[k], y.f[k]
			var r float64
			switch op {
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
				r = a
				if b > a {
					r = b
				}
			case core.OpMin:
				r = a
				if b < a {
					r = b
				}
			case core.OpAtan2:
				r = math.Atan2(a, b)
			}
			out.f[k] = r
		}
	}
	out.round()
	return out
}
