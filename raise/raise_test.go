package raise

import (
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/bulkad/bulkad/core"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func f64(sh ...int) core.Type { return core.Type{Shape: core.Shape(sh), Dtype: core.Float64} }
func i64(sh ...int) core.Type { return core.Type{Shape: core.Shape(sh), Dtype: core.Int64} }

// input makes a graph input node holding the given float64 or int64 data.
func input(t *testing.T, g *gorgonia.ExprGraph, name string, sh []int, data any) *gorgonia.Node {
	t.Helper()
	var v gorgonia.Value
	var dt tensor.Dtype
	switch d := data.(type) {
	case []float64:
		dt = tensor.Float64
		if len(sh) == 0 {
			v = gorgonia.NewF64(d[0])
		} else {
			v = tensor.New(tensor.WithShape(sh...), tensor.WithBacking(d))
		}
	case []int64:
		dt = tensor.Int64
		if len(sh) == 0 {
			v = gorgonia.NewI64(d[0])
		} else {
			v = tensor.New(tensor.WithShape(sh...), tensor.WithBacking(d))
		}
	}
	var n *gorgonia.Node
	if len(sh) == 0 {
		n = gorgonia.NewScalar(g, dt, gorgonia.WithName(name))
	} else {
		n = gorgonia.NewTensor(g, dt, len(sh), gorgonia.WithShape(sh...), gorgonia.WithName(name))
	}
	if err := gorgonia.Let(n, v); err != nil {
		t.Fatal(err)
	}
	return n
}

func values(t *testing.T, n *gorgonia.Node) any {
	t.Helper()
	s, err := flat(n.Value())
	if err != nil {
		t.Fatal(err)
	}
	switch x := s.(type) {
	case []float64:
		return append([]float64(nil), x...)
	case []int64:
		return append([]int64(nil), x...)
	case []bool:
		return append([]bool(nil), x...)
	}
	return s
}

func randF(r *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = r.NormFloat64()
	}
	return v
}

func closeF(a, b []float64, tol float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > tol*(1+math.Abs(b[i])) {
			return false
		}
	}
	return true
}

func mustVar(t *testing.T, name string, ty core.Type) *core.Var {
	v, err := core.NewVar(name, ty)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// run raises p over the bindings, runs a TapeMachine twice (the second run exercises the
// preallocated path) and returns the result nodes.
func run(t *testing.T, g *gorgonia.ExprGraph, p *core.Program, bind map[string]*gorgonia.Node) []*gorgonia.Node {
	t.Helper()
	outs, err := Raise(g, p, bind)
	if err != nil {
		t.Fatalf("Raise(%v): %v", p, err)
	}
	m := gorgonia.NewTapeMachine(g)
	defer m.Close()
	for i := 0; i < 2; i++ {
		if err := m.RunAll(); err != nil {
			t.Fatalf("RunAll(%v): %v", p, err)
		}
		m.Reset()
	}
	return outs
}

func TestGatherScatterMatmul(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	var b core.Builder
	x := mustVar(t, "x", f64(2, 3))
	ix := mustVar(t, "ix", i64(4))
	v := mustVar(t, "v", f64(6))
	a := mustVar(t, "a", f64(3, 2))
	c := mustVar(t, "c", f64(3, 4))
	i, j := mustVar(t, "i", core.Scalar(core.Int64)), mustVar(t, "j", core.Scalar(core.Int64))
	// gather [3,2] x (\[i,j] -> [j,i])   (a transpose)
	g1 := b.Gather(core.Shape{3, 2}, x, b.IndexFn([]*core.Var{i, j}, j, i))
	// gather [4,3] x (\[i] -> [index ix [i]])  (row selection; ix has an out-of-bounds entry)
	g2 := b.Gather(core.Shape{4, 3}, x, b.IndexFn([]*core.Var{i}, b.Index(ix, i)))
	// scatter [2] v (\[i] -> [quot i 2])  (pairs 0,1 → 0; 2,3 → 1; 4,5 dropped)
	s1 := b.Scatter(core.Shape{2}, v, b.IndexFn([]*core.Var{i}, b.Binary(core.OpQuot, i, core.ScalarI(2))))
	// matmul (tr [1,0] a) c : [2,4]
	m1 := b.MatMul(b.Transpose([]int{1, 0}, a), c)
	body := b.Tuple(g1, g2, s1, m1)
	if b.Err() != nil {
		t.Fatal(b.Err())
	}
	p, err := core.NewProgram([]*core.Var{x, ix, v, a, c}, body)
	if err != nil {
		t.Fatal(err)
	}
	g := gorgonia.NewGraph()
	xd, vd, ad, cd := randF(r, 6), randF(r, 6), randF(r, 6), randF(r, 12)
	ixd := []int64{1, 0, 7, 1}
	bind := map[string]*gorgonia.Node{
		"x": input(t, g, "x", []int{2, 3}, xd), "ix": input(t, g, "ix", []int{4}, ixd),
		"v": input(t, g, "v", []int{6}, vd), "a": input(t, g, "a", []int{3, 2}, ad), "c": input(t, g, "c", []int{3, 4}, cd),
	}
	outs := run(t, g, p, bind)

	want1 := make([]float64, 6)
	for i := 0; i < 3; i++ {
		for j := 0; j < 2; j++ {
			want1[i*2+j] = xd[j*3+i]
		}
	}
	want2 := make([]float64, 12)
	for i, k := range ixd {
		for j := 0; j < 3; j++ {
			if k >= 0 && k < 2 {
				want2[i*3+j] = xd[int(k)*3+j]
			}
		}
	}
	want3 := []float64{vd[0] + vd[1], vd[2] + vd[3]}
	want4 := make([]float64, 8)
	for i := 0; i < 2; i++ {
		for j := 0; j < 4; j++ {
			for k := 0; k < 3; k++ {
				want4[i*4+j] += ad[k*2+i] * cd[k*4+j]
			}
		}
	}
	for k, want := range [][]float64{want1, want2, want3, want4} {
		if got := values(t, outs[k]).([]float64); !closeF(got, want, 1e-14) {
			t.Errorf("result %d of %v:\n got %v\nwant %v", k, p, got, want)
		}
	}
	// The matmul's transpose is a flag, not a node.
	if op, ok := outs[3].Op().(*Op); !ok || op.Kind() != "matmul" || !op.k.(gemmK).transA || op.k.(gemmK).transB {
		t.Errorf("matmul node has op %v (%T)", outs[3].Op(), outs[3].Op())
	}
	for _, n := range g.AllNodes() {
		if n.Op() != nil && strings.Contains(n.Op().String(), "ᵀ") {
			t.Errorf("unexpected transpose node %v", n)
		}
	}
}
