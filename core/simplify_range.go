package core

// IntRange bounds the values an i64 scalar term can take: on ok, lo ≤ t ≤ hi in every
// evaluation. vr gives bounds for free variables (nil, or ok = false, means unknown). The
// analysis is interval arithmetic over literals, variables, + - * neg abs max min, quot and
// rem by literals, cond, casts from bool, argmaxOuter (in [0, n-1]) and index into iota or
// an i64 literal; anything else is unknown. It inspects at most a few hundred nodes per call,
// so it is cheap on shared DAGs; bounds are kept within ±2^40 (beyond that: unknown), so no
// overflow can make them unsound.
//
// The BOT and the simplifier use it to decide whether a rewrite that drops a bounds check
// (e.g. index (replicate k t) (u :: ix) → index t ix) needs a guard.
func IntRange(t Term, vr func(name string) (lo, hi int64, ok bool)) (lo, hi int64, ok bool) {
	budget := 256
	return intRange(t, vr, &budget)
}

const rangeLimit = int64(1) << 40

func okRange(lo, hi int64) (int64, int64, bool) {
	if lo < -rangeLimit || hi > rangeLimit || lo > hi {
		return 0, 0, false
	}
	return lo, hi, true
}

func intRange(t Term, vr func(string) (int64, int64, bool), budget *int) (int64, int64, bool) {
	*budget--
	if *budget < 0 || t == nil || !t.Type().Equal(Scalar(Int64)) {
		return 0, 0, false
	}
	switch x := t.(type) {
	case *Lit:
		if len(x.I) == 1 {
			return okRange(x.I[0], x.I[0])
		}
	case *Var:
		if vr != nil {
			if lo, hi, ok := vr(x.Name); ok {
				return okRange(lo, hi)
			}
		}
	case *Cast:
		if x.X.Type().Dtype == Bool {
			return 0, 1, true
		}
		if x.X.Type().Dtype == Int64 {
			return intRange(x.X, vr, budget)
		}
	case *Let:
		blo, bhi, bok := intRange(x.Bound, vr, budget)
		inner := func(name string) (int64, int64, bool) {
			if name == x.Var.Name {
				return blo, bhi, bok
			}
			if vr == nil {
				return 0, 0, false
			}
			return vr(name)
		}
		return intRange(x.Body, inner, budget)
	case *Cond:
		alo, ahi, aok := intRange(x.Then, vr, budget)
		blo, bhi, bok := intRange(x.Else, vr, budget)
		if aok && bok {
			return okRange(min(alo, blo), max(ahi, bhi))
		}
	case *Unary:
		lo, hi, ok := intRange(x.X, vr, budget)
		if !ok {
			break
		}
		switch x.Op {
		case OpNeg:
			return okRange(-hi, -lo)
		case OpAbs:
			if lo >= 0 {
				return lo, hi, true
			}
			if hi <= 0 {
				return okRange(-hi, -lo)
			}
			return okRange(0, max(-lo, hi))
		case OpSign:
			return okRange(OpSign.IntFunc()(lo), OpSign.IntFunc()(hi))
		}
	case *ArgmaxOuter:
		n := int64(x.X.Type().Shape[0])
		if n == 0 {
			return 0, 0, true
		}
		return 0, n - 1, true
	case *Index:
		if len(x.Ix) == 1 {
			switch a := x.X.(type) {
			case *Iota:
				if a.N == 0 {
					return 0, 0, true
				}
				return 0, int64(a.N) - 1, true
			case *Lit:
				if len(a.I) > 0 && len(a.I) <= 1024 {
					lo, hi := int64(0), int64(0) // out of bounds reads 0
					for _, v := range a.I {
						lo, hi = min(lo, v), max(hi, v)
					}
					return okRange(lo, hi)
				}
			}
		}
	case *Binary:
		return binRange(x, vr, budget)
	}
	return 0, 0, false
}

func binRange(x *Binary, vr func(string) (int64, int64, bool), budget *int) (int64, int64, bool) {
	alo, ahi, aok := intRange(x.X, vr, budget)
	if x.Op == OpQuot || x.Op == OpRem {
		c, isLit := x.Y.(*Lit)
		if !isLit || len(c.I) != 1 {
			return 0, 0, false
		}
		d := c.I[0]
		if d == 0 {
			return 0, 0, true
		}
		if x.Op == OpRem {
			m := d
			if m < 0 {
				m = -m
			}
			switch {
			case aok && alo >= 0:
				return okRange(0, min(ahi, m-1))
			case aok && ahi <= 0:
				return okRange(max(alo, -(m-1)), 0)
			}
			return okRange(-(m - 1), m-1)
		}
		if !aok {
			return 0, 0, false
		}
		if d > 0 {
			return okRange(alo/d, ahi/d)
		}
		return okRange(-(ahi / -d), -(alo / -d))
	}
	blo, bhi, bok := intRange(x.Y, vr, budget)
	if !aok || !bok {
		return 0, 0, false
	}
	switch x.Op {
	case OpAdd:
		return okRange(alo+blo, ahi+bhi)
	case OpSub:
		return okRange(alo-bhi, ahi-blo)
	case OpMul:
		p := []int64{alo * blo, alo * bhi, ahi * blo, ahi * bhi}
		lo, hi := p[0], p[0]
		for _, v := range p[1:] {
			lo, hi = min(lo, v), max(hi, v)
		}
		return okRange(lo, hi)
	case OpMax:
		return okRange(max(alo, blo), max(ahi, bhi))
	case OpMin:
		return okRange(min(alo, blo), min(ahi, bhi))
	}
	return 0, 0, false
}
