package accel_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/bulkad/bulkad/accel"
	"github.com/bulkad/bulkad/examples/opgraphs"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// permutations returns every permutation of 0..n-1.
func permutations(n int) [][]int {
	if n == 0 {
		return [][]int{{}}
	}
	var out [][]int
	for _, p := range permutations(n - 1) {
		for i := 0; i <= len(p); i++ {
			q := append(append(append([]int{}, p[:i]...), n-1), p[i:]...)
			out = append(out, q)
		}
	}
	return out
}

// TestEngineTranspose: every permutation of shapes of rank 2 to 4 (with dimensions of size 1),
// float64 and float32, through tensor.Transpose on a tensor with the engine, against the
// definition out[c] = in[c'] with c'[perm[p]] = c[p].
func TestEngineTranspose(t *testing.T) {
	for _, shape := range [][]int{{3, 4}, {1, 5}, {2, 3, 4}, {2, 1, 3}, {2, 3, 1, 4}, {3, 2, 2, 3}} {
		n := 1
		for _, s := range shape {
			n *= s
		}
		for _, perm := range permutations(len(shape)) {
			for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
				var back any
				if dt == tensor.Float64 {
					f := make([]float64, n)
					for i := range f {
						f[i] = float64(i)
					}
					back = f
				} else {
					f := make([]float32, n)
					for i := range f {
						f[i] = float32(i)
					}
					back = f
				}
				x := tensor.New(tensor.WithShape(shape...), tensor.WithBacking(back), tensor.WithEngine(accel.Engine{}))
				y, err := tensor.Transpose(x, perm...)
				if err != nil {
					t.Fatalf("%v %v: %v", shape, perm, err)
				}
				got := y.(*tensor.Dense)
				outShape := make([]int, len(shape))
				for p, q := range perm {
					outShape[p] = shape[q]
				}
				if !got.Shape().Eq(tensor.Shape(outShape)) {
					t.Fatalf("%v %v: shape %v, want %v", shape, perm, got.Shape(), outShape)
				}
				// Walk the output in row-major order.
				c := make([]int, len(shape))
				in := make([]int, len(shape))
				for i := 0; i < n; i++ {
					for p, q := range perm {
						in[q] = c[p]
					}
					off := 0
					for d := range shape {
						off = off*shape[d] + in[d]
					}
					var v float64
					if dt == tensor.Float64 {
						v = got.Float64s()[i]
					} else {
						v = float64(got.Float32s()[i])
					}
					if v != float64(off) {
						t.Fatalf("%v %v %v: element %d (%v) = %v, want %d", dt, shape, perm, i, c, v, off)
					}
					for d := len(c) - 1; d >= 0; d-- {
						if c[d]++; c[d] < outShape[d] {
							break
						}
						c[d] = 0
					}
				}
			}
		}
	}
}

// softmaxRows is the softmax (or log-softmax) of each row, shifted by the row's maximum,
// in float64: the definition.
func softmaxRows(x []float64, cols int, log bool) []float64 {
	out := make([]float64, len(x))
	for r := 0; r < len(x)/cols; r++ {
		row := x[r*cols : (r+1)*cols]
		m := math.Inf(-1)
		for _, v := range row {
			m = math.Max(m, v)
		}
		s := 0.0
		for _, v := range row {
			s += math.Exp(v - m)
		}
		for i, v := range row {
			if log {
				out[r*cols+i] = v - m - math.Log(s)
			} else {
				out[r*cols+i] = math.Exp(v-m) / s
			}
		}
	}
	return out
}

// TestEngineSoftmaxShift: Gorgonia's SoftMax and LogSoftMax on the engine follow the
// definition where Gorgonia's own engine does not (TestGorgoniaSoftmaxShift: every row
// shifted by the first element of the first row).
func TestEngineSoftmaxShift(t *testing.T) {
	xs := []float64{0, 0, 1, 1000, 0, -3, -1000, -1001, -999}
	for _, log := range []bool{false, true} {
		for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
			g := G.NewGraph()
			x := G.NewMatrix(g, dt, G.WithShape(3, 3), G.WithName("x"), G.WithValue(opgraphs.Dense(dt, []int{3, 3}, xs)))
			op := G.SoftMax // (not both on one x: Gorgonia gives them one hash and returns the first)
			if log {
				op = G.LogSoftMax
			}
			sm := G.Must(op(x))
			vm := G.NewTapeMachine(g, G.WithEngine(accel.Engine{}))
			defer vm.Close()
			if err := vm.RunAll(); err != nil {
				t.Fatal(err)
			}
			got := opgraphs.Floats(sm.Value())
			want := softmaxRows(xs, 3, log)
			tol := 1e-15
			if dt == tensor.Float32 {
				tol = 1e-6
			}
			for i := range want {
				if math.Abs(got[i]-want[i]) > tol*math.Max(1, math.Abs(want[i])) {
					t.Errorf("%v log=%v: %v, want %v", dt, log, got, want)
					break
				}
			}
		}
	}
}

// TestEngineSoftmaxOptions: the engine's SoftMax along every axis, into a reused tensor, in
// place (UseUnsafe) and into a new tensor; a bad axis is an error; an int tensor goes to
// Gorgonia's engine (which refuses it).
func TestEngineSoftmaxOptions(t *testing.T) {
	e := accel.Engine{}
	xs := []float64{0.5, -1, 2, 0, 3, 1, -2, 0.25, 1.5, -0.5, 2.5, 1}
	mk := func() *tensor.Dense {
		return tensor.New(tensor.WithShape(2, 3, 2), tensor.WithBacking(append([]float64(nil), xs...)), tensor.WithEngine(e))
	}
	for axis := -1; axis < 3; axis++ {
		a := axis
		if a < 0 {
			a += 3
		}
		// The definition along axis a of [2,3,2].
		want := make([]float64, len(xs))
		sh := []int{2, 3, 2}
		st := []int{6, 2, 1}
		for i := range xs {
			s := 0.0
			base := i - (i/st[a]%sh[a])*st[a]
			for k := 0; k < sh[a]; k++ {
				s += math.Exp(xs[base+k*st[a]])
			}
			want[i] = math.Exp(xs[i]) / s
		}
		check := func(how string, got tensor.Tensor) {
			t.Helper()
			for i, v := range got.(*tensor.Dense).Float64s() {
				if math.Abs(v-want[i]) > 1e-15 {
					t.Errorf("axis %d %s: %v, want %v", axis, how, got.Data(), want)
					return
				}
			}
		}
		x := mk()
		got, err := e.SoftMax(x, axis)
		if err != nil {
			t.Fatal(err)
		}
		if got == tensor.Tensor(x) {
			t.Errorf("axis %d: the safe call wrote into its input", axis)
		}
		check("new", got)
		reuse := tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(2, 3, 2))
		if got, err = e.SoftMax(mk(), axis, tensor.WithReuse(reuse)); err != nil || got != tensor.Tensor(reuse) {
			t.Fatalf("axis %d reuse: %v, %v", axis, got, err)
		}
		check("reuse", got)
		x = mk()
		if got, err = e.SoftMax(x, axis, tensor.UseUnsafe()); err != nil || got != tensor.Tensor(x) {
			t.Fatalf("axis %d unsafe: %v, %v", axis, got, err)
		}
		check("unsafe", got)
	}
	if _, err := e.SoftMax(mk(), 3); err == nil {
		t.Error("axis 3 of a rank-3 tensor was accepted")
	}
	if _, err := e.SoftMax(mk(), 0, tensor.WithReuse(tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(12)))); err == nil {
		t.Error("a reuse tensor of another shape was accepted")
	}
	ints := tensor.New(tensor.WithShape(2), tensor.WithBacking([]int{1, 2}), tensor.WithEngine(e))
	if _, err := e.SoftMax(ints, 0); err == nil {
		t.Error("an int tensor was accepted")
	}
}

// ExampleEngine runs a softmax on a machine with bulkad's engine: the row [1000, 0] that
// Gorgonia's own engine turns into NaN (TestGorgoniaSoftmaxShift) comes out right.
func ExampleEngine() {
	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 2), G.WithName("x"),
		G.WithValue(tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float64{0, 0, 1000, 0}))))
	sm := G.Must(G.SoftMax(x))
	vm := G.NewTapeMachine(g, G.WithEngine(accel.Engine{}))
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(sm.Value().Data())
	// Output: [0.5 0.5 1 0]
}

// TestEngineCompareScalar: tensor.Gte, Gt, Lte and Lt of a tensor on the engine with a scalar,
// the scalar on either side, with a result of the tensor's type (new, into a reuse tensor,
// in place), against the definition (NaN compares false); a bool result goes to Gorgonia's
// engine and is still right.
func TestEngineCompareScalar(t *testing.T) {
	xs := []float64{-1, 0, 0.5, 2, math.NaN(), math.Inf(-1)}
	type cmpFn func(a, b interface{}, opts ...tensor.FuncOpt) (tensor.Tensor, error)
	ops := []struct {
		name string
		f    cmpFn
		def  func(a, b float64) bool
	}{
		{">=", tensor.Gte, func(a, b float64) bool { return a >= b }},
		{">", tensor.Gt, func(a, b float64) bool { return a > b }},
		{"<=", tensor.Lte, func(a, b float64) bool { return a <= b }},
		{"<", tensor.Lt, func(a, b float64) bool { return a < b }},
	}
	mk := func() *tensor.Dense {
		return tensor.New(tensor.WithShape(2, 3), tensor.WithBacking(append([]float64(nil), xs...)), tensor.WithEngine(accel.Engine{}))
	}
	const s = 0.5
	for _, op := range ops {
		for _, left := range []bool{true, false} {
			want := make([]float64, len(xs))
			for i, x := range xs {
				a, b := x, s
				if !left {
					a, b = s, x
				}
				if op.def(a, b) {
					want[i] = 1
				}
			}
			call := func(x *tensor.Dense, opts ...tensor.FuncOpt) (tensor.Tensor, error) {
				opts = append(opts, tensor.AsSameType())
				if left {
					return op.f(x, s, opts...)
				}
				return op.f(s, x, opts...)
			}
			name := fmt.Sprintf("x %s %v", op.name, s)
			if !left {
				name = fmt.Sprintf("%v %s x", s, op.name)
			}
			check := func(how string, got tensor.Tensor, err error) {
				t.Helper()
				if err != nil {
					t.Fatalf("%s %s: %v", name, how, err)
				}
				for i, v := range got.(*tensor.Dense).Float64s() {
					if v != want[i] {
						t.Errorf("%s %s: %v, want %v", name, how, got.Data(), want)
						return
					}
				}
			}
			x := mk()
			got, err := call(x)
			check("new", got, err)
			if got == tensor.Tensor(x) || x.Float64s()[0] != xs[0] {
				t.Errorf("%s: the safe call wrote into its input", name)
			}
			reuse := tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(2, 3))
			got, err = call(mk(), tensor.WithReuse(reuse))
			check("reuse", got, err)
			if got != tensor.Tensor(reuse) {
				t.Errorf("%s: the result is not the reuse tensor", name)
			}
			x = mk()
			got, err = call(x, tensor.UseUnsafe())
			check("unsafe", got, err)
			if got != tensor.Tensor(x) {
				t.Errorf("%s: the unsafe result is not the input", name)
			}
		}
	}
	b, err := tensor.Gte(mk(), 0.5)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.Data().([]bool); !got[2] || got[1] || got[4] {
		t.Errorf("x >= 0.5 as bools: %v", got)
	}
}

// TestEngineBinary: Add, Sub, Mul and Div of two tensors of one shape on the engine (new,
// reuse, in place) against the definition, both dtypes; a large operand (split across
// goroutines) too; shapes that differ go to Gorgonia's engine, which refuses them.
func TestEngineBinary(t *testing.T) {
	type fn func(a, b interface{}, opts ...tensor.FuncOpt) (tensor.Tensor, error)
	ops := []struct {
		name string
		f    fn
		def  func(a, b float64) float64
	}{
		{"+", tensor.Add, func(a, b float64) float64 { return a + b }},
		{"-", tensor.Sub, func(a, b float64) float64 { return a - b }},
		{"*", tensor.Mul, func(a, b float64) float64 { return a * b }},
		{"/", tensor.Div, func(a, b float64) float64 { return a / b }},
	}
	for _, n := range []int{6, 300000} {
		xs, ys := make([]float64, n), make([]float64, n)
		for i := range xs {
			xs[i], ys[i] = float64(i%7)-3.5, float64(i%5)+0.5
		}
		ys[1] = 0 // a division by zero gives ±Inf as in Go
		for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
			mk := func(v []float64) *tensor.Dense {
				if dt == tensor.Float32 {
					f := make([]float32, len(v))
					for i, x := range v {
						f[i] = float32(x)
					}
					return tensor.New(tensor.WithShape(2, n/2), tensor.WithBacking(f), tensor.WithEngine(accel.Engine{}))
				}
				return tensor.New(tensor.WithShape(2, n/2), tensor.WithBacking(append([]float64(nil), v...)), tensor.WithEngine(accel.Engine{}))
			}
			for _, op := range ops {
				check := func(how string, got tensor.Tensor, err error) {
					t.Helper()
					if err != nil {
						t.Fatalf("%v %s %s: %v", dt, op.name, how, err)
					}
					vs := opgraphs.Floats(got)
					for i := range xs {
						want := op.def(xs[i], ys[i])
						if dt == tensor.Float32 {
							want = float64(float32(op.def(float64(float32(xs[i])), float64(float32(ys[i])))))
						}
						if vs[i] != want {
							t.Fatalf("%v n=%d: %v %s %v = %v, want %v (%s)", dt, n, xs[i], op.name, ys[i], vs[i], want, how)
						}
					}
				}
				x := mk(xs)
				got, err := op.f(x, mk(ys))
				check("new", got, err)
				if got == tensor.Tensor(x) {
					t.Errorf("%s: the safe call wrote into its input", op.name)
				}
				reuse := tensor.New(tensor.Of(dt), tensor.WithShape(2, n/2))
				got, err = op.f(mk(xs), mk(ys), tensor.WithReuse(reuse))
				check("reuse", got, err)
				if got != tensor.Tensor(reuse) {
					t.Errorf("%s: the result is not the reuse tensor", op.name)
				}
				x = mk(xs)
				got, err = op.f(x, mk(ys), tensor.UseUnsafe())
				check("unsafe", got, err)
				if got != tensor.Tensor(x) {
					t.Errorf("%s: the unsafe result is not the input", op.name)
				}
				if _, err := op.f(mk(xs), mk(ys), tensor.WithReuse(tensor.New(tensor.Of(dt), tensor.WithShape(n)))); err == nil {
					t.Errorf("%s: a reuse tensor of another shape was accepted", op.name)
				}
			}
		}
	}
	a := tensor.New(tensor.WithShape(2, 3), tensor.Of(tensor.Float64), tensor.WithEngine(accel.Engine{}))
	b := tensor.New(tensor.WithShape(3, 2), tensor.Of(tensor.Float64), tensor.WithEngine(accel.Engine{}))
	if _, err := tensor.Add(a, b); err == nil {
		t.Error("tensors of shapes (2,3) and (3,2) were added")
	}
}

// TestEngineUnary: Exp, Log, Tanh, Neg and Sqrt of a tensor on the engine, both dtypes,
// small and large (split across goroutines), against the math package (float32 within one
// rounding of the float64 value); NaN stays NaN.
func TestEngineUnary(t *testing.T) {
	type fn func(a tensor.Tensor, opts ...tensor.FuncOpt) (tensor.Tensor, error)
	ops := []struct {
		name string
		f    fn
		def  func(float64) float64
	}{
		{"exp", tensor.Exp, math.Exp},
		{"log", tensor.Log, math.Log},
		{"tanh", tensor.Tanh, math.Tanh},
		{"neg", tensor.Neg, func(x float64) float64 { return -x }},
		{"sqrt", tensor.Sqrt, math.Sqrt},
	}
	for _, n := range []int{8, 300000} {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(i%11)*0.75 - 2
		}
		xs[3] = math.NaN()
		for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
			for _, op := range ops {
				var x *tensor.Dense
				if dt == tensor.Float32 {
					f := make([]float32, n)
					for i, v := range xs {
						f[i] = float32(v)
					}
					x = tensor.New(tensor.WithShape(n), tensor.WithBacking(f), tensor.WithEngine(accel.Engine{}))
				} else {
					x = tensor.New(tensor.WithShape(n), tensor.WithBacking(append([]float64(nil), xs...)), tensor.WithEngine(accel.Engine{}))
				}
				got, err := op.f(x)
				if err != nil {
					t.Fatalf("%v %s: %v", dt, op.name, err)
				}
				tol := 1e-15
				if dt == tensor.Float32 {
					tol = 1.2e-7
				}
				for i, v := range opgraphs.Floats(got) {
					want := op.def(xs[i])
					if math.IsNaN(want) != math.IsNaN(v) || !math.IsNaN(want) && math.Abs(v-want) > tol*math.Max(1e-30, math.Abs(want)) && !(math.IsInf(want, 0) && v == want) {
						t.Fatalf("%v n=%d: %s(%v) = %v, want %v", dt, n, op.name, xs[i], v, want)
					}
				}
			}
		}
	}
}
