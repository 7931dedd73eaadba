package kernel

import "testing"

// TestScatterMatmulDenseChoice: the sparse product walks y's points when S is sparse or B
// narrow, and materialises S for a GEMM otherwise — at the shapes its cost model was fitted
// on (the zoo's convnet-mnist, float32, one thread: walked 18 ms against 10.5 ms dense for
// the first, 2 ms against 7.7 ms for the third) and at an embedding's gradient.
func TestScatterMatmulDenseChoice(t *testing.T) {
	cases := []struct {
		name             string
		points, n, c, kk int
		dense            bool
	}{
		{"conv filter gradient after 2x2 max-pooling [64,288]", 313600, 9800, 64, 288, true},
		{"conv filter gradient after 2x2 max-pooling [128,576]", 156800, 2450, 128, 576, true},
		{"first conv's filter gradient [32,9] (B of 9 columns)", 313600, 39200, 32, 9, false},
		{"embedding gradient (100 tokens of a 50000-row table)", 100, 50000, 1, 128, false},
		{"raise's test case, B of 13 columns", 24, 32, 3, 13, false},
		{"raise's test case, B of 300 columns", 24, 32, 3, 300, true},
	}
	for _, c := range cases {
		if got := scatterMatmulDense(c.points, c.n, c.c, c.kk); got != c.dense {
			t.Errorf("%s: dense %v, want %v", c.name, got, c.dense)
		}
	}
}

// TestScratch: a Scratch hands out a cleared buffer and the same one again after release
// (no allocation in a steady state); while it is in use a second caller gets its own.
func TestScratch(t *testing.T) {
	s := &Scratch{}
	a, kept := scratchOf[float32](s, 100)
	if !kept || len(a) != 100 {
		t.Fatalf("first take: kept %v, %d elements", kept, len(a))
	}
	a[3] = 7
	b, keptB := scratchOf[float32](s, 100)
	if keptB || &b[0] == &a[0] {
		t.Fatal("a second caller got the buffer in use")
	}
	s.release()
	c, kept := scratchOf[float32](s, 50)
	if !kept || &c[0] != &a[0] || c[3] != 0 {
		t.Fatalf("after release: kept %v, same buffer %v, element 3 = %v (want cleared)", kept, &c[0] == &a[0], c[3])
	}
	s.release()
	if n := testing.AllocsPerRun(10, func() {
		if _, kept := scratchOf[float64](s, 64); kept {
			s.release()
		}
	}); n != 0 {
		t.Errorf("%v allocations a take once the buffer has grown, want 0", n)
	}
	if d, kept := scratchOf[float64](nil, 3); kept || len(d) != 3 {
		t.Error("a nil Scratch did not allocate")
	}
}
