package conformance

import (
	"math"

	"github.com/bulkad/bulkad/core"
)

// Two-operation chains, which kernel.Compile fuses into one loop for floats (a unary
// operation under or over another, a binary one followed by + or preceded by a sum, which
// the fused interpreter runs as superinstructions, a comparison cast to a float), and the
// operand subsets of -short.

// chain is a program applying o and one more operation; z (a third operand, -0 of o's
// dtype everywhere) leaves the value unchanged where the chain adds it.
type chain struct {
	name string
	z    bool // takes the extra operand z after o's operands
	body func(o operation, b *core.Builder, xs []core.Term, z core.Term) core.Term
}

// chains lists the chains that apply to o.
func chains(o operation) []chain {
	neg := func(b *core.Builder, t core.Term) core.Term { return b.Unary(core.OpNeg, t) }
	not := func(b *core.Builder, t core.Term) core.Term { return b.Unary(core.OpNot, t) }
	numeric := func(d core.Dtype) bool { return d.IsNumeric() }
	var cs []chain
	switch {
	case o.cast:
		if numeric(o.to) {
			cs = append(cs, chain{name: "neg (cast x)", body: func(o operation, b *core.Builder, xs []core.Term, _ core.Term) core.Term {
				return neg(b, o.apply(b, xs...))
			}})
		} else {
			cs = append(cs, chain{name: "not (cast x)", body: func(o operation, b *core.Builder, xs []core.Term, _ core.Term) core.Term {
				return not(b, o.apply(b, xs...))
			}})
		}
		pre := neg
		if !numeric(o.in) {
			pre = not
		}
		cs = append(cs, chain{name: "cast (pre x)", body: func(o operation, b *core.Builder, xs []core.Term, _ core.Term) core.Term {
			return o.apply(b, pre(b, xs[0]))
		}})
	case o.un != 0:
		pre := neg
		if o.in == core.Bool {
			pre = not
		}
		cs = append(cs,
			chain{name: "pre (op x)", body: func(o operation, b *core.Builder, xs []core.Term, _ core.Term) core.Term {
				return pre(b, o.apply(b, xs...))
			}},
			chain{name: "op (pre x)", body: func(o operation, b *core.Builder, xs []core.Term, _ core.Term) core.Term {
				return o.apply(b, pre(b, xs[0]))
			}})
		if o.in.IsFloat() {
			cs = append(cs, chain{name: "op x + z", z: true, body: func(o operation, b *core.Builder, xs []core.Term, z core.Term) core.Term {
				return b.Add(o.apply(b, xs...), z)
			}})
		}
	case o.bin.IsComparison():
		cs = append(cs, chain{name: "not (x op y)", body: func(o operation, b *core.Builder, xs []core.Term, _ core.Term) core.Term {
			return not(b, o.apply(b, xs...))
		}})
		if o.in.IsFloat() {
			cs = append(cs, chain{name: "cast (x op y)", body: func(o operation, b *core.Builder, xs []core.Term, _ core.Term) core.Term {
				return b.Cast(o.in, o.apply(b, xs...))
			}})
		}
	case o.in == core.Bool:
		cs = append(cs, chain{name: "not (x op y)", body: func(o operation, b *core.Builder, xs []core.Term, _ core.Term) core.Term {
			return not(b, o.apply(b, xs...))
		}})
	default:
		cs = append(cs, chain{name: "neg (x op y)", body: func(o operation, b *core.Builder, xs []core.Term, _ core.Term) core.Term {
			return neg(b, o.apply(b, xs...))
		}})
		if o.in.IsFloat() {
			cs = append(cs,
				chain{name: "(x op y) + z", z: true, body: func(o operation, b *core.Builder, xs []core.Term, z core.Term) core.Term {
					return b.Add(o.apply(b, xs...), z)
				}},
				chain{name: "z - (x op y)", z: true, body: func(o operation, b *core.Builder, xs []core.Term, z core.Term) core.Term {
					return b.Sub(z, o.apply(b, xs...))
				}},
				chain{name: "op (neg x) y", body: func(o operation, b *core.Builder, xs []core.Term, _ core.Term) core.Term {
					return o.apply(b, neg(b, xs[0]), xs[1])
				}})
		}
	}
	return cs
}

// runChains runs every chain of o with kernel.Compile and core.Eval.
func runChains(o operation, ins []any) ([]result, error) {
	n := colLen(ins[0])
	var rs []result
	for _, c := range chains(o) {
		chainIns := ins
		nParams := o.arity()
		if c.z {
			chainIns = append(append([]any{}, ins...), negZeros(o.in, n))
			nParams++
		}
		p, err := program(o, core.Shape{n}, nParams, func(b *core.Builder, ps []core.Term) core.Term {
			var z core.Term
			if c.z {
				z = ps[nParams-1]
			}
			return c.body(o, b, ps[:o.arity()], z)
		})
		if err != nil {
			return nil, err
		}
		g, w, err := compiled(p, chainIns)
		if err != nil {
			return nil, err
		}
		rs = append(rs, result{label: " " + c.name, got: g, want: w})
	}
	return rs, nil
}

// negZeros is a column of n negative zeros of the float dtype d.
func negZeros(d core.Dtype, n int) any {
	if d == core.Float32 {
		f := make([]float32, n)
		for i := range f {
			f[i] = float32(negZero())
		}
		return f
	}
	f := make([]float64, n)
	for i := range f {
		f[i] = negZero()
	}
	return f
}

// trimmed keeps, for a binary operation, the pairs of a subset of the special values (±0,
// the smallest subnormal, -1, 25, ±Inf, NaN): the operands of -short for the executors that
// build one node per element.
func trimmed(o operation, ins []any) []any {
	if o.arity() == 1 {
		return ins
	}
	keep := func(v any) bool {
		var f float64
		switch v := v.(type) {
		case float64:
			f = v
		case float32:
			f = float64(v)
		case int64:
			return v == 0 || v == -1 || v == 7 || v == math.MinInt64
		default:
			return true
		}
		return f == 0 || f == -1 || f == 25 || math.IsInf(f, 0) || (math.IsNaN(f) && !math.Signbit(f)) ||
			f == math.SmallestNonzeroFloat64 || f == math.SmallestNonzeroFloat32
	}
	var idx []int
	for i := range colLen(ins[0]) {
		if keep(elem(ins[0], i)) && keep(elem(ins[1], i)) {
			idx = append(idx, i)
		}
	}
	return []any{pick(ins[0], idx), pick(ins[1], idx)}
}
