package lower

import (
	"github.com/bulkad/bulkad/core"
	"github.com/pkg/errors"
)

// MatMul is the matrix product op(a) × op(b) where op transposes when the flag is set:
// a : [m,k] (or [k,m] with transA), b : [k,n] (or [n,k] with transB).
func MatMul(a, b core.Term, transA, transB bool) (core.Term, error) {
	if err := checkTerm("matmul", a, b); err != nil {
		return nil, err
	}
	if a.Type().Shape.Rank() != 2 || b.Type().Shape.Rank() != 2 {
		return nil, errors.Errorf("lower: matmul: operand shapes %v and %v, want two matrices", a.Type().Shape, b.Type().Shape)
	}
	var bl core.Builder
	if transA {
		a = bl.Transpose([]int{1, 0}, a)
	}
	if transB {
		b = bl.Transpose([]int{1, 0}, b)
	}
	return result("matmul", &bl, bl.MatMul(a, b))
}

// MatVec is the matrix-vector product op(a) × v for a : [m,k] (or [k,m] with transA) and v : [k].
func MatVec(a, v core.Term, transA bool) (core.Term, error) {
	if err := checkTerm("matvec", a, v); err != nil {
		return nil, err
	}
	vs := v.Type().Shape
	if vs.Rank() != 1 || a.Type().Shape.Rank() != 2 {
		return nil, errors.Errorf("lower: matvec: operand shapes %v and %v, want a matrix and a vector", a.Type().Shape, vs)
	}
	var b core.Builder
	col := b.Reshape(core.Shape{vs[0], 1}, v)
	if transA {
		a = b.Transpose([]int{1, 0}, a)
	}
	p := b.MatMul(a, col)
	if p == nil {
		return nil, wrap("matvec", &b)
	}
	return result("matvec", &b, b.Reshape(core.Shape{p.Type().Shape[0]}, p))
}

// Dot is the inner product of two vectors of equal length.
func Dot(x, y core.Term) (core.Term, error) {
	if err := checkTerm("dot", x, y); err != nil {
		return nil, err
	}
	xs, ys := x.Type().Shape, y.Type().Shape
	if xs.Rank() != 1 || !xs.Equal(ys) {
		return nil, errors.Errorf("lower: dot: operand shapes %v and %v, want two vectors of equal length", xs, ys)
	}
	var b core.Builder
	p := b.MatMul(b.Reshape(core.Shape{1, xs[0]}, x), b.Reshape(core.Shape{ys[0], 1}, y))
	return result("dot", &b, b.Reshape(core.Shape{}, p))
}

// Outer is the outer product of vectors x : [m] and y : [n], a matrix [m,n].
func Outer(x, y core.Term) (core.Term, error) {
	if err := checkTerm("outer", x, y); err != nil {
		return nil, err
	}
	xs, ys := x.Type().Shape, y.Type().Shape
	if xs.Rank() != 1 || ys.Rank() != 1 {
		return nil, errors.Errorf("lower: outer: operand shapes %v and %v, want two vectors", xs, ys)
	}
	var b core.Builder
	return result("outer", &b, b.MatMul(b.Reshape(core.Shape{xs[0], 1}, x), b.Reshape(core.Shape{1, ys[0]}, y)))
}

// BatchedMatMul multiplies matching matrices of two stacks: a : batch ++ [m,k] and
// b : batch ++ [k,n] (the last two dimensions swapped with transA/transB) give batch ++ [m,n].
// It is core's batched matmul, with tr of the last two dimensions for the flags.
func BatchedMatMul(a, b core.Term, transA, transB bool) (core.Term, error) {
	if err := checkTerm("batched matmul", a, b); err != nil {
		return nil, err
	}
	as, bs := a.Type().Shape, b.Type().Shape
	if as.Rank() < 3 || as.Rank() != bs.Rank() || !as[:as.Rank()-2].Equal(bs[:bs.Rank()-2]) {
		return nil, errors.Errorf("lower: batched matmul: operand shapes %v and %v, want equal batch dimensions and matrices", as, bs)
	}
	r := as.Rank()
	k, k2 := as[r-1], bs[r-2]
	if transA {
		k = as[r-2]
	}
	if transB {
		k2 = bs[r-1]
	}
	if k != k2 {
		return nil, errors.Errorf("lower: batched matmul: operand shapes %v and %v do not match (inner dimensions %d and %d, transA=%v transB=%v)", as, bs, k, k2, transA, transB)
	}
	var bl core.Builder
	if transA {
		a = bl.Transpose(core.SwapLastTwo(r), a)
	}
	if transB {
		b = bl.Transpose(core.SwapLastTwo(r), b)
	}
	return result("batched matmul", &bl, bl.MatMul(a, b))
}

// Tensordot contracts a's axes aAxes with b's axes bAxes (pairwise); the result's dimensions
// are a's remaining dimensions followed by b's, each in order (NumPy's tensordot).
func Tensordot(a, b core.Term, aAxes, bAxes []int) (core.Term, error) {
	if err := checkTerm("tensordot", a, b); err != nil {
		return nil, err
	}
	as, bs := a.Type().Shape, b.Type().Shape
	if len(aAxes) != len(bAxes) {
		return nil, errors.Errorf("lower: tensordot: %d axes of %v against %d axes of %v", len(aAxes), as, len(bAxes), bs)
	}
	pa, err := moveToFront("tensordot", aAxes, as.Rank())
	if err != nil {
		return nil, err
	}
	pb, err := moveToFront("tensordot", bAxes, bs.Rank())
	if err != nil {
		return nil, err
	}
	kk := 1
	for i := range aAxes {
		if as[aAxes[i]] != bs[bAxes[i]] {
			return nil, errors.Errorf("lower: tensordot: axis %d of %v and axis %d of %v differ", aAxes[i], as, bAxes[i], bs)
		}
		kk *= as[aAxes[i]]
	}
	nc := len(aAxes)
	// a: free axes first, contracted last; b: contracted first, free last.
	permA := append(append([]int{}, pa[nc:]...), pa[:nc]...)
	var freeA, freeB core.Shape
	for _, p := range pa[nc:] {
		freeA = append(freeA, as[p])
	}
	for _, p := range pb[nc:] {
		freeB = append(freeB, bs[p])
	}
	var bl core.Builder
	a2 := bl.Reshape(core.Shape{freeA.Size(), kk}, transposeIfNeeded(&bl, permA, a))
	b2 := bl.Reshape(core.Shape{kk, freeB.Size()}, transposeIfNeeded(&bl, pb, b))
	out := append(append(core.Shape{}, freeA...), freeB...)
	return result("tensordot", &bl, reshapeIfNeeded(&bl, out, bl.MatMul(a2, b2)))
}
