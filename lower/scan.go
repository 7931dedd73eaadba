package lower

import (
	"math"

	"github.com/bulkad/bulkad/core"
	"github.com/pkg/errors"
)

// Reductions and scans over monoids: see the package documentation for the design.

// Monoid is an associative operation with an identity, for Reduce and Scan.
type Monoid struct {
	// Name appears in errors.
	Name string
	// Combine returns a ⊕ b element-wise; a and b have one shape and float type, and the
	// result must have it too. It must be associative (Reduce and Scan group the operands as
	// a balanced tree), with Identity as its identity.
	Combine func(a, b core.Term) (core.Term, error)
	// Identity is the identity element (0 for +, 1 for ×, −Inf for max and logsumexp, +Inf
	// for min).
	Identity float64
}

func binMonoid(name string, op core.BinOp, id float64) Monoid {
	return Monoid{Name: name, Identity: id, Combine: func(a, b core.Term) (core.Term, error) { return Binary(op, a, b, false) }}
}

// The built-in monoids.
var (
	SumMonoid  = binMonoid("sum", core.OpAdd, 0)
	ProdMonoid = binMonoid("product", core.OpMul, 1)
	MaxMonoid  = binMonoid("max", core.OpMax, math.Inf(-1))
	MinMonoid  = binMonoid("min", core.OpMin, math.Inf(1))
	// LogSumExpMonoid is a ⊕ b = log(e^a + e^b), for finite and −Inf operands (−Inf ⊕ −Inf =
	// −Inf, with a finite derivative).
	LogSumExpMonoid = Monoid{Name: "logsumexp", Identity: math.Inf(-1), Combine: logAddExp}
)

// logAddExp is m + log(e^(a'−m') + e^(b'−m')) with m = max(a, b), a' and b' the operands
// raised to −big (half the dtype's largest finite value) and m' = max(a', b'): exact for
// finite operands above −big, −Inf for two −Inf operands, and free of NaN in value and
// derivative (no ∞ − ∞). At a tie the derivative is 1/2 to each side, as the smooth function's;
// for two −Inf operands it goes to the first.
func logAddExp(a, b core.Term) (core.Term, error) {
	t := a.Type()
	big := math.MaxFloat64 / 2
	if t.Dtype == core.Float32 {
		big = math.MaxFloat32 / 2
	}
	lo, err := FullLike(t, -big)
	if err != nil {
		return nil, err
	}
	var bd core.Builder
	m := bd.Binary(core.OpMax, a, b)
	a1 := bd.Binary(core.OpMax, a, lo)
	b1 := bd.Binary(core.OpMax, b, lo)
	m1 := bd.Binary(core.OpMax, a1, b1)
	s := bd.Add(bd.Unary(core.OpExp, bd.Sub(a1, m1)), bd.Unary(core.OpExp, bd.Sub(b1, m1)))
	return result("logsumexp monoid", &bd, bd.Add(m, bd.Unary(core.OpLog, s)))
}

// ScanOptions select the kind of scan.
type ScanOptions struct {
	// Exclusive: position i combines the elements before i (position 0 is the identity).
	Exclusive bool
	// Reverse: scan from the end (position i combines i and the elements after it).
	Reverse bool
}

// Reduce combines the elements of x along axis with the monoid m; the axis disappears.
func Reduce(x core.Term, axis int, m Monoid) (core.Term, error) {
	op := "reduce " + m.Name
	x0, _, err := toFront(op, x, axis, m) // the other axes keep their order
	if err != nil {
		return nil, err
	}
	levels, err := upSweep(op, x0, m)
	if err != nil {
		return nil, err
	}
	// The root [1, rest…] is summed over its unit axis rather than indexed: an index at the
	// top would be pushed by the simplifier through the whole tree down to single elements of
	// x, whose derivatives are one scatter of n elements each (O(n²) work).
	r, err := Sum(levels[len(levels)-1], 0)
	if err != nil {
		return nil, errors.Wrapf(err, "lower: %s", op)
	}
	return r, nil
}

// Scan is the inclusive (or exclusive, or reverse) scan of x along axis with the monoid m:
// same shape as x, position i holding x_0 ⊕ … ⊕ x_i.
func Scan(x core.Term, axis int, m Monoid, o ScanOptions) (core.Term, error) {
	op := "scan " + m.Name
	x0, back, err := toFront(op, x, axis, m)
	if err != nil {
		return nil, err
	}
	n := x0.Type().Shape[0]
	if o.Reverse {
		if x0, err = flip(x0); err != nil {
			return nil, err
		}
	}
	levels, err := upSweep(op, x0, m)
	if err != nil {
		return nil, err
	}
	excl, err := downSweep(op, levels, m)
	if err != nil {
		return nil, err
	}
	// excl : [N, rest]; keep the first n rows
	if excl, err = Slice(excl, 0, 0, 1, n, true); err != nil {
		return nil, err
	}
	out := excl
	if !o.Exclusive {
		// position 0 is x_0 itself (not identity ⊕ x_0, which would send a tie of the max
		// with an identity-valued x_0 to the identity)
		first, err := Slice(x0, 0, 0, 1, 1, true)
		if err != nil {
			return nil, err
		}
		out = first
		if n > 1 {
			e, err := Slice(excl, 0, 1, 1, n-1, true)
			if err != nil {
				return nil, err
			}
			xs, err := Slice(x0, 0, 1, 1, n-1, true)
			if err != nil {
				return nil, err
			}
			rest, err := combine(op, m, e, xs)
			if err != nil {
				return nil, err
			}
			if out, err = Concat(0, first, rest); err != nil {
				return nil, err
			}
		}
	}
	if o.Reverse {
		if out, err = flip(out); err != nil {
			return nil, err
		}
	}
	return back(out)
}

// toFront checks the operands and moves axis to the front; back moves it into place again.
func toFront(op string, x core.Term, axis int, m Monoid) (core.Term, func(core.Term) (core.Term, error), error) {
	if err := checkAxis(op, x, axis); err != nil {
		return nil, nil, err
	}
	if m.Combine == nil {
		return nil, nil, errors.Errorf("lower: %s: the monoid has no Combine", op)
	}
	r := x.Type().Shape.Rank()
	if axis == 0 {
		return x, func(t core.Term) (core.Term, error) { return t, nil }, nil
	}
	perm := make([]int, r)
	inv := make([]int, r)
	perm[0] = axis
	k := 1
	for i := 0; i < r; i++ {
		if i != axis {
			perm[k] = i
			k++
		}
	}
	for i, p := range perm {
		inv[p] = i
	}
	t, err := Transpose(x, perm)
	if err != nil {
		return nil, nil, err
	}
	return t, func(t core.Term) (core.Term, error) { return Transpose(t, inv) }, nil
}

// combine applies the monoid and checks that the result keeps the operands' type.
func combine(op string, m Monoid, a, b core.Term) (core.Term, error) {
	r, err := m.Combine(a, b)
	if err != nil {
		return nil, errors.Wrapf(err, "lower: %s: combine", op)
	}
	if r == nil || !r.Type().Equal(a.Type()) {
		got := "nothing"
		if r != nil {
			got = r.Type().String()
		}
		return nil, errors.Errorf("lower: %s: combine of %v operands gave %s; a monoid maps two arrays to one of the same type", op, a.Type(), got)
	}
	return r, nil
}

// upSweep pads x : [n, rest] to a power of two with the identity and returns the levels
// L_0 (the padded x), L_1, …, L_K : [1, rest], L_{k+1}[i] = L_k[2i] ⊕ L_k[2i+1].
func upSweep(op string, x core.Term, m Monoid) ([]core.Term, error) {
	sh := x.Type().Shape
	n := sh[0]
	if n == 0 {
		return nil, errors.Errorf("lower: %s: empty axis", op)
	}
	size := 1
	for size < n {
		size *= 2
	}
	if size > n {
		ps := append(core.Shape{size - n}, sh[1:]...)
		pad, err := FullLike(core.Type{Shape: ps, Dtype: x.Type().Dtype}, m.Identity)
		if err != nil {
			return nil, err
		}
		if x, err = Concat(0, x, pad); err != nil {
			return nil, err
		}
	}
	levels := []core.Term{x}
	for cur := x; size > 1; size /= 2 {
		even, err := Slice(cur, 0, 0, 2, size/2, true)
		if err != nil {
			return nil, err
		}
		odd, err := Slice(cur, 0, 1, 2, size/2, true)
		if err != nil {
			return nil, err
		}
		if cur, err = combine(op, m, even, odd); err != nil {
			return nil, err
		}
		levels = append(levels, cur)
	}
	return levels, nil
}

// downSweep returns the exclusive prefixes of L_0 from the levels: E_K = identity,
// E_k[2i] = E_{k+1}[i], E_k[2i+1] = E_{k+1}[i] ⊕ L_k[2i].
func downSweep(op string, levels []core.Term, m Monoid) (core.Term, error) {
	top := levels[len(levels)-1]
	e, err := FullLike(top.Type(), m.Identity)
	if err != nil {
		return nil, err
	}
	for k := len(levels) - 2; k >= 0; k-- {
		lk := levels[k]
		half := lk.Type().Shape[0] / 2
		left, err := Slice(lk, 0, 0, 2, half, true)
		if err != nil {
			return nil, err
		}
		right, err := combine(op, m, e, left)
		if err != nil {
			return nil, err
		}
		if e, err = interleave(e, right); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// interleave returns rows a_0, b_0, a_1, b_1, … of a, b : [h, rest].
func interleave(a, b core.Term) (core.Term, error) {
	sh := a.Type().Shape
	one := append(core.Shape{sh[0], 1}, sh[1:]...)
	a1, err := Reshape(a, one)
	if err != nil {
		return nil, err
	}
	b1, err := Reshape(b, one)
	if err != nil {
		return nil, err
	}
	ab, err := Concat(1, a1, b1)
	if err != nil {
		return nil, err
	}
	return Reshape(ab, append(core.Shape{2 * sh[0]}, sh[1:]...))
}

// flip reverses x : [n, …] along axis 0.
func flip(x core.Term) (core.Term, error) { return Reverse(x, 0) }

// Reverse reverses the order of x's positions along axis (one gather).
func Reverse(x core.Term, axis int) (core.Term, error) {
	if err := checkTerm("reverse", x); err != nil {
		return nil, err
	}
	sh := x.Type().Shape
	if axis < 0 || axis >= sh.Rank() {
		return nil, errors.Errorf("lower: reverse: axis %d out of range for shape %v", axis, sh)
	}
	var b core.Builder
	vs, ix := indexVars(&b, len(sh))
	out := append([]core.Term(nil), ix...)
	out[axis] = b.Sub(core.ScalarI(int64(sh[axis]-1)), ix[axis])
	return result("reverse", &b, b.Gather(sh, x, b.IndexFn(vs, out...)))
}
