package lower

import (
	"fmt"
	"math"
	"math/rand"
	"sort"
	"strings"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/tensors"
	"gorgonia.org/tensor"
)

// These tests check the definitions that the adapter's Gorgonia comparisons do not reach
// (or reach only in special cases) against naive Go loops written from the definitions.

type arr struct {
	sh core.Shape
	v  []float64
}

// off is the offset in a.v of the element at index ix (row-major).
func (a arr) off(ix ...int) int {
	off := 0
	for i, k := range ix {
		off = off*a.sh[i] + k
	}
	return off
}

func (a arr) at(ix ...int) float64 { return a.v[a.off(ix...)] }

func randArr(rng *rand.Rand, sh ...int) arr {
	v := make([]float64, core.Shape(sh).Size())
	for i := range v {
		v[i] = 2*rng.Float64() - 1
	}
	return arr{core.Shape(sh), v}
}

// evalOn evaluates f(vars…) for the given arrays (float64) and returns the flat result.
// adjoint returns ⟨ax, y⟩ and ⟨x, aty⟩ and reports whether they agree within 1e-12
// relative: a linear map A and its adjoint have ⟨A x, y⟩ = ⟨x, Aᵀ y⟩.
func adjoint(ax, y, aty, x []float64) (l, r float64, ok bool) {
	for i := range ax {
		l += ax[i] * y[i]
	}
	for i := range aty {
		r += aty[i] * x[i]
	}
	return l, r, math.Abs(l-r) <= 1e-12*math.Max(1, math.Abs(l))
}

// f64Var is a float64 variable x of shape sh.
func f64Var(t *testing.T, sh ...int) *core.Var {
	t.Helper()
	x, err := core.NewVar("x", core.Type{Shape: core.Shape(sh), Dtype: core.Float64})
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// weightedSum is the scalar Σ y ⊙ w, w cut to y's size.
func weightedSum(y core.Term, w []float64) (core.Term, error) {
	var b core.Builder
	wl, err := core.NewLitF(y.Type(), w[:y.Type().Shape.Size()])
	if err != nil {
		return nil, err
	}
	s := b.Mul(y, wl)
	for range y.Type().Shape {
		s = b.SumOuter(s)
	}
	return s, b.Err()
}

func evalOn(t *testing.T, f func(xs ...core.Term) (core.Term, error), as ...arr) ([]float64, core.Shape) {
	t.Helper()
	env := map[string]*tensor.Dense{}
	vars := make([]core.Term, len(as))
	for i, a := range as {
		name := fmt.Sprintf("x%d", i)
		v, err := core.NewVar(name, core.Type{Shape: a.sh, Dtype: core.Float64})
		if err != nil {
			t.Fatal(err)
		}
		vars[i] = v
		env[name] = tensor.New(tensor.WithShape([]int(a.sh)...), tensor.WithBacking(append([]float64{}, a.v...)))
	}
	term, err := f(vars...)
	if err != nil {
		t.Fatal(err)
	}
	d, err := tensors.EvalTerm(term, env)
	if err != nil {
		t.Fatalf("eval: %v\n%v", err, term)
	}
	var out []float64
	switch x := d.Data().(type) {
	case []float64:
		out = x
	case float64:
		out = []float64{x}
	default:
		t.Fatalf("result data %T", x)
	}
	return out, core.Shape(d.Shape())
}

func near(t *testing.T, label string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d elements, want %d", label, len(got), len(want))
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > tol*math.Max(1, math.Abs(want[i])) {
			t.Fatalf("%s: element %d = %.17g, want %.17g", label, i, got[i], want[i])
		}
	}
}

func TestClamp(t *testing.T) {
	a := randArr(rand.New(rand.NewSource(1)), 4, 5)
	got, _ := evalOn(t, func(x ...core.Term) (core.Term, error) { return Clamp(x[0], -0.3, 0.5) }, a)
	want := make([]float64, len(a.v))
	for i, v := range a.v {
		want[i] = math.Min(math.Max(v, -0.3), 0.5)
	}
	near(t, "clamp", got, want, 0)
	if _, err := Clamp(core.ScalarF(core.Float64, 1), 2, 1); err == nil {
		t.Error("clamp with lo > hi: no error")
	}
}

func TestLogSumExp(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	a := randArr(rng, 3, 4, 2)
	for i := range a.v {
		a.v[i] *= 300 // exp would overflow without the shift
	}
	for axis := 0; axis < 3; axis++ {
		got, sh := evalOn(t, func(x ...core.Term) (core.Term, error) { return LogSumExp(x[0], axis) }, a)
		var want []float64
		dims := []int{3, 4, 2}
		rest := append(append([]int{}, dims[:axis]...), dims[axis+1:]...)
		for r := 0; r < rest[0]*rest[1]; r++ {
			i0, i1 := r/rest[1], r%rest[1]
			m := math.Inf(-1)
			idx := func(k int) []int {
				ix := []int{i0, i1}
				return append(ix[:axis], append([]int{k}, ix[axis:]...)...)
			}
			for k := 0; k < dims[axis]; k++ {
				m = math.Max(m, a.at(idx(k)...))
			}
			s := 0.0
			for k := 0; k < dims[axis]; k++ {
				s += math.Exp(a.at(idx(k)...) - m)
			}
			want = append(want, m+math.Log(s))
		}
		if !sh.Equal(core.Shape(rest)) {
			t.Errorf("logsumexp axis %d: shape %v, want %v", axis, sh, rest)
		}
		near(t, fmt.Sprintf("logsumexp axis %d", axis), got, want, 1e-12)
	}
}

func TestRepeatNonUnit(t *testing.T) {
	a := randArr(rand.New(rand.NewSource(3)), 2, 3)
	got, sh := evalOn(t, func(x ...core.Term) (core.Term, error) { return Repeat(x[0], 1, 2) }, a)
	var want []float64
	for i := 0; i < 2; i++ {
		for j := 0; j < 6; j++ {
			want = append(want, a.at(i, j/2))
		}
	}
	if !sh.Equal(core.Shape{2, 6}) {
		t.Errorf("shape %v", sh)
	}
	near(t, "repeat", got, want, 0)
}

func TestBroadcastAndExpand(t *testing.T) {
	a := randArr(rand.New(rand.NewSource(4)), 3, 1)
	got, _ := evalOn(t, func(x ...core.Term) (core.Term, error) { return Broadcast(x[0], core.Shape{2, 3, 4}) }, a)
	var want []float64
	for i := 0; i < 2; i++ {
		for j := 0; j < 3; j++ {
			for k := 0; k < 4; k++ {
				want = append(want, a.at(j, 0))
			}
		}
	}
	near(t, "broadcast", got, want, 0)
	b := randArr(rand.New(rand.NewSource(5)), 2, 3)
	got, _ = evalOn(t, func(x ...core.Term) (core.Term, error) { return Expand(x[0], 1, 4) }, b)
	want = want[:0]
	for i := 0; i < 2; i++ {
		for k := 0; k < 4; k++ {
			for j := 0; j < 3; j++ {
				want = append(want, b.at(i, j))
			}
		}
	}
	near(t, "expand", got, want, 0)
	if _, err := Broadcast(core.ScalarF(core.Float64, 1), core.Shape{}); err != nil {
		t.Error(err)
	}
}

// naiveConv is the cross-correlation of x [b,c,h,w] with f [o,c,kh,kw] under window w.
func naiveConv(x, f arr, w Window) []float64 {
	oh, ow := w.OutHW(x.sh[2], x.sh[3])
	dh, dw := w.dil()
	var out []float64
	for bb := 0; bb < x.sh[0]; bb++ {
		for o := 0; o < f.sh[0]; o++ {
			for i := 0; i < oh; i++ {
				for j := 0; j < ow; j++ {
					s := 0.0
					for c := 0; c < x.sh[1]; c++ {
						for r := 0; r < w.KH; r++ {
							for q := 0; q < w.KW; q++ {
								row, col := i*w.StrideH-w.PadTop+r*dh, j*w.StrideW-w.PadLeft+q*dw
								if row >= 0 && row < x.sh[2] && col >= 0 && col < x.sh[3] {
									s += x.at(bb, c, row, col) * f.at(o, c, r, q)
								}
							}
						}
					}
					out = append(out, s)
				}
			}
		}
	}
	return out
}

var testWindows = []Window{
	{KH: 3, KW: 3, StrideH: 1, StrideW: 1},
	{KH: 3, KW: 2, PadTop: 1, PadBottom: 1, PadLeft: 0, PadRight: 2, StrideH: 2, StrideW: 1},
	{KH: 2, KW: 2, PadTop: 2, PadBottom: 0, PadLeft: 1, PadRight: 1, StrideH: 1, StrideW: 2, DilationH: 2, DilationW: 3},
}

func TestConv2dAgainstLoops(t *testing.T) {
	rng := rand.New(rand.NewSource(6))
	// the pointwise form (1×1, stride 1, no padding) too, at batch 1 and 2
	windows := append(append([]Window{}, testWindows...), Window{KH: 1, KW: 1, StrideH: 1, StrideW: 1})
	for k, w := range windows {
		for _, batch := range []int{1, 2} {
			x := randArr(rng, batch, 3, 7, 8)
			f := randArr(rng, 4, 3, w.KH, w.KW)
			got, _ := evalOn(t, func(v ...core.Term) (core.Term, error) { return Conv2d(v[0], v[1], w) }, x, f)
			near(t, fmt.Sprintf("conv2d window %d batch %d", k, batch), got, naiveConv(x, f, w), 1e-12)
		}
	}
}

// TestCol2ImIsAdjoint: ⟨im2col x, c⟩ = ⟨x, col2im c⟩ for random x and c.
func TestCol2ImIsAdjoint(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for k, w := range testWindows {
		x := randArr(rng, 2, 2, 6, 7)
		oh, ow := w.OutHW(6, 7)
		c := randArr(rng, 2, oh, ow, 2*w.KH*w.KW)
		cols, _ := evalOn(t, func(v ...core.Term) (core.Term, error) { return Im2Col(v[0], w) }, x)
		img, _ := evalOn(t, func(v ...core.Term) (core.Term, error) { return Col2Im(v[0], x.sh, w) }, c)
		if l, r, ok := adjoint(cols, c.v, img, x.v); !ok {
			t.Errorf("window %d: ⟨im2col x, c⟩ = %v, ⟨x, col2im c⟩ = %v", k, l, r)
		}
	}
}

func TestPoolingAgainstLoops(t *testing.T) {
	rng := rand.New(rand.NewSource(8))
	for k, w := range testWindows {
		w.DilationH, w.DilationW = 0, 0
		x := randArr(rng, 2, 2, 6, 5)
		for i := range x.v {
			x.v[i] -= 2 // all negative: padding must not win the max
		}
		oh, ow := w.OutHW(6, 5)
		var mx, av []float64
		for bb := 0; bb < 2; bb++ {
			for c := 0; c < 2; c++ {
				for i := 0; i < oh; i++ {
					for j := 0; j < ow; j++ {
						m, s := -math.MaxFloat64, 0.0
						for r := 0; r < w.KH; r++ {
							for q := 0; q < w.KW; q++ {
								row, col := i*w.StrideH-w.PadTop+r, j*w.StrideW-w.PadLeft+q
								if row >= 0 && row < 6 && col >= 0 && col < 5 {
									m = math.Max(m, x.at(bb, c, row, col))
									s += x.at(bb, c, row, col)
								}
							}
						}
						mx = append(mx, m)
						av = append(av, s/float64(w.KH*w.KW))
					}
				}
			}
		}
		got, _ := evalOn(t, func(v ...core.Term) (core.Term, error) { return MaxPool2D(v[0], w) }, x)
		near(t, fmt.Sprintf("max-pool window %d", k), got, mx, 0)
		got, _ = evalOn(t, func(v ...core.Term) (core.Term, error) { return AvgPool2D(v[0], w) }, x)
		near(t, fmt.Sprintf("avg-pool window %d", k), got, av, 1e-12)
	}
}

func TestBatchNormTrainAgainstLoops(t *testing.T) {
	x := randArr(rand.New(rand.NewSource(9)), 3, 2, 4)
	got, _ := evalOn(t, func(v ...core.Term) (core.Term, error) { return BatchNormTrain(v[0], 1e-5) }, x)
	want := make([]float64, len(x.v))
	for c := 0; c < 2; c++ {
		m, n := 0.0, 12.0
		for b := 0; b < 3; b++ {
			for s := 0; s < 4; s++ {
				m += x.at(b, c, s)
			}
		}
		m /= n
		v := 0.0
		for b := 0; b < 3; b++ {
			for s := 0; s < 4; s++ {
				v += (x.at(b, c, s) - m) * (x.at(b, c, s) - m)
			}
		}
		v /= n
		for b := 0; b < 3; b++ {
			for s := 0; s < 4; s++ {
				want[(b*2+c)*4+s] = (x.at(b, c, s) - m) / math.Sqrt(v+1e-5)
			}
		}
	}
	near(t, "batch norm", got, want, 1e-12)
}

// TestErrors: bad parameters give "lower:" errors, never panics.
func TestErrors(t *testing.T) {
	v, _ := core.NewVar("x", core.Type{Shape: core.Shape{2, 3}, Dtype: core.Float64})
	img, _ := core.NewVar("im", core.Type{Shape: core.Shape{1, 1, 4, 4}, Dtype: core.Float64})
	i64, _ := core.NewVar("i", core.Type{Shape: core.Shape{3}, Dtype: core.Int64})
	cases := map[string]func() (core.Term, error){
		"sum axis":       func() (core.Term, error) { return Sum(v, 2) },
		"sum dup":        func() (core.Term, error) { return Sum(v, 0, 0) },
		"max axis":       func() (core.Term, error) { return Max(v, -1) },
		"softmax axis":   func() (core.Term, error) { return Softmax(v, 5) },
		"unary name":     func() (core.Term, error) { return Unary("frobnicate", v) },
		"unary dtype":    func() (core.Term, error) { return Unary("exp", i64) },
		"binary shapes":  func() (core.Term, error) { return Binary(core.OpAdd, v, i64, false) },
		"matmul shapes":  func() (core.Term, error) { return MatMul(v, v, false, false) },
		"matvec":         func() (core.Term, error) { return MatVec(v, v, false) },
		"dot":            func() (core.Term, error) { return Dot(v, v) },
		"batched":        func() (core.Term, error) { return BatchedMatMul(v, v, false, false) },
		"tensordot":      func() (core.Term, error) { return Tensordot(v, v, []int{0}, []int{1}) },
		"slice range":    func() (core.Term, error) { return Slice(v, 1, 2, 1, 3, true) },
		"slice drop":     func() (core.Term, error) { return Slice(v, 0, 0, 1, 2, false) },
		"concat":         func() (core.Term, error) { return Concat(0, v, img) },
		"repeat axis":    func() (core.Term, error) { return Repeat(v, 3, 2) },
		"im2col rank":    func() (core.Term, error) { return Im2Col(v, Window{KH: 1, KW: 1, StrideH: 1, StrideW: 1}) },
		"im2col fit":     func() (core.Term, error) { return Im2Col(img, Window{KH: 5, KW: 1, StrideH: 1, StrideW: 1}) },
		"pool stride":    func() (core.Term, error) { return MaxPool2D(img, Window{KH: 2, KW: 2}) },
		"upsample scale": func() (core.Term, error) { return Upsample2D(img, 0) },
		"transpose":      func() (core.Term, error) { return Transpose(v, []int{0}) },
		"nil":            func() (core.Term, error) { return Sum(nil) },
		"broadcast":      func() (core.Term, error) { return Broadcast(v, core.Shape{3, 3}) },
	}
	for name, f := range cases {
		term, err := f()
		if err == nil {
			t.Errorf("%s: no error (got %v)", name, term)
		} else if !strings.HasPrefix(err.Error(), "lower: ") {
			t.Errorf("%s: error %q does not start with \"lower: \"", name, err)
		}
	}
}

// TestSparsemaxAgainstSorting compares with the sorting algorithm of Martins & Astudillo
// (2016), along every axis of a 3-D array.
func TestSparsemaxAgainstSorting(t *testing.T) {
	a := randArr(rand.New(rand.NewSource(10)), 3, 4, 5)
	dims := []int{3, 4, 5}
	for axis := 0; axis < 3; axis++ {
		got, _ := evalOn(t, func(x ...core.Term) (core.Term, error) { return Sparsemax(x[0], axis) }, a)
		want := make([]float64, len(a.v))
		strides := []int{20, 5, 1}
		for base := 0; base < len(a.v); base++ {
			if (base/strides[axis])%dims[axis] != 0 {
				continue // visit each line once, from its first element
			}
			n := dims[axis]
			z := make([]float64, n)
			for k := range z {
				z[k] = a.v[base+k*strides[axis]]
			}
			srt := append([]float64{}, z...)
			sort.Sort(sort.Reverse(sort.Float64Slice(srt)))
			cum, kk, cs := 0.0, 0, 0.0
			for j, v := range srt {
				cum += v
				if 1+float64(j+1)*v > cum {
					kk, cs = j+1, cum
				}
			}
			tau := (cs - 1) / float64(kk)
			sum := 0.0
			for k, v := range z {
				want[base+k*strides[axis]] = math.Max(v-tau, 0)
				sum += math.Max(v-tau, 0)
			}
			if math.Abs(sum-1) > 1e-12 {
				t.Fatalf("reference does not sum to 1: %v", sum)
			}
		}
		near(t, fmt.Sprintf("sparsemax axis %d", axis), got, want, 1e-12)
	}
}

// TestBatchedMatMulAgainstLoops: BatchedMatMul with every flag combination and batch ranks 1
// and 2 against the sums written out, and its term is one matmul (no product of rank 4).
func TestBatchedMatMulAgainstLoops(t *testing.T) {
	rng := rand.New(rand.NewSource(41))
	for _, batch := range []core.Shape{{3}, {2, 3}} {
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				m, k, n := 2, 4, 3
				ash := append(batch.Clone(), m, k)
				if ta {
					ash = append(batch.Clone(), k, m)
				}
				bsh := append(batch.Clone(), k, n)
				if tb {
					bsh = append(batch.Clone(), n, k)
				}
				a, b := randArr(rng, ash...), randArr(rng, bsh...)
				f := func(xs ...core.Term) (core.Term, error) { return BatchedMatMul(xs[0], xs[1], ta, tb) }
				got, sh := evalOn(t, f, a, b)
				nb := batch.Size()
				want := make([]float64, 0, nb*m*n)
				for p := 0; p < nb; p++ {
					for i := 0; i < m; i++ {
						for j := 0; j < n; j++ {
							s := 0.0
							for l := 0; l < k; l++ {
								x := a.v[p*m*k+i*k+l]
								if ta {
									x = a.v[p*m*k+l*m+i]
								}
								y := b.v[p*k*n+l*n+j]
								if tb {
									y = b.v[p*k*n+j*k+l]
								}
								s += x * y
							}
							want = append(want, s)
						}
					}
				}
				label := fmt.Sprintf("batch %v ta=%v tb=%v", batch, ta, tb)
				if wantSh := append(batch.Clone(), m, n); !sh.Equal(wantSh) {
					t.Fatalf("%s: shape %v, want %v", label, sh, wantSh)
				}
				near(t, label, got, want, 1e-12)
				va, _ := core.NewVar("a", core.Type{Shape: a.sh, Dtype: core.Float64})
				vb, _ := core.NewVar("b", core.Type{Shape: b.sh, Dtype: core.Float64})
				term, err := BatchedMatMul(va, vb, ta, tb)
				if err != nil {
					t.Fatal(err)
				}
				if _, ok := term.(*core.MatMul); !ok {
					t.Errorf("%s: term %v, want one matmul", label, term)
				}
			}
		}
	}
	// errors: different batches, inner dimensions
	x, _ := core.NewVar("x", core.Type{Shape: core.Shape{2, 3, 4}, Dtype: core.Float64})
	y, _ := core.NewVar("y", core.Type{Shape: core.Shape{3, 4, 5}, Dtype: core.Float64})
	if _, err := BatchedMatMul(x, y, false, false); err == nil || !strings.Contains(err.Error(), "lower: batched matmul: operand shapes [2 3 4] and [3 4 5], want equal batch dimensions") {
		t.Errorf("different batches: %v", err)
	}
	if _, err := BatchedMatMul(x, x, false, false); err == nil || !strings.Contains(err.Error(), "do not match (inner dimensions 4 and 3, transA=false transB=false)") {
		t.Errorf("inner dimensions: %v", err)
	}
}
