package kernel

import (
	"math"
	"math/rand"
	"runtime"
	"testing"
)

// Split runs of the looked-up kernels of a max-pooling gradient: the sparse filter-gradient
// product (ScatterMatMul's walk, split along the output channel) and the gathers at the
// argmax positions (gatherLookup split along the domain, gatherLookupClip over ranges of
// points). Each is checked against its definition computed here and, split with GOMAXPROCS
// 2 and 3, against the serial run bit for bit.

// smCase is a ScatterMatMul with random inputs: y over Dom, B [N,K], the looked-up values.
type smCase struct {
	name string
	k    *ScatterMatMul
	lk   []int64
}

func scatterMatmulCases(r *rand.Rand) []smCase {
	pool := make([]int64, 32*32*14*14)
	for i := range pool {
		pool[i] = r.Int63n(4)
	}
	return []smCase{
		// a 2×2 max-pooling's gradient into a 3×3 filter's gradient [32 channels, 9 taps]
		{"pool, column by channel", &ScatterMatMul{Dom: []int{32, 32, 14, 14},
			RowP: &Lookup{St: []int{784, 0, 56, 2}, Table: []int{0, 1, 28, 29}},
			ColP: &Lookup{St: []int{0, 1, 0, 0}}, N: 25088, C: 32, K: 9, HasTable: true}, pool},
		// the column along the innermost dimension (the pairs walk), rows affine in all three
		{"column innermost", &ScatterMatMul{Dom: []int{96, 70, 40},
			RowP: &Lookup{St: []int{2800, 40, 1}, Base: 2}, ColP: &Lookup{St: []int{0, 0, 1}},
			N: 96*70*40 + 2, C: 40, K: 8}, nil},
		// the column along two dimensions: no split (colDim refuses), same result
		{"column along two dimensions", &ScatterMatMul{Dom: []int{6, 5, 2000},
			RowP: &Lookup{St: []int{0, 0, 1}}, ColP: &Lookup{St: []int{5, 1, 0}},
			N: 2000, C: 30, K: 12}, nil},
	}
}

// scatterMatmulDef is out[c,j] = Σ_p y[p]·B[row(p), j] over the domain in float64.
func scatterMatmulDef(k *ScatterMatMul, y, b []float64, lk []int64) []float64 {
	out := make([]float64, k.C*k.K)
	idx := make([]int, len(k.Dom))
	for p := range y {
		row, col := k.RowP.Base, k.ColP.Base
		for j, i := range idx {
			row += i * k.RowP.St[j]
			col += i * k.ColP.St[j]
		}
		if k.RowP.Table != nil {
			row += k.RowP.Table[lk[p]]
		}
		for j := range k.K {
			out[col*k.K+j] += y[p] * b[row*k.K+j]
		}
		for v := len(idx) - 1; v >= 0; v-- {
			if idx[v]++; idx[v] < k.Dom[v] {
				break
			}
			idx[v] = 0
		}
	}
	return out
}

func TestScatterMatmulSplit(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	for _, c := range scatterMatmulCases(r) {
		k := c.k
		points := 1
		for _, n := range k.Dom {
			points *= n
		}
		if scatterMatmulDense(points, k.N, k.C, k.K) {
			t.Fatalf("%s: the case takes the dense path, not the walk", c.name)
		}
		d, split := k.colDim()
		if want := c.name != "column along two dimensions"; split != want {
			t.Fatalf("%s: colDim split %v, want %v", c.name, split, want)
		}
		if split && costOf(points*k.K, wFused) < parallelMin || split && k.Dom[d] < 3 {
			t.Fatalf("%s: too small to be split", c.name)
		}
		// y with NaNs and infinities, B finite (an infinite B takes the dense path)
		y, b := splitData(points, r.Int63()), finiteData(r, k.N*k.K)
		ins := []any{y, b}
		if k.HasTable {
			ins = append(ins, c.lk)
		}
		got := checkSplit(t, c.name, func() any {
			out := make([]float64, k.C*k.K)
			if err := k.Run(out, ins); err != nil {
				t.Fatal(err)
			}
			return out
		}).([]float64)
		want := scatterMatmulDef(k, y, b, c.lk)
		for i := range want {
			if math.IsNaN(got[i]) != math.IsNaN(want[i]) || math.Abs(got[i]-want[i]) > 1e-9*(1+math.Abs(want[i])) {
				t.Fatalf("%s: element %d = %v, definition %v", c.name, i, got[i], want[i])
			}
		}
		// float32: split against serial
		y32, b32 := toF32(y), toF32(b)
		ins32 := []any{y32, b32}
		if k.HasTable {
			ins32 = append(ins32, c.lk)
		}
		checkSplit(t, c.name+" float32", func() any {
			out := make([]float32, k.C*k.K)
			if err := k.Run(out, ins32); err != nil {
				t.Fatal(err)
			}
			return out
		})
	}
}

// finiteData is n multiples of 1/8 in [-2, 2).
func finiteData(r *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(r.Intn(32)-16) / 8
	}
	return v
}

func TestGatherLookupSplit(t *testing.T) {
	r := rand.New(rand.NewSource(9))
	// the gradient's gather at a 2×2 max-pooling's argmax: [32,32,14,14] from [32,32,28,28]
	dom, st, table := []int{32, 32, 14, 14}, []int{25088, 784, 56, 2}, []int{0, 1, 28, 29}
	lk := make([]int64, 32*32*14*14)
	for i := range lk {
		lk[i] = r.Int63n(4)
	}
	x := splitData(32*32*28*28*2, r.Int63())
	for _, rest := range []int{1, 2} {
		got := checkSplit(t, "gatherLookup", func() any {
			out := make([]float64, len(lk)*rest)
			gatherLookup(out, x, lk, table, dom, st, 0, rest)
			return out
		}).([]float64)
		p := 0
		for b := range 32 {
			for c := range 32 {
				for i := range 14 {
					for j := range 14 {
						off := b*25088 + c*784 + i*56 + j*2 + table[lk[p]]
						for q := range rest {
							if g, w := got[p*rest+q], x[off*rest+q]; math.Float64bits(g) != math.Float64bits(w) {
								t.Fatalf("rest %d: point %d element %d = %v, want %v", rest, p, q, g, w)
							}
						}
						p++
					}
				}
			}
		}
	}
	// a clipped lookup: [64, 3000] reading x[i, j − 1 + a] (a in 0..2), zero outside
	cdom := []int{64, 3000}
	dims := []LookupDim{
		{Var: 0, Coef: 1, Res: []int64{0, 0, 0}, Lim: 64, Stride: 3000},
		{Var: 1, Coef: 1, Const: -1, Res: []int64{0, 1, 2}, Lim: 3000, Stride: 1},
	}
	clk := make([]int64, 64*3000)
	for i := range clk {
		clk[i] = r.Int63n(3)
	}
	if workers(len(clk), costOf(len(clk), wStrided)) <= 1 && runtime.GOMAXPROCS(0) > 1 {
		t.Fatal("the clipped case is too small to be split")
	}
	cx := splitData(64*3000, r.Int63())
	got := checkSplit(t, "gatherLookupClip", func() any {
		out := splitData(len(clk), 1) // not zero: every element must be written
		gatherLookupClip(out, cx, clk, cdom, dims, 1)
		return out
	}).([]float64)
	for p, a := range clk {
		i, j := p/3000, p%3000+int(a)-1
		want := 0.0
		if j >= 0 && j < 3000 {
			want = cx[i*3000+j]
		}
		if math.Float64bits(got[p]) != math.Float64bits(want) {
			t.Fatalf("clipped: point %d = %v, want %v", p, got[p], want)
		}
	}
}
