package kernel

import (
	"slices"

	"github.com/bulkad/bulkad/core"
	"github.com/pkg/errors"
)

// Sums of products over windows, without the windows. A depthwise convolution in the core
// language is
//
//	sumOuter (reshape [K, …] (gather sh x fX * gather sh f fF))
//
// and its gradient scatters products of the broadcast cotangent with the gathered filter
// (into x) and with the gathered windows (into f). Planned one operation at a time, each
// materialises arrays of K times the activation's size (K the window's size) and passes
// over them several times. All three are one loop: for every point p of the product's
// domain, in row-major order,
//
//	out[o(p)] += A[a(p)] · B[b(p)]        (out cleared first)
//
// with o, a and b affine functions of p (a sumOuter's o drops the summed dimensions; a
// scatter's o is its index function). A read out of bounds gives zero (a padded window), a
// write out of bounds is dropped. WindowDot runs that loop with every access clipped to its
// bounds as whole intervals of the loop variables, as the clipped gathers do (clip.go), and
// strided rows innermost: no window array, one pass.
//
// Order of summation. The reference (core.Eval) adds every product into its destination
// in the domain's row-major order, starting from zero. WindowDot may run the loops in
// another order, but keeps the relative order of the variables whose distinct values can
// write the same destination; the others (the "disjoint" variables) go anywhere, since a
// destination sees one value of each: for each destination the products arrive in the
// reference's order, so the results are equal bit for bit. Every product is rounded to the
// element type before it is added (no fused multiply-add). The products it skips because A
// or B is out of bounds are ±0 in the reference, which leave a sum started at +0 unchanged,
// unless the other factor is an infinity or a NaN (0·∞ = NaN): when an operand that can be
// read out of bounds meets another holding such a value, the kernel runs the reference's
// loop element by element instead.

// WinAccess is an array accessed at an affine function of the points of a domain: at point
// p, the element with index (C0[k] + Σ_j Coef[k][j]·p_j)_k of an array of shape Shape
// (row-major); out of bounds when some index leaves [0, Shape[k]). Coef has one row per
// dimension of Shape, each with one coefficient per domain variable.
type WinAccess struct {
	Shape []int
	Coef  [][]int64
	C0    []int64
}

// clone is a deep copy of w.
func (w WinAccess) clone() WinAccess {
	c := WinAccess{Shape: append([]int(nil), w.Shape...), C0: append([]int64(nil), w.C0...)}
	for _, row := range w.Coef {
		c.Coef = append(c.Coef, append([]int64(nil), row...))
	}
	return c
}

// AffineForm returns the coefficients and constants of p when it is affine with static
// constants: output k is c0[k] + Σ_j coef[k][j]·i_j over the index variables i_j.
func (p *IndexProgram) AffineForm() (coef [][]int64, c0 []int64, ok bool) {
	if !p.static() {
		return nil, nil, false
	}
	for _, a := range p.aff {
		if len(a.c) != p.nvars {
			return nil, nil, false
		}
		coef = append(coef, append([]int64(nil), a.c...))
		c0 = append(c0, a.c0)
	}
	return coef, c0, true
}

// winMax bounds the constants and spans of every index of an access (|C0| ≤ winMax and
// Σ_j |Coef_j|·dom_j ≤ winMax) and its element offsets anywhere in the domain, so that
// nothing the loops compute overflows.
const winMax = 1 << 60

// winLanes is the number of destinations a reduction row sums at once (independent chains
// of additions, each in the reference's order).
const winLanes = 4

// WindowDot is the kernel of the sum of products above over a domain (see NewWindowDot):
// Run(out, [A, B]). It is not changed by its runs and may be used concurrently.
type WindowDot struct {
	dom  []int        // the domain (row-major order of the reference)
	spec [3]WinAccess // out, A, B, as given (the element-by-element path)
	bst  [3][]int     // their row-major strides
	size [3]int       // their element counts
	// The loop nest: level L runs domain variable order[L] over ldom[L] values; st[a][L]
	// is access a's element stride along it, base[a] its offset at the origin.
	order []int
	ldom  []int
	st    [3][]int
	base  [3]int
	// The bounds checks that interval arithmetic does not prove: chk[L] are those whose
	// last variable (in loop order) is level L's, clipped there; upd[L] those that depend on
	// level L's variable and a later one; fixed those that depend on no variable.
	cons  []winCon
	chk   [][]int
	upd   [][]int
	fixed []int
	// clipped[a]: access a may be out of bounds somewhere.
	clipped [3]bool
	// outer is the number of leading levels whose variables are disjoint (any order, safe
	// to split across goroutines); unroll is the level whose variable a reduction row sums
	// winLanes destinations of at once (−1: none).
	outer, unroll int
	reduce        bool // the innermost level writes one destination (a dot product)
	rowFree       bool // no check of the innermost level involves the one around it
	points        int
	// plane: a depthwise loop of stride 1 run plane by plane (window_planes.go), nil
	// otherwise; scratch keeps its planes between runs
	plane   *planePlan
	scratch Scratch
}

// winCon is a bounds check 0 ≤ c0 + Σ_L c[L]·t_L < lim of access a.
type winCon struct {
	a       int
	c       []int64 // per loop level
	c0, lim int64
}

// NewWindowDot plans out[o(p)] += A[a(p)] · B[b(p)] over the points p of dom (see the
// comment above); out, a and b describe the three accesses. It returns an error when the
// sizes do not fit together or a value could overflow.
func NewWindowDot(dom []int, out, a, b WinAccess) (*WindowDot, error) {
	return newWindowDot(dom, out, a, b, winAuto)
}

// newWindowDot is NewWindowDot with the loop order's mode (winAuto, winRows, winChannels).
func newWindowDot(dom []int, out, a, b WinAccess, mode int) (*WindowDot, error) {
	n := len(dom)
	k := &WindowDot{dom: append([]int(nil), dom...), spec: [3]WinAccess{out.clone(), a.clone(), b.clone()}, unroll: -1, points: 1}
	for _, d := range dom {
		if d < 0 {
			return nil, errors.Errorf("kernel: windowDot: domain %v", dom)
		}
		if d > 0 && k.points > winMax/d {
			return nil, errors.Errorf("kernel: windowDot: domain %v too large", dom)
		}
		k.points *= d
	}
	for i, acc := range k.spec {
		if len(acc.Coef) != len(acc.Shape) || len(acc.C0) != len(acc.Shape) {
			return nil, errors.Errorf("kernel: windowDot: access %d: shape %v with %d coefficient rows and %d constants", i, acc.Shape, len(acc.Coef), len(acc.C0))
		}
		sz := 1
		for d, s := range acc.Shape {
			if s < 0 || len(acc.Coef[d]) != n {
				return nil, errors.Errorf("kernel: windowDot: access %d: shape %v, coefficients %v over domain %v", i, acc.Shape, acc.Coef[d], dom)
			}
			if s > 0 && sz > winMax/s {
				return nil, errors.Errorf("kernel: windowDot: access %d: shape %v too large", i, acc.Shape)
			}
			sz *= s
		}
		k.size[i] = sz
		k.bst[i] = core.Shape(acc.Shape).Strides()
	}
	lm := mode
	if mode == winPlanes { // its fallback is ordered as winAuto's
		lm = winAuto
	}
	k.order = k.loopOrder(lm)
	k.ldom = make([]int, n)
	for l, v := range k.order {
		k.ldom[l] = dom[v]
	}
	k.chk, k.upd = make([][]int, n), make([][]int, n)
	for i, acc := range k.spec {
		k.st[i] = make([]int, n)
		offs := int64(0) // a bound of |element offset| over the domain
		for d, row := range acc.Coef {
			lo, hi, ok := k.span(row, acc.C0[d])
			mag, bst := max(absW(lo), absW(hi)), int64(k.bst[i][d])
			if ok && bst > 0 {
				ok = mag <= winMax/bst
				offs += mag * bst
			}
			if !ok || offs > winMax {
				return nil, errors.Errorf("kernel: windowDot: access %d: index %d (%v + %d) could overflow over domain %v", i, d, row, acc.C0[d], dom)
			}
			for l, v := range k.order {
				k.st[i][l] += int(row[v]) * k.bst[i][d]
			}
			k.base[i] += int(acc.C0[d]) * k.bst[i][d]
			if k.points == 0 || lo >= 0 && hi < int64(acc.Shape[d]) {
				continue // in bounds everywhere
			}
			k.clipped[i] = true
			c := winCon{a: i, c: make([]int64, n), c0: acc.C0[d], lim: int64(acc.Shape[d])}
			last := -1
			for l, v := range k.order {
				if c.c[l] = row[v]; row[v] != 0 {
					last = l
				}
			}
			ci := len(k.cons)
			k.cons = append(k.cons, c)
			if last < 0 {
				k.fixed = append(k.fixed, ci)
				continue
			}
			k.chk[last] = append(k.chk[last], ci)
			for l := 0; l < last; l++ {
				if c.c[l] != 0 {
					k.upd[l] = append(k.upd[l], ci)
				}
			}
		}
	}
	k.mergeInner()
	n = len(k.ldom)
	if n > 0 {
		k.reduce = k.st[0][n-1] == 0
	}
	if n > 1 {
		k.rowFree = true
		for _, ci := range k.chk[n-1] {
			if k.cons[ci].c[n-2] != 0 {
				k.rowFree = false
			}
		}
	}
	if k.reduce && k.outer > 0 {
		if l := k.outer - 1; k.ldom[l] > 1 && len(k.upd[l]) == 0 && len(k.chk[l]) == 0 {
			k.unroll = l
		}
	}
	if (mode == winAuto || mode == winPlanes) && k.points > 0 {
		k.plane = k.planes()
	}
	return k, nil
}

// span is the range [lo, hi] of c0 + Σ_j row_j·p_j over the domain, and false when it or
// the spans of its terms exceed winMax.
func (k *WindowDot) span(row []int64, c0 int64) (lo, hi int64, ok bool) {
	if c0 > winMax || c0 < -winMax {
		return 0, 0, false
	}
	lo, hi = c0, c0
	tot := int64(0)
	for j, c := range row {
		if c == 0 || k.dom[j] == 0 {
			continue
		}
		ac := c
		if ac < 0 {
			ac = -ac
		}
		m := int64(k.dom[j])
		if ac > winMax/m {
			return 0, 0, false
		}
		if tot += ac * m; tot > winMax {
			return 0, 0, false
		}
		if c > 0 {
			hi += c * (m - 1)
		} else {
			lo += c * (m - 1)
		}
	}
	return lo, hi, true
}

// disjoint reports whether distinct values of domain variable j always write distinct
// destinations (a variable of one value counts as disjoint): some index of out, c·t + v
// with v the other variables' part, changes with j by more than v can change (|c| exceeds
// v's span), or by less than any nonzero change of v (|c|·(dom_j − 1) is below the greatest
// common divisor of v's coefficients: the digits of a mixed-radix index).
func (k *WindowDot) disjoint(j int) bool {
	if k.dom[j] <= 1 {
		return true
	}
	for _, row := range k.spec[0].Coef {
		c := absW(row[j])
		if c == 0 {
			continue
		}
		other, g := int64(0), int64(0)
		for i, ci := range row {
			if i == j || k.dom[i] <= 1 || ci == 0 {
				continue
			}
			other += absW(ci) * int64(k.dom[i]-1) // below winMax (loopOrder asks only when span fits)
			g = gcdW(g, absW(ci))
		}
		if c > other || g == 0 || c*int64(k.dom[j]-1) < g {
			return true
		}
	}
	return false
}

func absW(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

func gcdW(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// Loop orders (newWindowDot's mode): rows of the domain's last variable innermost, or a
// variable of many values innermost (the channels of a depthwise convolution: the rows of a
// small feature map are too short to pay for the loops around them).
const (
	winAuto = iota
	winRows
	winChannels
	winPlanes // the plane plan where it applies, else as winAuto
)

// winRowMin and winDotRowMin are the row lengths from which rows of the last variable are
// innermost in auto mode, for rows that write a destination per point and for reduction
// rows (which sum winLanes destinations at once): below them the channels run innermost.
// Measured with BenchmarkWindowDot (MobileNetV2's depthwise layers, float32, 2-core
// development machine): at 8×8 maps the channels innermost take 0.26 ms against 0.50 for
// the forward pass and ∂x, the rows 0.21 against 0.28 for ∂f; at 16×16 and more the rows
// are faster for all three (at 32×32 four times).
const (
	winRowMin    = 16
	winDotRowMin = 8
)

// loopOrder is the order of the loop nest: the disjoint variables first (their order does
// not matter: a destination sees one value of each), then the others in the reference's
// order, and innermost the last two variables (rows of the last one), or in mode winChannels
// those and then the largest disjoint variable no bounds check involves. The non-disjoint
// variables keep their relative order, so each destination sees its products in the
// reference's order. A reduction row (the last variable writes one destination) sums
// several destinations at once along that largest variable: it is put last among the
// disjoint ones. It sets k.outer.
func (k *WindowDot) loopOrder(mode int) []int {
	n := len(k.dom)
	fits := k.spanOK()
	dis := make([]bool, n)
	for j := range n {
		dis[j] = fits && k.disjoint(j)
	}
	u := -1 // the channel variable
	for j := 0; j < n-2; j++ {
		if dis[j] && k.dom[j] > 1 && !k.checked(j) && (u < 0 || k.dom[j] > k.dom[u]) {
			u = j
		}
	}
	if mode == winAuto {
		mode = winRows
		short := winRowMin
		if n > 0 && !k.outDepends(n-1) {
			short = winDotRowMin
		}
		if u >= 0 && k.dom[n-1] < short && k.dom[u] > k.dom[n-1] {
			mode = winChannels
		}
	}
	if u < 0 {
		mode = winRows
	}
	var tail []int
	for j := max(n-2, 0); j < n; j++ {
		tail = append(tail, j)
	}
	if mode == winChannels {
		tail = append(tail, u)
	}
	var first, rest []int
	for j := range n {
		switch {
		case slices.Contains(tail, j):
		case dis[j]:
			first = append(first, j)
		default:
			rest = append(rest, j)
		}
	}
	if mode == winRows && u >= 0 && !k.outDepends(n-1) {
		i := slices.Index(first, u)
		first = append(append(first[:i:i], first[i+1:]...), u)
	}
	k.outer = len(first)
	return append(append(first, rest...), tail...)
}

// spanOK reports whether every index of out has a span below winMax (disjoint's sums then
// cannot overflow); NewWindowDot refuses the others anyway.
func (k *WindowDot) spanOK() bool {
	for d, row := range k.spec[0].Coef {
		if _, _, ok := k.span(row, k.spec[0].C0[d]); !ok {
			return false
		}
	}
	return true
}

// outDepends reports whether some index of out depends on domain variable j.
func (k *WindowDot) outDepends(j int) bool {
	for _, row := range k.spec[0].Coef {
		if row[j] != 0 {
			return true
		}
	}
	return false
}

// checked reports whether domain variable j enters an index of some access that is not
// provably in bounds (its intervals would then differ between the lanes of an unrolled row).
func (k *WindowDot) checked(j int) bool {
	for _, acc := range k.spec {
		for d, row := range acc.Coef {
			if row[j] == 0 {
				continue
			}
			lo, hi, ok := k.span(row, acc.C0[d])
			if !ok || lo < 0 || hi >= int64(acc.Shape[d]) {
				return true
			}
		}
	}
	return false
}

// Run implements Kernel: ins are A and B, of out's float type.
func (k *WindowDot) Run(out any, ins []any) error {
	if len(ins) != 2 {
		return errors.Errorf("kernel: windowDot: %d inputs, want 2", len(ins))
	}
	switch o := out.(type) {
	case []float64:
		return windowDotRun(k, o, ins)
	case []float32:
		return windowDotRun(k, o, ins)
	}
	return typeErr("windowDot", out, ins)
}

func windowDotRun[T floatT](k *WindowDot, out []T, ins []any) error {
	a, ok1 := ins[0].([]T)
	b, ok2 := ins[1].([]T)
	if !ok1 || !ok2 {
		return typeErr("windowDot", out, ins)
	}
	if len(out) != k.size[0] || len(a) != k.size[1] || len(b) != k.size[2] {
		return errors.Errorf("kernel: windowDot: out, A and B of %d, %d and %d elements, want %d, %d and %d (shapes %v, %v, %v)",
			len(out), len(a), len(b), k.size[0], k.size[1], k.size[2], k.spec[0].Shape, k.spec[1].Shape, k.spec[2].Shape)
	}
	clear(out)
	if k.points == 0 {
		return nil
	}
	if k.plane != nil && runPlanes(k, k.plane, out, [3][]T{out, a, b}) {
		return nil
	}
	if k.clipped[1] && !allFinite(b) || k.clipped[2] && !allFinite(a) {
		windowDotExact(k, out, a, b)
		return nil
	}
	val := make([]int64, len(k.cons))
	for i, c := range k.cons {
		val[i] = c.c0
	}
	for _, ci := range k.fixed {
		if c := k.cons[ci]; c.c0 < 0 || c.c0 >= c.lim {
			return nil // some access is out of bounds everywhere
		}
	}
	n := len(k.ldom)
	if n == 0 {
		out[k.base[0]] += T(a[k.base[1]] * b[k.base[2]])
		return nil
	}
	// Split across goroutines along the first level of more than one value (the levels
	// before it have one) when it is disjoint: its parts write disjoint destinations.
	split := 0
	for split < n && k.ldom[split] == 1 {
		split++
	}
	if split < k.outer {
		work := costOf(k.points, wStrided)
		if workers(k.ldom[split], work) > 1 {
			inParallel(k.ldom[split], work, func(lo, hi int) {
				w := winWalk[T]{k: k, out: out, a: a, b: b, val: append([]int64(nil), val...), lanes: 1, split: split, slo: lo, shi: hi}
				w.level(0, k.base)
			})
			return nil
		}
	}
	w := winWalk[T]{k: k, out: out, a: a, b: b, val: val, lanes: 1, split: -1}
	w.level(0, k.base)
	return nil
}

// allFinite reports whether s holds no infinity and no NaN (v − v is 0 for a number, NaN
// otherwise, and NaN stays in the sum).
func allFinite[T floatT](s []T) bool {
	var n0, n1, n2, n3 T
	i := 0
	for ; i+4 <= len(s); i += 4 {
		n0 += s[i] - s[i]
		n1 += s[i+1] - s[i+1]
		n2 += s[i+2] - s[i+2]
		n3 += s[i+3] - s[i+3]
	}
	for ; i < len(s); i++ {
		n0 += s[i] - s[i]
	}
	return n0+n1+n2+n3 == 0
}

// winWalk is one goroutine's walk of the loop nest.
type winWalk[T floatT] struct {
	k         *WindowDot
	out, a, b []T
	val       []int64 // per bounds check: its value with the variables of the levels entered
	lanes     int     // destinations of the rows (the unrolled level's block)
	split     int     // level restricted to [slo, shi) (−1: none)
	slo, shi  int
}

// interval is the range [lo, hi) of level l's values for which the checks clipped there
// hold (given the outer levels' values in w.val), within [0, ldom[l]).
func (w *winWalk[T]) interval(l int) (int, int) {
	k := w.k
	lo, hi := int64(0), int64(k.ldom[l])
	if l == w.split {
		lo, hi = int64(w.slo), int64(w.shi)
	}
	for _, ci := range k.chk[l] {
		c := &k.cons[ci]
		v, s := w.val[ci], c.c[l]
		// 0 ≤ v + s·t < lim
		if s > 0 {
			lo = max(lo, ceilDivW(-v, s))
			hi = min(hi, floorDivW(c.lim-1-v, s)+1)
		} else {
			lo = max(lo, ceilDivW(v-c.lim+1, -s))
			hi = min(hi, floorDivW(v, -s)+1)
		}
	}
	if hi <= lo {
		return 0, 0
	}
	return int(lo), int(hi)
}

func floorDivW(a, b int64) int64 { // b > 0
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

func ceilDivW(a, b int64) int64 { return -floorDivW(-a, b) } // b > 0

// level runs level l and the levels inside it from the offsets off of the accesses.
func (w *winWalk[T]) level(l int, off [3]int) {
	k := w.k
	lo, hi := w.interval(l)
	if hi <= lo {
		return
	}
	st0, st1, st2 := k.st[0][l], k.st[1][l], k.st[2][l]
	n := len(k.ldom)
	if l == n-1 {
		w.row(off[0]+lo*st0, off[1]+lo*st1, off[2]+lo*st2, hi-lo, st0, st1, st2)
		return
	}
	upd := k.upd[l]
	for _, ci := range upd {
		w.val[ci] += k.cons[ci].c[l] * int64(lo)
	}
	o := [3]int{off[0] + lo*st0, off[1] + lo*st1, off[2] + lo*st2}
	switch {
	case l == k.unroll:
		// no check involves this level (upd and chk are empty)
		for t := lo; t < hi; t += winLanes {
			w.lanes = min(winLanes, hi-t)
			w.level(l+1, o)
			o[0] += winLanes * st0
			o[1] += winLanes * st1
			o[2] += winLanes * st2
		}
		w.lanes = 1
		return
	case l == n-2 && k.rowFree:
		// the rows' interval does not depend on this level: one interval, the rows inline
		r0, r1 := w.interval(n - 1)
		if r1 > r0 {
			s0, s1, s2 := k.st[0][n-1], k.st[1][n-1], k.st[2][n-1]
			o[0], o[1], o[2] = o[0]+r0*s0, o[1]+r0*s1, o[2]+r0*s2
			w.plane(o, hi-lo, [3]int{st0, st1, st2}, r1-r0, [3]int{s0, s1, s2})
		}
	default:
		for t := lo; t < hi; t++ {
			w.level(l+1, o)
			for _, ci := range upd {
				w.val[ci] += k.cons[ci].c[l]
			}
			o[0] += st0
			o[1] += st1
			o[2] += st2
		}
	}
	for _, ci := range upd {
		w.val[ci] -= k.cons[ci].c[l] * int64(hi)
	}
}

// plane runs rows rows of n points of the innermost level, row t from the offsets
// o + t·rs with strides s along it. The rows that write a destination per point and read
// one factor per row (a window row times a filter tap, a cotangent row times a tap) run
// here, straight into axpyUnit or axpyRow; the others through row.
func (w *winWalk[T]) plane(o [3]int, rows int, rs [3]int, n int, s [3]int) {
	so, sx, sy := s[0], s[1], s[2]
	a, b := w.a, w.b
	d0, x, y, rx, ry := o[0], o[1], o[2], rs[1], rs[2]
	if sx == 0 && sy != 0 { // a·b and b·a round alike: B is the factor constant along a row
		a, b, x, y, rx, ry, sx, sy = b, a, y, x, ry, rx, sy, sx
	}
	out := w.out
	switch {
	case so == 1 && sx == 1 && sy == 0 && n < 8 && rs[0] == n && rx == n && ry > 0:
		// short rows, one after another in out and A (densenet121's gradients on 2×2 and
		// 4×4 maps scattered into their concatenation's slices): a loop per block, not a
		// call per row of 4
		axpyShortRows(out[d0:d0+rows*n], a[x:x+rows*n], b[y:y+(rows-1)*ry+1], n, ry)
	case so == 1 && sx == 1 && sy == 0:
		for range rows {
			axpyUnit(out[d0:d0+n], a[x:x+n], b[y])
			d0, x, y = d0+rs[0], x+rx, y+ry
		}
	case so > 0 && sx > 0 && sy == 0:
		ed, ex := (n-1)*so+1, (n-1)*sx+1
		for range rows {
			axpyRow(out[d0:d0+ed], a[x:x+ex], b[y], n, so, sx)
			d0, x, y = d0+rs[0], x+rx, y+ry
		}
	default:
		o := o
		for range rows {
			w.row(o[0], o[1], o[2], n, s[0], s[1], s[2])
			o[0], o[1], o[2] = o[0]+rs[0], o[1]+rs[1], o[2]+rs[2]
		}
	}
}

// row runs n points of the innermost level from offsets o, x, y of out, A and B with
// strides so, sx, sy (for each of w.lanes destinations of a reduction row).
func (w *winWalk[T]) row(o, x, y, n, so, sx, sy int) {
	out, a, b := w.out, w.a, w.b
	if so == 0 {
		if w.lanes == 1 {
			dotRow(out, a, b, o, x, y, n, sx, sy)
			return
		}
		u := w.k.unroll
		dotRows(out, a, b, o, x, y, n, sx, sy, w.lanes, w.k.st[0][u], w.k.st[1][u], w.k.st[2][u])
		return
	}
	// A product is symmetric (a·b and b·a round alike): make B the factor that is
	// constant along the row when one is.
	if sx == 0 && sy != 0 {
		a, b, x, y, sx, sy = b, a, y, x, sy, sx
	}
	if so < 0 || sx < 0 || sy < 0 { // (a reversed access; the slices below go forwards)
		for range n {
			out[o] += T(a[x] * b[y])
			o, x, y = o+so, x+sx, y+sy
		}
		return
	}
	d := out[o : o+(n-1)*so+1]
	s := a[x : x+(n-1)*sx+1]
	if sy == 0 {
		axpyRow(d, s, b[y], n, so, sx)
		return
	}
	u := b[y : y+(n-1)*sy+1]
	if so == 1 && sx == 1 && sy == 1 && n >= vecRowMin {
		mulAddUnit(d, s, u)
		return
	}
	for t := range n {
		d[t*so] += T(s[t*sx] * u[t*sy])
	}
}

// axpyUnit adds s[t]·v to d[t] for t < len(d) (s at least as long), four at a time.
func axpyUnit[T floatT](d, s []T, v T) {
	s = s[:len(d)]
	t := simdAxpy(d, s, v)
	for ; t+4 <= len(d); t += 4 {
		d4, s4 := d[t:t+4:t+4], s[t:t+4:t+4]
		d4[0] += T(s4[0] * v)
		d4[1] += T(s4[1] * v)
		d4[2] += T(s4[2] * v)
		d4[3] += T(s4[3] * v)
	}
	for ; t < len(d); t++ {
		d[t] += T(s[t] * v)
	}
}

// axpyRow adds s[t·sx]·v to d[t·so] for t < n (d and s hold exactly the points read).
func axpyRow[T floatT](d, s []T, v T, n, so, sx int) {
	switch {
	case so == 1 && sx == 1:
		axpyUnit(d, s, v)
	case so == 1:
		for t := range d {
			d[t] += T(s[t*sx] * v)
		}
	case sx == 1:
		for t, xv := range s {
			d[t*so] += T(xv * v)
		}
	default:
		for t := range n {
			d[t*so] += T(s[t*sx] * v)
		}
	}
}

// dotRow adds Σ_t A[x + t·sx]·B[y + t·sy] (t < n, in order) to out[o].
func dotRow[T floatT](out, a, b []T, o, x, y, n, sx, sy int) {
	acc := out[o]
	if sx < 0 || sy < 0 {
		for range n {
			acc += T(a[x] * b[y])
			x, y = x+sx, y+sy
		}
		out[o] = acc
		return
	}
	s, u := a[x:x+(n-1)*sx+1], b[y:y+(n-1)*sy+1]
	if sx == 1 && sy == 1 {
		u = u[:len(s)]
		for t, v := range s {
			acc += T(v * u[t])
		}
	} else {
		for t := range n {
			acc += T(s[t*sx] * u[t*sy])
		}
	}
	out[o] = acc
}

// dotRows is dotRow for lanes (≤ winLanes) destinations at once, the lane i's offsets
// shifted by i·(lo, lx, ly): independent chains of additions, each in order.
func dotRows[T floatT](out, a, b []T, o, x, y, n, sx, sy, lanes, lo, lx, ly int) {
	if lanes < winLanes || sx < 0 || sy < 0 || lx < 0 || ly < 0 {
		for i := range lanes {
			dotRow(out, a, b, o+i*lo, x+i*lx, y+i*ly, n, sx, sy)
		}
		return
	}
	ex, ey := (n-1)*sx+1, (n-1)*sy+1
	a0, a1, a2, a3 := a[x:x+ex], a[x+lx:x+lx+ex], a[x+2*lx:x+2*lx+ex], a[x+3*lx:x+3*lx+ex]
	b0, b1, b2, b3 := b[y:y+ey], b[y+ly:y+ly+ey], b[y+2*ly:y+2*ly+ey], b[y+3*ly:y+3*ly+ey]
	c0, c1, c2, c3 := out[o], out[o+lo], out[o+2*lo], out[o+3*lo]
	if sx == 1 && sy == 1 {
		a1, a2, a3 = a1[:len(a0)], a2[:len(a0)], a3[:len(a0)]
		b0, b1, b2, b3 = b0[:len(a0)], b1[:len(a0)], b2[:len(a0)], b3[:len(a0)]
		for t := range a0 {
			c0 += T(a0[t] * b0[t])
			c1 += T(a1[t] * b1[t])
			c2 += T(a2[t] * b2[t])
			c3 += T(a3[t] * b3[t])
		}
	} else {
		for t := range n {
			i, j := t*sx, t*sy
			c0 += T(a0[i] * b0[j])
			c1 += T(a1[i] * b1[j])
			c2 += T(a2[i] * b2[j])
			c3 += T(a3[i] * b3[j])
		}
	}
	out[o], out[o+lo], out[o+2*lo], out[o+3*lo] = c0, c1, c2, c3
}

// windowDotExact is the reference's loop: every point in row-major order, a read out of
// bounds zero, a write out of bounds dropped (out cleared by the caller).
func windowDotExact[T floatT](k *WindowDot, out, a, b []T) {
	n := len(k.dom)
	idx := make([]int, n)
	for range k.points {
		var off [3]int
		var in [3]bool
		for i, acc := range k.spec {
			in[i] = true
			for d, row := range acc.Coef {
				v := acc.C0[d]
				for j, c := range row {
					v += c * int64(idx[j])
				}
				if v < 0 || v >= int64(acc.Shape[d]) {
					in[i] = false
					break
				}
				off[i] += int(v) * k.bst[i][d]
			}
		}
		if in[0] {
			var x, y T
			if in[1] {
				x = a[off[1]]
			}
			if in[2] {
				y = b[off[2]]
			}
			out[off[0]] += T(x * y)
		}
		for d := n - 1; d >= 0; d-- {
			if idx[d]++; idx[d] < k.dom[d] {
				break
			}
			idx[d] = 0
		}
	}
}
