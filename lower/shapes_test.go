package lower

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/bulkad/bulkad/ad"
	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/coretest"
	"gorgonia.org/tensor"
)

// TestPad: every mode against values written out by hand from the definitions (NumPy's pad
// modes constant, reflect and edge; ONNX's negative pads crop).
func TestPad(t *testing.T) {
	v4 := arr{core.Shape{4}, []float64{1, 2, 3, 4}}
	m23 := arr{core.Shape{2, 3}, []float64{1, 2, 3, 4, 5, 6}}
	cases := []struct {
		name          string
		x             arr
		before, after []int
		mode          PadMode
		value         float64
		shape         core.Shape
		want          []float64
	}{
		{"zeros", v4, []int{1}, []int{2}, PadConstant, 0, core.Shape{7}, []float64{0, 1, 2, 3, 4, 0, 0}},
		{"value", v4, []int{2}, []int{1}, PadConstant, 1.5, core.Shape{7}, []float64{1.5, 1.5, 1, 2, 3, 4, 1.5}},
		{"reflect", v4, []int{2}, []int{3}, PadReflect, 0, core.Shape{9}, []float64{3, 2, 1, 2, 3, 4, 3, 2, 1}},
		{"edge", v4, []int{2}, []int{2}, PadEdge, 0, core.Shape{8}, []float64{1, 1, 1, 2, 3, 4, 4, 4}},
		{"crop", v4, []int{-1}, []int{1}, PadConstant, 0, core.Shape{4}, []float64{2, 3, 4, 0}},
		{"crop reflect", v4, []int{-2}, []int{1}, PadReflect, 0, core.Shape{3}, []float64{3, 4, 3}},
		{"2-D reflect", m23, []int{1, 2}, []int{0, 1}, PadReflect, 0, core.Shape{3, 6},
			[]float64{6, 5, 4, 5, 6, 5, 3, 2, 1, 2, 3, 2, 6, 5, 4, 5, 6, 5}},
		{"2-D value", m23, []int{0, 1}, []int{1, 0}, PadConstant, -2, core.Shape{3, 4},
			[]float64{-2, 1, 2, 3, -2, 4, 5, 6, -2, -2, -2, -2}},
		{"2-D edge", m23, []int{1, 0}, []int{0, 1}, PadEdge, 0, core.Shape{3, 4},
			[]float64{1, 2, 3, 3, 1, 2, 3, 3, 4, 5, 6, 6}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, sh := evalOn(t, func(x ...core.Term) (core.Term, error) { return Pad(x[0], c.before, c.after, c.mode, c.value) }, c.x)
			if !sh.Equal(c.shape) {
				t.Fatalf("shape %v, want %v", sh, c.shape)
			}
			near(t, c.name, got, c.want, 0)
		})
	}
	x, _ := core.NewVar("x", core.Type{Shape: core.Shape{3}, Dtype: core.Float64})
	errCases := []struct {
		before, after []int
		mode          PadMode
		want          string
	}{
		{[]int{3}, []int{0}, PadReflect, "reflecting 3"},
		{[]int{-2}, []int{-1}, PadConstant, "leaves nothing"},
		{[]int{1, 1}, []int{1}, PadConstant, "counts for shape"},
		{[]int{1}, []int{1}, PadMode(7), "unknown mode"},
	}
	for _, c := range errCases {
		if _, err := Pad(x, c.before, c.after, c.mode, 0); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("pad %v %v %v: error %v, want one mentioning %q", c.before, c.after, c.mode, err, c.want)
		}
	}
}

// TestGatherAxis: ONNX's Gather (NumPy's take along an axis) with 2-D indices, repeated and
// negative, at every axis of a 3-D array, against a loop over the definition; an index
// outside [−d, d) reads 0.
func TestGatherAxis(t *testing.T) {
	x := randArr(rand.New(rand.NewSource(5)), 3, 4, 2)
	idx := []int64{2, -1, 0, 2, 7, -4} // shape [2,3]; 7 and −4 are outside every axis here but axis 1's 7
	for axis := 0; axis < 3; axis++ {
		d := x.sh[axis]
		got, sh := evalOn(t, func(xs ...core.Term) (core.Term, error) {
			lit, err := core.NewLitI(core.Shape{2, 3}, idx)
			if err != nil {
				return nil, err
			}
			return GatherAxis(xs[0], lit, axis)
		}, x)
		wantShape := append(append(x.sh[:axis].Clone(), 2, 3), x.sh[axis+1:]...)
		if !sh.Equal(wantShape) {
			t.Fatalf("axis %d: shape %v, want %v", axis, sh, wantShape)
		}
		var want []float64
		for p := range wantShape.Size() {
			// the result's multi-index, split into x's outer part, the index position and x's inner part
			ix := make([]int, len(wantShape))
			for k, q := len(wantShape)-1, p; k >= 0; k-- {
				ix[k], q = q%wantShape[k], q/wantShape[k]
			}
			j := int(idx[ix[axis]*3+ix[axis+1]])
			if j < 0 {
				j += d
			}
			if j < 0 || j >= d {
				want = append(want, 0)
				continue
			}
			src := append(append(append([]int{}, ix[:axis]...), j), ix[axis+2:]...)
			want = append(want, x.at(src...))
		}
		near(t, fmt.Sprintf("gather axis %d", axis), got, want, 0)
	}
}

// naiveMatMul is NumPy's matmul of a and b, written from its definition with loops.
func naiveMatMul(a, b arr) arr {
	as, bs := a.sh, b.sh
	if len(as) == 1 {
		as = core.Shape{1, as[0]}
	}
	if len(bs) == 1 {
		bs = core.Shape{bs[0], 1}
	}
	ra, rb := len(as), len(bs)
	m, k, n := as[ra-2], as[ra-1], bs[rb-1]
	r := max(ra, rb) - 2
	batch := make([]int, r)
	for i := range batch {
		batch[i] = 1
		if j := i - (r - (ra - 2)); j >= 0 {
			batch[i] = max(batch[i], as[j])
		}
		if j := i - (r - (rb - 2)); j >= 0 {
			batch[i] = max(batch[i], bs[j])
		}
	}
	// at is the element of x (shape s, batch dims aligned at the end of batch) at batch index bi.
	at := func(x arr, s core.Shape, bi []int, i, j int) float64 {
		off := 0
		nb := len(s) - 2
		for q := 0; q < nb; q++ {
			v := bi[r-nb+q]
			if s[q] == 1 {
				v = 0
			}
			off = off*s[q] + v
		}
		return x.v[(off*s[nb]+i)*s[nb+1]+j]
	}
	var out []float64
	nbatch := core.Shape(batch).Size()
	for p := 0; p < nbatch; p++ {
		bi := make([]int, r)
		for q, rest := r-1, p; q >= 0; q-- {
			bi[q], rest = rest%batch[q], rest/batch[q]
		}
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				s := 0.0
				for l := 0; l < k; l++ {
					s += at(a, as, bi, i, l) * at(b, bs, bi, l, j)
				}
				out = append(out, s)
			}
		}
	}
	sh := core.Shape(batch).Clone()
	if len(a.sh) > 1 {
		sh = append(sh, m)
	}
	if len(b.sh) > 1 {
		sh = append(sh, n)
	}
	return arr{sh, out}
}

// matmulShapes are operand shapes of every form BroadcastMatMul distinguishes.
var matmulShapes = [][2][]int{
	{{2, 3, 4, 5}, {5, 6}},          // a stack times a matrix
	{{2, 1, 4, 5}, {3, 5, 2}},       // both batches broadcast
	{{4}, {2, 3, 4, 2}},             // a vector times a stack
	{{2, 3, 4, 2}, {2}},             // a stack times a vector
	{{7, 4}, {2, 3, 4, 2}},          // a matrix times a stack
	{{1, 7, 4}, {2, 3, 4, 2}},       // a unit batch times a stack
	{{2, 3, 4, 5}, {1, 1, 5, 2}},    // a stack times a unit batch
	{{2, 1, 3, 4, 5}, {3, 1, 5, 2}}, // rank 5 against rank 4
	{{3, 2, 4}, {3, 4, 5}},          // equal batches
}

// TestBroadcastMatMul: NumPy's matmul semantics against naiveMatMul.
func TestBroadcastMatMul(t *testing.T) {
	rng := rand.New(rand.NewSource(6))
	for _, s := range matmulShapes {
		a, b := randArr(rng, s[0]...), randArr(rng, s[1]...)
		want := naiveMatMul(a, b)
		got, sh := evalOn(t, func(x ...core.Term) (core.Term, error) { return BroadcastMatMul(x[0], x[1]) }, a, b)
		if !sh.Equal(want.sh) {
			t.Fatalf("%v × %v: shape %v, want %v", s[0], s[1], sh, want.sh)
		}
		near(t, fmt.Sprintf("%v × %v", s[0], s[1]), got, want.v, 1e-12)
	}
	x, _ := core.NewVar("x", core.Type{Shape: core.Shape{2, 3, 4}, Dtype: core.Float64})
	y, _ := core.NewVar("y", core.Type{Shape: core.Shape{3, 5, 2}, Dtype: core.Float64})
	z, _ := core.NewVar("z", core.Type{Shape: core.Shape{4, 3, 4, 2}, Dtype: core.Float64})
	for _, c := range []struct {
		a, b core.Term
		want string
	}{{x, y, "inner dimensions 4 and 5"}, {x, z, "do not broadcast"}, {core.ScalarF(core.Float64, 1), x, "rank ≥ 1"}} {
		if _, err := BroadcastMatMul(c.a, c.b); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v × %v: error %v, want one mentioning %q", c.a.Type(), c.b.Type(), err, c.want)
		}
	}
}

// TestShapeOpGradients: the gradients (package ad) of Σ f(x…) ⊙ w for padding in every
// mode, a gather with repeated and negative indices (a scatter-add) and broadcasting
// matmuls equal central differences of the function in float64.
func TestShapeOpGradients(t *testing.T) {
	idx := func() core.Term {
		l, _ := core.NewLitI(core.Shape{2, 2}, []int64{1, 1, -1, 0})
		return l
	}
	cases := []struct {
		name   string
		f      func(x ...core.Term) (core.Term, error)
		shapes [][]int
	}{
		{"pad reflect", func(x ...core.Term) (core.Term, error) { return Pad(x[0], []int{2, 1}, []int{1, 2}, PadReflect, 0) }, [][]int{{3, 4}}},
		{"pad edge", func(x ...core.Term) (core.Term, error) { return Pad(x[0], []int{2, 0}, []int{1, 3}, PadEdge, 0) }, [][]int{{3, 4}}},
		{"pad value and crop", func(x ...core.Term) (core.Term, error) { return Pad(x[0], []int{1, -1}, []int{2, 1}, PadConstant, 1.5) }, [][]int{{3, 4}}},
		{"gather axis", func(x ...core.Term) (core.Term, error) { return GatherAxis(x[0], idx(), 1) }, [][]int{{2, 3, 2}}},
	}
	for _, s := range matmulShapes {
		cases = append(cases, struct {
			name   string
			f      func(x ...core.Term) (core.Term, error)
			shapes [][]int
		}{fmt.Sprintf("matmul %v × %v", s[0], s[1]), func(x ...core.Term) (core.Term, error) { return BroadcastMatMul(x[0], x[1]) }, s[:]})
	}
	rng := rand.New(rand.NewSource(7))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var args []arr
			for _, sh := range c.shapes {
				args = append(args, randArr(rng, sh...))
			}
			fdGradCheck(t, rng, c.f, args)
		})
	}
}

// fdGradCheck compares package ad's gradient of cost = Σ f(args) ⊙ w (w random) with
// central differences of cost, for every argument.
func fdGradCheck(t *testing.T, rng *rand.Rand, f func(x ...core.Term) (core.Term, error), args []arr) {
	t.Helper()
	var w []float64
	cost := func(xs ...core.Term) (core.Term, error) {
		y, err := f(xs...)
		if err != nil {
			return nil, err
		}
		for len(w) < y.Type().Shape.Size() {
			w = append(w, 2*rng.Float64()-1)
		}
		return weightedSum(y, w)
	}
	vars := make([]*core.Var, len(args))
	terms := make([]core.Term, len(args))
	env := map[string]*tensor.Dense{}
	for i, a := range args {
		v, err := core.NewVar(fmt.Sprintf("x%d", i), core.Type{Shape: a.sh, Dtype: core.Float64})
		if err != nil {
			t.Fatal(err)
		}
		vars[i], terms[i] = v, v
		env[v.Name] = tensor.New(tensor.WithShape([]int(a.sh)...), tensor.WithBacking(append([]float64{}, a.v...)))
	}
	body, err := cost(terms...)
	if err != nil {
		t.Fatal(err)
	}
	g, err := ad.Grad(coretest.MustProgram(t, nil, vars, body))
	if err != nil {
		t.Fatal(err)
	}
	_, grads, err := g.Run(env)
	if err != nil {
		t.Fatal(err)
	}
	const h = 1e-6
	for i, a := range args {
		fd := make([]float64, len(a.v))
		for k := range a.v {
			at := func(delta float64) float64 {
				moved := append([]arr{}, args...)
				moved[i] = arr{a.sh, append([]float64{}, a.v...)}
				moved[i].v[k] += delta
				v, _ := evalOn(t, cost, moved...)
				return v[0]
			}
			fd[k] = (at(h) - at(-h)) / (2 * h)
		}
		near(t, fmt.Sprintf("∂cost/∂x%d vs central differences", i), grads[vars[i].Name].Float64s(), fd, 1e-7)
	}
}
