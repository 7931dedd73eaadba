package accel

import (
	"fmt"
	"math"
	"math/rand"
	"os"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestUseBLASGemm compares the installed Dgemm and Sgemm with gonum's on padded strided
// operands, all transposes, with and without alpha/beta (the latter delegated).
func TestUseBLASGemm(t *testing.T) {
	t.Run("f64", func(t *testing.T) {
		checkUseBLAS(t, 1e-12, gemmBLAS{}.Dgemm, gonum.Implementation{}.Dgemm)
	})
	t.Run("f32", func(t *testing.T) {
		checkUseBLAS(t, 1e-5, gemmBLAS{}.Sgemm, gonum.Implementation{}.Sgemm)
	})
}

// TestSystemBLASGemm does the same with the system's BLAS (OpenBLAS or BLIS through purego)
// for every call; skipped when none is installed, unless BULKAD_SYSTEM_BLAS_REQUIRED is set
// (.ci/run installs libopenblas0-pthread and sets it).
func TestSystemBLASGemm(t *testing.T) {
	sys, err := loadSystemGEMM()
	if err != nil {
		if os.Getenv("BULKAD_SYSTEM_BLAS_REQUIRED") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	t.Logf("system BLAS: %s", sys.name)
	t.Run("f64", func(t *testing.T) {
		checkUseBLAS(t, 1e-12, gemmBLAS{sys: sys}.Dgemm, gonum.Implementation{}.Dgemm)
	})
	t.Run("f32", func(t *testing.T) {
		checkUseBLAS(t, 1e-5, gemmBLAS{sys: sys}.Sgemm, gonum.Implementation{}.Sgemm)
	})
}

type gemmFunc[T float32 | float64] func(tA, tB blas.Transpose, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int)

func checkUseBLAS[T float32 | float64](t *testing.T, tol float64, got, ref gemmFunc[T]) {
	rng := rand.New(rand.NewSource(1))
	tr := []blas.Transpose{blas.NoTrans, blas.Trans}
	for _, s := range [][3]int{{1, 1, 1}, {7, 129, 3}, {129, 7, 200}, {128, 10, 512}} {
		for _, tA := range tr {
			for _, tB := range tr {
				for _, ab := range [][2]T{{1, 0}, {2, 0.5}} {
					m, n, k := s[0], s[1], s[2]
					ar, ac, br, bc := m, k, k, n
					if tA == blas.Trans {
						ar, ac = k, m
					}
					if tB == blas.Trans {
						br, bc = n, k
					}
					lda, ldb, ldc := ac+2, bc+1, n+3
					a, b := make([]T, ar*lda), make([]T, br*ldb)
					c, want := make([]T, m*ldc), make([]T, m*ldc)
					for i := range a {
						a[i] = T(rng.NormFloat64())
					}
					for i := range b {
						b[i] = T(rng.NormFloat64())
					}
					for i := range c {
						c[i] = T(rng.NormFloat64())
						want[i] = c[i]
					}
					got(tA, tB, m, n, k, ab[0], a, lda, b, ldb, ab[1], c, ldc)
					ref(tA, tB, m, n, k, ab[0], a, lda, b, ldb, ab[1], want, ldc)
					for i := range c {
						if d := math.Abs(float64(c[i] - want[i])); d > tol*(1+math.Abs(float64(want[i])))*float64(k) {
							t.Fatalf("%v %v %v alpha,beta %v: c[%d] = %v, gonum %v", s, tA, tB, ab, i, c[i], want[i])
						}
					}
				}
			}
		}
	}
}

// ExampleUseBLAS makes Gorgonia's own matrix products run on bulkad's GEMM.
func ExampleUseBLAS() {
	UseBLAS()
	g := gorgonia.NewGraph()
	x := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(2, 3), gorgonia.WithName("x"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(2, 3), tensor.WithBacking([]float64{1, 2, 3, 4, 5, 6}))))
	w := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(3, 2), gorgonia.WithName("w"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(3, 2), tensor.WithBacking([]float64{1, 0, 0, 1, 1, 1}))))
	y := gorgonia.Must(gorgonia.Mul(x, w))
	m := gorgonia.NewTapeMachine(g)
	defer m.Close()
	if err := m.RunAll(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(y.Value().Data())
	// Output: [4 5 10 11]
}
