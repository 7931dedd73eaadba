package kernel

import "github.com/bulkad/bulkad/core"

// Row-vectorised index functions. A non-affine index function (closures over an ixEnv) is
// also compiled into vector closures that compute its outputs for a chunk of consecutive
// values of the innermost index variable at once, with the outer variables fixed: the
// closure-call overhead is paid once per chunk instead of once per element. Subterms that do
// not depend on the innermost variable are computed once per chunk as scalars. Booleans are
// carried as 0/1.

// vecs compiles each term with vec; nil when one of them is not covered.
func (c *ixCompiler) vecs(ts ...core.Term) ([]vexpr, error) {
	vs := make([]vexpr, len(ts))
	for i, t := range ts {
		v, err := c.vec(t)
		if v == nil || err != nil {
			return nil, err
		}
		vs[i] = v
	}
	return vs, nil
}

// vec compiles an i64 or bool scalar output into a vector closure along c.inner, or returns
// nil when the vector closures do not cover it.
func (c *ixCompiler) vec(t core.Term) (vexpr, error) {
	if _, dep := c.fv.Of(t)[c.inner]; !dep {
		// uniform along the row
		s, err := c.ints(t)
		if err != nil {
			return nil, err
		}
		return func(e *ixEnv, _ int64, out []int64) {
			v := s(e)
			for k := range out {
				out[k] = v
			}
		}, nil
	}
	switch t := t.(type) {
	case *core.Var:
		return func(_ *ixEnv, t0 int64, out []int64) {
			for k := range out {
				out[k] = t0 + int64(k)
			}
		}, nil
	case *core.Share:
		return c.vec(t.Body)
	case *core.Unary:
		f := intUnary(t.Op)
		if f == nil {
			return nil, nil
		}
		x, err := c.vec(t.X)
		if x == nil || err != nil {
			return nil, err
		}
		if t.Op == core.OpNot {
			return func(e *ixEnv, t0 int64, out []int64) {
				x(e, t0, out)
				for k, v := range out {
					out[k] = 1 - v
				}
			}, nil
		}
		op := t.Op
		return func(e *ixEnv, t0 int64, out []int64) {
			x(e, t0, out)
			unaryInt(op, out, out)
		}, nil
	case *core.Binary:
		if intBinFunc(t.Op) == nil || t.X.Type().Dtype.IsFloat() {
			return nil, nil
		}
		x, err := c.vec(t.X)
		if x == nil || err != nil {
			return nil, err
		}
		if _, dep := c.fv.Of(t.Y)[c.inner]; !dep && (t.Op == core.OpQuot || t.Op == core.OpRem) {
			// divisor uniform along the row: one division check per chunk, shifts for
			// powers of two
			d, err := c.ints(t.Y)
			if err != nil {
				return nil, err
			}
			return quotRemVec(t.Op == core.OpQuot, x, d), nil
		}
		y, err := c.vec(t.Y)
		if y == nil || err != nil {
			return nil, err
		}
		tmp := make([]int64, vecChunk)
		op := t.Op
		return func(e *ixEnv, t0 int64, out []int64) {
			x(e, t0, out)
			b := tmp[:len(out)]
			y(e, t0, b)
			vecBinary(op, out, b)
		}, nil
	case *core.Cond:
		vs, err := c.vecs(t.C, t.Then, t.Else)
		if vs == nil || err != nil {
			return nil, err
		}
		cv, x, y := vs[0], vs[1], vs[2]
		tc, ty := make([]int64, vecChunk), make([]int64, vecChunk)
		return func(e *ixEnv, t0 int64, out []int64) {
			cc, yy := tc[:len(out)], ty[:len(out)]
			cv(e, t0, cc)
			x(e, t0, out)
			y(e, t0, yy)
			for k, v := range cc {
				if v == 0 {
					out[k] = yy[k]
				}
			}
		}, nil
	case *core.Index:
		xs := t.X.Type().Shape
		if c.depends(t.X) || len(t.Ix) != len(xs) || t.Type().Dtype != core.Int64 {
			return nil, nil
		}
		k, err := c.array(t.X)
		if err != nil {
			return nil, err
		}
		str := xs.Strides()
		ks, err := c.vecs(t.Ix...)
		if ks == nil || err != nil {
			return nil, err
		}
		tmp := make([]int64, vecChunk)
		return func(e *ixEnv, t0 int64, out []int64) {
			clear(out) // offsets
			b := tmp[:len(out)]
			for i, g := range ks {
				g(e, t0, b)
				hi, st := int64(xs[i]), int64(str[i])
				for q, v := range b {
					if out[q] < 0 || v < 0 || v >= hi {
						out[q] = -1
					} else {
						out[q] += v * st
					}
				}
			}
			a := e.arrs[k].i64
			for q, o := range out {
				if o >= 0 {
					out[q] = a[o]
				} else {
					out[q] = 0
				}
			}
		}, nil
	}
	return nil, nil
}

// vecBinary computes out = out op b element-wise on i64 (bools as 0/1): the arithmetic
// with the evaluator's integer loops, comparisons and logic through intBinFunc.
func vecBinary(op core.BinOp, out, b []int64) {
	switch op {
	case core.OpAdd, core.OpSub, core.OpMul, core.OpQuot, core.OpRem, core.OpMax, core.OpMin:
		binaryInt(op, out, out, b)
		return
	}
	f := intBinFunc(op)
	b = b[:len(out)]
	for k := range out {
		out[k] = f(out[k], b[k])
	}
}

// quotRemVec is quot (or rem) of a vector by a divisor that is constant along the row.
func quotRemVec(quot bool, x vexpr, d iexpr) vexpr {
	return func(e *ixEnv, t0 int64, out []int64) {
		x(e, t0, out)
		dv := d(e)
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
