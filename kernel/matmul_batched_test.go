package kernel

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/tensors"
	"gorgonia.org/tensor"
)

// batchedCase is a batched product batch ++ [m,k] · batch ++ [k,n], each operand optionally
// stored transposed (its last two dimensions swapped) and read through tr.
type batchedCase struct {
	batch   []int
	m, k, n int
	ta, tb  bool
}

func (c batchedCase) String() string {
	return fmt.Sprintf("%v×[%d,%d]·[%d,%d] ta=%v tb=%v", c.batch, c.m, c.k, c.k, c.n, c.ta, c.tb)
}

// stored is the shape an operand of rows×cols is stored in.
func (c batchedCase) stored(rows, cols int, trans bool) []int {
	if trans {
		rows, cols = cols, rows
	}
	return append(slices.Clone(c.batch), rows, cols)
}

// program is fn (x, y) => matmul op(x) op(y) with op = tr (SwapLastTwo) where stored transposed.
func (c batchedCase) program(t *testing.T, d core.Dtype) *core.Program {
	var b core.Builder
	x := b.Var("x", ty(d, c.stored(c.m, c.k, c.ta)...))
	y := b.Var("y", ty(d, c.stored(c.k, c.n, c.tb)...))
	var a, bb core.Term = x, y
	r := len(c.batch) + 2
	if c.ta {
		a = b.Transpose(core.SwapLastTwo(r), x)
	}
	if c.tb {
		bb = b.Transpose(core.SwapLastTwo(r), y)
	}
	return mustProg(t, &b, []*core.Var{x, y}, b.MatMul(a, bb))
}

func (c batchedCase) args(d core.Dtype) map[string]*tensor.Dense {
	xs, ys := c.stored(c.m, c.k, c.ta), c.stored(c.k, c.n, c.tb)
	nx, ny := core.Shape(xs).Size(), core.Shape(ys).Size()
	return map[string]*tensor.Dense{"x": fd(d, xs, benchData(nx, int64(nx))...), "y": fd(d, ys, benchData(ny, int64(ny)+1)...)}
}

var batchedCases = []batchedCase{
	{[]int{2}, 2, 3, 2, false, false},
	{[]int{3}, 4, 5, 6, true, false},
	{[]int{3}, 4, 5, 6, false, true},
	{[]int{2, 3}, 4, 5, 6, true, true},
	{[]int{1}, 7, 3, 5, false, false},
	{[]int{0}, 2, 3, 4, false, false},
	{[]int{2}, 3, 0, 4, true, false},
	{[]int{2}, 3, 4, 0, false, false},
	// small products, enough of them to split the batch across goroutines (16·32³ ≥ 2^18)
	{[]int{4, 4}, 32, 32, 32, false, true},
	{[]int{16}, 33, 17, 40, true, false},
	// products large enough to split themselves (≥ gemmParallel): run one after the other
	{[]int{2}, 130, 130, 130, false, false},
	// one matrix: the ordinary product, with the flags
	{nil, 6, 5, 4, true, true},
	// products of at least smallProduct: the compiled evaluator passes the flags to the GEMM
	{[]int{3}, 64, 64, 65, true, true},
	{[]int{2}, 70, 64, 64, false, true},
}

// reference is the case's program in dtype d, random arguments for it and core.Eval's value.
func (c batchedCase) reference(t *testing.T, d core.Dtype) (*core.Program, map[string]*tensor.Dense, *tensor.Dense) {
	t.Helper()
	p := c.program(t, d)
	args := c.args(d)
	want, err := tensors.Eval(p, args)
	if err != nil {
		t.Fatalf("%v: core.Eval: %v", c, err)
	}
	return p, args, want
}

// The compiled evaluator against core.Eval (the reference) on batched products, with operand
// transposes read through the GEMM's flags.
func TestEvalBatchedMatMul(t *testing.T) {
	for _, d := range floatDtypes {
		for _, c := range batchedCases {
			p, args, want := c.reference(t, d)
			tol := 1e-12
			if d == core.Float32 {
				tol = 1e-5
			}
			checkFloats(t, fmt.Sprintf("%v %v", c, d), evalF(t, p, args), floats(t, want), tol)
		}
	}
}

// The MatMul kernel with a batch count against core.Eval of the same product.
func TestMatMulKernelBatched(t *testing.T) {
	for _, d := range floatDtypes {
		for _, c := range batchedCases {
			_, args, want := c.reference(t, d)
			g := BatchedMatMul(core.Shape(c.batch).Size(), c.m, c.k, c.n, c.ta, c.tb, nil, &Workspace{})
			out := makeSlice(d, want.Shape().TotalSize())
			if err := g.Run(out, []any{flat(d, args["x"]), flat(d, args["y"])}); err != nil {
				t.Fatalf("%v: %v", c, err)
			}
			if want.Shape().TotalSize() == 0 {
				continue
			}
			got := tensor.New(tensor.WithShape(want.Shape()...), tensor.WithBacking(out))
			tol := 1e-12
			if d == core.Float32 {
				tol = 1e-5
			}
			checkFloats(t, fmt.Sprintf("kernel %v %v", c, d), floats(t, got), floats(t, want), tol)
		}
	}
}

// flat is the backing slice of a float tensor (an empty one for an empty tensor, whose Data
// gorgonia.org/tensor cannot return).
func flat(d core.Dtype, x *tensor.Dense) any {
	if x.Shape().TotalSize() == 0 {
		return makeSlice(d, 0)
	}
	return x.Data()
}

// Integer products, batched, against sums written out: [[1,2],[3,4]]·[[5,6],[7,8]] =
// [[19,22],[43,50]] and [[1,0],[0,1]]ᵀ·[[2,3],[4,5]] = [[2,3],[4,5]].
func TestMatMulKernelBatchedInt(t *testing.T) {
	g := MatMul{M: 2, K: 2, N: 2, Batch: 2}
	out := make([]int64, 8)
	if err := g.Run(out, []any{[]int64{1, 2, 3, 4, 1, 0, 0, 1}, []int64{5, 6, 7, 8, 2, 3, 4, 5}}); err != nil {
		t.Fatal(err)
	}
	if want := []int64{19, 22, 43, 50, 2, 3, 4, 5}; !slices.Equal(out, want) {
		t.Fatalf("got %v, want %v", out, want)
	}
}

// Wrong lengths and input counts give errors naming the kernel, never a panic.
func TestMatMulKernelBatchedErrors(t *testing.T) {
	g := MatMul{M: 2, K: 3, N: 4, Batch: 5}
	cases := []struct {
		name string
		out  any
		ins  []any
		want string
	}{
		{"short a", make([]float64, 40), []any{make([]float64, 29), make([]float64, 60)}, "kernel: matmul: 5 product(s) of [2,3]·[3,4]"},
		{"short out", make([]float64, 39), []any{make([]float64, 30), make([]float64, 60)}, "need inputs of 30 and 60 elements and an output of 40"},
		{"one batch's worth", make([]float32, 8), []any{make([]float32, 6), make([]float32, 12)}, "kernel: matmul:"},
		{"one input", make([]float64, 40), []any{make([]float64, 30)}, "kernel: matmul: 1 inputs, want 2"},
		{"mixed", make([]float64, 40), []any{make([]float32, 30), make([]float64, 60)}, "kernel: matmul: unexpected value types"},
		{"int short", make([]int64, 40), []any{make([]int64, 30), make([]int64, 59)}, "kernel: matmul: unexpected value types"},
	}
	for _, c := range cases {
		err := g.Run(c.out, c.ins)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

// BenchmarkBatchedMatMul is the attention product of the bench's transformer (16 products of
// [64,32]·[32,64]) with the batch split across goroutines and run in order.
func BenchmarkBatchedMatMul(b *testing.B) {
	const batch, m, k, n = 16, 64, 32, 64
	x, y := benchData(batch*m*k, 1), benchData(batch*k*n, 2)
	out := make([]float64, batch*m*n)
	ws := &Workspace{}
	b.Run("split", func(b *testing.B) {
		for range b.N {
			gemmBatched(ws, false, true, batch, m, n, k, x, y, out)
		}
	})
	b.Run("serial", func(b *testing.B) {
		for range b.N {
			gemmBatchRange(ws, false, true, 0, batch, m, n, k, x, y, out)
		}
	})
}
