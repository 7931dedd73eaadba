package kernel

import (
	"testing"

	"github.com/bulkad/bulkad/core"
)

// TestPlanViewsFollowSlices: a plan keeps the views it cut from a run's slices while the next
// run passes the same slices (so that a steady state allocates nothing), and cuts them again
// from any slice that differs — a new array, the same array at another length, another output
// — so every run reads its own inputs and writes its own output. Each run is checked against
// the formula computed here.
func TestPlanViewsFollowSlices(t *testing.T) {
	f64 := func(n ...int) core.Type { return vecType(core.Float64, n...) }
	b := NewPlanBuilder(2)
	x := b.Input(0, 0, f64(4))
	y := b.Input(1, 1, f64(4)) // elements 1…4 of input 1
	s := b.Step(Binary{Op: core.OpMul}, nil, f64(4), x, y)
	r := b.Step(Binary{Op: core.OpAdd}, nil, f64(4), s, x) // x·y + x
	p, offs, err := b.Build(core.Float64, []Slot{r, x})
	if err != nil {
		t.Fatal(err)
	}
	xa, ya := []float64{1, 2, 3, 4}, []float64{9, 1, 2, 3, 4}
	xb, yb := []float64{-1, 0.5, 8, 2}, []float64{0, 5, 6, 7, 8, 9} // a longer y: its elements 1…4 are read
	o1, o2 := make([]float64, p.OutLen()), make([]float64, p.OutLen())
	runs := []struct {
		what   string
		x, y   []float64
		out    []float64
		before func()
	}{
		{"first run", xa, ya, o1, nil},
		{"same slices", xa, ya, o1, nil},
		{"same slices, new elements", xa, ya, o1, func() { xa[0], ya[2] = 10, -3 }},
		{"new arrays", xb, yb, o1, nil},
		{"first arrays again", xa, ya, o1, nil},
		{"another output", xa, ya, o2, nil},
		{"y shorter over the same array", xa, yb[:5], o2, nil},
		{"the first output again", xb, yb, o1, nil},
	}
	for _, run := range runs {
		if run.before != nil {
			run.before()
		}
		if err := p.Run(run.out, []any{run.x, run.y}); err != nil {
			t.Fatal(err)
		}
		for i := range 4 {
			want := run.x[i]*run.y[1+i] + run.x[i]
			if got := run.out[offs[0]+i]; got != want {
				t.Errorf("%s: r[%d] = %v, want %v", run.what, i, got, want)
			}
			if got := run.out[offs[1]+i]; got != run.x[i] {
				t.Errorf("%s: x[%d] = %v, want %v", run.what, i, got, run.x[i])
			}
		}
	}
	// a steady state cuts no view again
	in := []any{xa, ya}
	if a := testing.AllocsPerRun(10, func() { _ = p.Run(o1, in) }); a != 0 {
		t.Errorf("a run on the slices of the last run allocated %v times, want 0", a)
	}
}
