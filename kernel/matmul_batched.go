package kernel

import (
	"github.com/bulkad/bulkad/core"
)

// Batched matrix products: matmul of stacks x : B ++ [m,k], y : B ++ [k,n] (core.MatMul with
// batch dimensions B) is one GEMM per batch position, each through gemm, the one GEMM entry
// point. The products of multi-head attention are many and small (16 products of 64×32×64 in
// the bench's transformer): each is below gemmParallel, so gemm runs it on one goroutine, and
// the batch is split across goroutines instead.

// gemmBatchParallel is the number of multiply-adds of a whole batch from which gemmBatched
// splits the batch across goroutines (when each product is too small to split itself). A
// multiply-add costs less than an element of the memory-bound loops that parallelMin measures
// (the micro-kernels keep their operands in registers and do several per cycle): 2^18 of them
// are tens of microseconds on one core, well above the cost of starting a goroutine. The value
// is reasoned, not measured: on the shared 2-core machine of this change the second core was
// busy (a 256³ product split by gemmGo ran no faster on 2 than on 1), and BenchmarkBatchedMatMul
// showed the split 20–40% slower than the serial loop there; measure on an idle machine.
const gemmBatchParallel = 1 << 18

// gemmBatched computes c_p = op(a_p) · op(b_p) for p < batch, where a_p, b_p, c_p are the
// consecutive matrices of a (each [m,k], or [k,m] when ta), b ([k,n], or [n,k] when tb) and c
// ([m,n]). It splits the batch across goroutines when the products are small (each below
// gemmParallel, together at least gemmBatchParallel multiply-adds); otherwise it runs them in
// order and each large product splits itself.
func gemmBatched[T floatT](ws *Workspace, ta, tb bool, batch, m, n, k int, a, b, c []T) {
	if batch == 1 {
		gemm(ws, ta, tb, m, n, k, a, b, c)
		return
	}
	each := m * n * k
	if batch > 1 && !gemmSplits(m, n, k) && batch*each >= gemmBatchParallel && workers(batch, parallelMin) > 1 {
		gemmBatchSplit(ws, ta, tb, batch, m, n, k, a, b, c)
		return
	}
	gemmBatchRange(ws, ta, tb, 0, batch, m, n, k, a, b, c)
}

// gemmBatchSplit runs gemmBatchRange over parts of the batch on several goroutines (a function
// of its own so that the closure is not allocated on the serial path).
func gemmBatchSplit[T floatT](ws *Workspace, ta, tb bool, batch, m, n, k int, a, b, c []T) {
	inParallel(batch, parallelMin, func(lo, hi int) {
		gemmBatchRange(ws, ta, tb, lo, hi, m, n, k, a, b, c)
	})
}

// gemmBatchRange computes the products lo ≤ p < hi of gemmBatched.
func gemmBatchRange[T floatT](ws *Workspace, ta, tb bool, lo, hi, m, n, k int, a, b, c []T) {
	sa, sb, sc := m*k, k*n, m*n
	for p := lo; p < hi; p++ {
		gemm(ws, ta, tb, m, n, k, a[p*sa:(p+1)*sa], b[p*sb:(p+1)*sb], c[p*sc:(p+1)*sc])
	}
}

// matmulDims returns the batch size and the dimensions m, k, n of matmul x y (x : B ++ [m,k],
// y : B ++ [k,n]; the batch size is 1 without batch dimensions).
func matmulDims(t *core.MatMul) (batch, m, k, n int) {
	xs, ys := t.X.Type().Shape, t.Y.Type().Shape
	r := len(xs)
	return xs[:r-2].Size(), xs[r-2], xs[r-1], ys[r-1]
}

// swapped returns the operand of a transpose that swaps the last two dimensions of a rank ≥ 2
// array (and keeps the others), and true; otherwise t and false.
func swapped(t core.Term) (core.Term, bool) {
	if tr, ok := t.(*core.Transpose); ok && core.IsSwapLastTwo(tr.Perm, len(tr.X.Type().Shape)) {
		return tr.X, true
	}
	return t, false
}

// compileMatMul compiles matmul x y (batched or not) into one gemmBatched call. When the
// products are large enough for the packed GEMM (smallProduct), an operand that is a
// transpose of its last two dimensions is read in place through the GEMM's transpose flag
// instead of being copied (packing reads either layout); smaller products keep the copy and
// run matmulK, which allocates nothing.
func (c *compiler) compileMatMul(t *core.MatMul, sc *scope) (*buf, *scope, error) {
	batch, m, k, n := matmulDims(t)
	x, ta := t.X, false
	y, tb := t.Y, false
	if m*k*n >= smallProduct() {
		x, ta = swapped(t.X)
		y, tb = swapped(t.Y)
	}
	return c.kernelOp(t, sc, []core.Term{x, y}, func(out *buf, xs []*buf) func() {
		return func() { gemmBatchedBuf(&c.e.ws, ta, tb, batch, m, n, k, xs[0], xs[1], out) }
	})
}

// gemmBatchedBuf is gemmBatched on float buffers.
func gemmBatchedBuf(ws *Workspace, ta, tb bool, batch, m, n, k int, x, y, out *buf) {
	switch out.dtype() {
	case core.Float64:
		gemmBatched(ws, ta, tb, batch, m, n, k, x.f64, y.f64, out.f64)
	case core.Float32:
		gemmBatched(ws, ta, tb, batch, m, n, k, x.f32, y.f32, out.f32)
	}
}
