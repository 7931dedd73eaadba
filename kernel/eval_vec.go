package kernel

import "github.com/bulkad/bulkad/core"

// Row-vectorised index functions. A non-affine index function (closures over integer
// registers) is also compiled into vector closures that compute its outputs for a chunk of
// consecutive values of the innermost index variable at once, with the outer variables fixed:
// the closure-call overhead is paid once per chunk instead of once per element. Subterms that
// do not depend on the innermost variable are computed once per chunk as scalars. Booleans
// are carried as 0/1.

const vecChunk = 256

// vfn fills out[k] with the value at innermost index t0+k (len(out) ≤ vecChunk).
type vfn func(r []int64, t0 int64, out []int64)

// vecFn compiles an i64 or bool scalar term that depends on the innermost variable inner.
func (ic *idxCompiler) vecFn(t core.Term, inner string) (vfn, bool, error) {
	if _, dep := ic.c.fv.Of(t)[inner]; !dep {
		// uniform along the row
		var s ifn
		var ok bool
		var err error
		if t.Type().Dtype == core.Bool {
			var b bfn
			b, ok, err = ic.boolFn(t)
			if ok {
				s = func(r []int64) int64 {
					if b(r) {
						return 1
					}
					return 0
				}
			}
		} else {
			s, ok, err = ic.intFn(t)
		}
		if !ok || err != nil {
			return nil, false, err
		}
		return func(r []int64, _ int64, out []int64) {
			v := s(r)
			for k := range out {
				out[k] = v
			}
		}, true, nil
	}
	switch t := t.(type) {
	case *core.Var:
		return func(_ []int64, t0 int64, out []int64) {
			for k := range out {
				out[k] = t0 + int64(k)
			}
		}, true, nil
	case *core.Share:
		return ic.vecFn(t.Body, inner)
	case *core.Unary:
		x, ok, err := ic.vecFn(t.X, inner)
		if !ok || err != nil {
			return nil, false, err
		}
		op := t.Op
		if op != core.OpNeg && op != core.OpAbs && op != core.OpSign && op != core.OpNot {
			return nil, false, nil
		}
		return func(r []int64, t0 int64, out []int64) {
			x(r, t0, out)
			switch op {
			case core.OpNot:
				for k, v := range out {
					out[k] = 1 - v
				}
			default:
				unaryInt(op, out, out)
			}
		}, true, nil
	case *core.Binary:
		if t.Op == core.OpAdd || t.Op == core.OpSub || t.Op == core.OpMul || t.Op == core.OpQuot || t.Op == core.OpRem ||
			t.Op == core.OpMax || t.Op == core.OpMin || t.Op.IsComparison() || t.Op == core.OpAnd || t.Op == core.OpOr {
			if t.Op.IsComparison() && t.X.Type().Dtype != core.Int64 && t.X.Type().Dtype != core.Bool {
				return nil, false, nil
			}
			x, ok, err := ic.vecFn(t.X, inner)
			if !ok || err != nil {
				return nil, false, err
			}
			if _, dep := ic.c.fv.Of(t.Y)[inner]; !dep && (t.Op == core.OpQuot || t.Op == core.OpRem) {
				// divisor uniform along the row: one division check per chunk, shifts for
				// powers of two
				d, ok, err := ic.intFn(t.Y)
				if !ok || err != nil {
					return nil, false, err
				}
				return quotRemVec(t.Op == core.OpQuot, x, d), true, nil
			}
			y, ok, err := ic.vecFn(t.Y, inner)
			if !ok || err != nil {
				return nil, false, err
			}
			tmp := make([]int64, vecChunk)
			op := t.Op
			return func(r []int64, t0 int64, out []int64) {
				x(r, t0, out)
				b := tmp[:len(out)]
				y(r, t0, b)
				vecBinary(op, out, b)
			}, true, nil
		}
	case *core.Cond:
		c, ok, err := ic.vecFn(t.C, inner)
		if !ok || err != nil {
			return nil, false, err
		}
		x, ok, err := ic.vecFn(t.Then, inner)
		if !ok || err != nil {
			return nil, false, err
		}
		y, ok, err := ic.vecFn(t.Else, inner)
		if !ok || err != nil {
			return nil, false, err
		}
		tc, ty := make([]int64, vecChunk), make([]int64, vecChunk)
		return func(r []int64, t0 int64, out []int64) {
			cc, yy := tc[:len(out)], ty[:len(out)]
			c(r, t0, cc)
			x(r, t0, out)
			y(r, t0, yy)
			for k, v := range cc {
				if v == 0 {
					out[k] = yy[k]
				}
			}
		}, true, nil
	case *core.Index:
		if ic.depends(t.X) || len(t.Ix) != len(t.X.Type().Shape) || t.Type().Dtype != core.Int64 {
			return nil, false, nil
		}
		arr, _, err := ic.c.compile(t.X)
		if err != nil {
			return nil, false, err
		}
		xs := t.X.Type().Shape
		str := xs.Strides()
		ks := make([]vfn, len(t.Ix))
		for k, e := range t.Ix {
			g, ok, err := ic.vecFn(e, inner)
			if !ok || err != nil {
				return nil, false, err
			}
			ks[k] = g
		}
		tmp := make([]int64, vecChunk)
		bad := int64(-1)
		return func(r []int64, t0 int64, out []int64) {
			clear(out) // offsets
			b := tmp[:len(out)]
			for k, g := range ks {
				g(r, t0, b)
				hi, st := int64(xs[k]), int64(str[k])
				for q, v := range b {
					if out[q] < 0 || v < 0 || v >= hi {
						out[q] = bad
					} else {
						out[q] += v * st
					}
				}
			}
			a := arr.i64
			for q, o := range out {
				if o >= 0 {
					out[q] = a[o]
				} else {
					out[q] = 0
				}
			}
		}, true, nil
	}
	return nil, false, nil
}

func b01(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// vecBinary computes out = out op b element-wise on i64 (bools as 0/1).
func vecBinary(op core.BinOp, out, b []int64) {
	b = b[:len(out)]
	switch op {
	case core.OpAdd:
		for k := range out {
			out[k] += b[k]
		}
	case core.OpSub:
		for k := range out {
			out[k] -= b[k]
		}
	case core.OpMul:
		for k := range out {
			out[k] *= b[k]
		}
	case core.OpQuot:
		for k := range out {
			out[k] = quotI(out[k], b[k])
		}
	case core.OpRem:
		for k := range out {
			out[k] = remI(out[k], b[k])
		}
	case core.OpMax:
		for k := range out {
			out[k] = max(out[k], b[k])
		}
	case core.OpMin:
		for k := range out {
			out[k] = min(out[k], b[k])
		}
	case core.OpLt:
		for k := range out {
			out[k] = b01(out[k] < b[k])
		}
	case core.OpLe:
		for k := range out {
			out[k] = b01(out[k] <= b[k])
		}
	case core.OpGt:
		for k := range out {
			out[k] = b01(out[k] > b[k])
		}
	case core.OpGe:
		for k := range out {
			out[k] = b01(out[k] >= b[k])
		}
	case core.OpEq:
		for k := range out {
			out[k] = b01(out[k] == b[k])
		}
	case core.OpNe:
		for k := range out {
			out[k] = b01(out[k] != b[k])
		}
	case core.OpAnd:
		for k := range out {
			out[k] &= b[k]
		}
	case core.OpOr:
		for k := range out {
			out[k] |= b[k]
		}
	}
}

// quotRemVec is quot (or rem) of a vector by a divisor that is constant along the row.
func quotRemVec(quot bool, x vfn, d ifn) vfn {
	return func(r []int64, t0 int64, out []int64) {
		x(r, t0, out)
		dv := d(r)
		switch {
		case dv > 0 && dv&(dv-1) == 0:
			sh := uint(0)
			for int64(1)<<sh != dv {
				sh++
			}
			mask := dv - 1
			if quot {
				for k, v := range out {
					// truncation toward zero: bias negative dividends by dv-1
					out[k] = (v + (v>>63)&mask) >> sh
				}
			} else {
				for k, v := range out {
					out[k] = v - ((v+(v>>63)&mask)>>sh)<<sh
				}
			}
		case quot:
			for k, v := range out {
				out[k] = quotI(v, dv)
			}
		default:
			for k, v := range out {
				out[k] = remI(v, dv)
			}
		}
	}
}
