package adapter

import (
	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/lower"
	"github.com/pkg/errors"
)

// gorgoniaClamped is Gorgonia v0.9.18's sigmoid or softplus, which a drop-in must reproduce
// (lower's are the mathematical functions): sigmoid is exactly 1 above 19 (float32: 15) and 0
// below -709 (-88); softplus is x above 16 (14) and 0 below -708 (-103). Between the bounds
// sigmoid is lower's and softplus Gorgonia's log1p(exp x).
func gorgoniaClamped(name string, x core.Term) (core.Term, error) {
	t := x.Type()
	if !t.Dtype.IsFloat() {
		return nil, errors.Errorf("%s of a %v operand, want f64 or f32", name, t.Dtype)
	}
	var b core.Builder
	lit := func(v float64) core.Term { return b.Full(t, v) }
	lo, hi := -709.0, 19.0
	if name == "softplus" {
		lo, hi = -708, 16
	}
	if t.Dtype == core.Float32 {
		lo, hi = -88, 15
		if name == "softplus" {
			lo, hi = -103, 14
		}
	}
	var f core.Term
	if name == "softplus" {
		// Gorgonia's formula, log1p(exp x); exp of min x hi cannot overflow.
		f = b.Unary(core.OpLog1p, b.Unary(core.OpExp, b.Binary(core.OpMin, x, lit(hi))))
	} else {
		var err error
		if f, err = lower.Unary(name, x); err != nil {
			return nil, err
		}
	}
	// above and inside are exact 0/1 factors: x > hi and x ≥ lo.
	above := b.Cast(t.Dtype, b.Binary(core.OpGt, x, lit(hi)))
	inside := b.Cast(t.Dtype, b.Binary(core.OpGe, x, lit(lo)))
	high := above // sigmoid: 1 above hi
	if name == "softplus" {
		high = b.Mul(above, x) // softplus: x above hi
	}
	r := b.Add(high, b.Mul(b.Mul(b.Sub(lit(1), above), inside), f))
	if b.Err() != nil {
		return nil, errors.Wrapf(b.Err(), "%s", name)
	}
	return r, nil
}
