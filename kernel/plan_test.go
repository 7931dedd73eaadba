package kernel

import (
	"math"
	"strings"
	"testing"

	"github.com/bulkad/bulkad/core"
)

func vecType(dt core.Dtype, n ...int) core.Type { return core.Type{Shape: core.Shape(n), Dtype: dt} }

// TestPlanChain runs a chain of element-wise kernels whose temporaries share buffers (each is
// dead once the next step has read it) and checks every packed value against the formula
// computed here in plain Go, at every run with new inputs.
func TestPlanChain(t *testing.T) {
	f64 := func(n ...int) core.Type { return vecType(core.Float64, n...) }
	b := NewPlanBuilder(2)
	x := b.Input(0, 0, f64(6))
	y := b.Input(1, 2, f64(2, 3)) // elements 2…7 of input 1
	yv := b.Alias(y, f64(6))
	s := b.Step(Binary{Op: core.OpAdd}, nil, f64(6), x, yv) // x + y
	e := b.Step(Unary{Op: core.OpExp}, nil, f64(6), s)      // exp(x + y)
	m := b.Step(Binary{Op: core.OpMul}, nil, f64(6), e, x)  // exp(x + y) * x
	n := b.Step(Unary{Op: core.OpNeg}, nil, f64(6), m)      // -(exp(x + y) * x)
	c := b.Const([]float64{1, 2, 3, 4, 5, 6}, f64(6))
	d := b.Step(Binary{Op: core.OpSub}, nil, f64(6), n, c)
	r := b.Alias(d, f64(3, 2))
	p, offs, err := b.Build(core.Float64, []Slot{r, x, d, c, n})
	if err != nil {
		t.Fatal(err)
	}
	// r and d share their elements (an alias); x and c are copied in.
	if want := []int{0, 6, 0, 12, 18}; !equalInts(offs, want) {
		t.Fatalf("offsets %v, want %v", offs, want)
	}
	if p.OutLen() != 24 {
		t.Fatalf("OutLen %d, want 24", p.OutLen())
	}
	// s, e and m are temporaries of one size: liveness lets at most two buffers hold them
	// (a step's output never shares the buffer of an operand it reads).
	if got := p.BufferElems()[core.Float64]; got > 12 {
		t.Errorf("plan buffers hold %d float64s, want at most 12 (reuse between dead temporaries)", got)
	}
	out := make([]float64, 24)
	for run := 0; run < 3; run++ {
		xs := make([]float64, 6)
		ys := make([]float64, 9)
		for i := range xs {
			xs[i] = float64(i)/4 - float64(run)
		}
		for i := range ys {
			ys[i] = float64(i*i)/20 + float64(run)
		}
		if err := p.Run(out, []any{xs, ys}); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 6; i++ {
			nv := -(core.OpExp.FloatFunc()(xs[i]+ys[2+i]) * xs[i])
			checks := []struct {
				what      string
				got, want float64
			}{{"r", out[i], nv - float64(i+1)}, {"x", out[6+i], xs[i]}, {"c", out[12+i], float64(i + 1)}, {"n", out[18+i], nv}}
			for _, c := range checks {
				if c.got != c.want {
					t.Errorf("run %d: %s[%d] = %v, want %v", run, c.what, i, c.got, c.want)
				}
			}
		}
	}
}

// TestPlanReuseKeepsLiveValues: a value read late (by the last step) must not share its
// buffer with the temporaries computed in between.
func TestPlanReuseKeepsLiveValues(t *testing.T) {
	f32 := func(n ...int) core.Type { return vecType(core.Float32, n...) }
	b := NewPlanBuilder(1)
	x := b.Input(0, 0, f32(4))
	a := b.Step(Unary{Op: core.OpNeg}, nil, f32(4), x) // read by the last step
	t1 := b.Step(Unary{Op: core.OpExp}, nil, f32(4), x)
	t2 := b.Step(Unary{Op: core.OpNeg}, nil, f32(4), t1)
	t3 := b.Step(Unary{Op: core.OpExp}, nil, f32(4), t2)
	r := b.Step(Binary{Op: core.OpAdd}, nil, f32(4), t3, a)
	p, _, err := b.Build(core.Float32, []Slot{r})
	if err != nil {
		t.Fatal(err)
	}
	xs := []float32{-1, 0, 0.5, 2}
	out := make([]float32, 4)
	if err := p.Run(out, []any{xs}); err != nil {
		t.Fatal(err)
	}
	for i, v := range xs {
		want := float32(math.Exp(-math.Exp(float64(v)))) + -v
		if d := math.Abs(float64(out[i] - want)); d > 1e-6 {
			t.Errorf("out[%d] = %v, want %v", i, out[i], want)
		}
	}
}

// TestPlanErrors: misuse is an error naming what is wrong, never a panic.
func TestPlanErrors(t *testing.T) {
	f64 := vecType(core.Float64, 3)
	cases := []struct {
		name  string
		build func() error
		run   func(p *Plan) error
		want  string
	}{
		{"bad input index", func() error {
			b := NewPlanBuilder(1)
			b.Input(2, 0, f64)
			_, _, err := b.Build(core.Float64, nil)
			return err
		}, nil, "input 2"},
		{"constant size", func() error {
			b := NewPlanBuilder(0)
			b.Const([]float64{1}, f64)
			_, _, err := b.Build(core.Float64, nil)
			return err
		}, nil, "constant"},
		{"alias size", func() error {
			b := NewPlanBuilder(1)
			b.Alias(b.Input(0, 0, f64), vecType(core.Float64, 4))
			_, _, err := b.Build(core.Float64, nil)
			return err
		}, nil, "alias"},
		{"packed dtype", func() error {
			b := NewPlanBuilder(1)
			x := b.Input(0, 0, vecType(core.Float32, 3))
			_, _, err := b.Build(core.Float64, []Slot{x})
			return err
		}, nil, "dtype"},
		{"unknown slot", func() error {
			b := NewPlanBuilder(1)
			_, _, err := b.Build(core.Float64, []Slot{7})
			return err
		}, nil, "slot 7"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.build()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one mentioning %q", err, c.want)
			}
		})
	}
	b := NewPlanBuilder(1)
	x := b.Input(0, 1, f64)
	y := b.Step(Unary{Op: core.OpNeg}, nil, f64, x)
	p, _, err := b.Build(core.Float64, []Slot{y})
	if err != nil {
		t.Fatal(err)
	}
	runs := []struct {
		name string
		out  any
		ins  []any
		want string
	}{
		{"short input", make([]float64, 3), []any{make([]float64, 3)}, "at least 4"},
		{"input dtype", make([]float64, 3), []any{make([]float32, 4)}, "input 0"},
		{"output size", make([]float64, 2), []any{make([]float64, 4)}, "output"},
		{"input count", make([]float64, 3), nil, "0 inputs"},
	}
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			err := p.Run(r.out, r.ins)
			if err == nil || !strings.Contains(err.Error(), r.want) {
				t.Fatalf("error %v, want one mentioning %q", err, r.want)
			}
		})
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestSliceDtype: the dtype of each flat slice type, InvalidDtype for anything else, and
// NewSlice's slices come back as their dtype.
func TestSliceDtype(t *testing.T) {
	cases := []struct {
		v    any
		want core.Dtype
	}{
		{[]float64{1}, core.Float64},
		{[]float32(nil), core.Float32},
		{[]int64{}, core.Int64},
		{[]bool{true}, core.Bool},
		{[]int{1}, core.InvalidDtype},
		{3.0, core.InvalidDtype},
		{nil, core.InvalidDtype},
	}
	for _, c := range cases {
		if got := SliceDtype(c.v); got != c.want {
			t.Errorf("SliceDtype(%T) = %v, want %v", c.v, got, c.want)
		}
	}
	for _, dt := range []core.Dtype{core.Float64, core.Float32, core.Int64, core.Bool} {
		if got := SliceDtype(NewSlice(dt, 2)); got != dt {
			t.Errorf("SliceDtype(NewSlice(%v, 2)) = %v", dt, got)
		}
	}
}

// TestPlanInPlace: a step whose kernel writes over its first input (an accumulating
// MatMul) takes over that input's buffer when no later step reads the input, and not
// otherwise; the values are those of the chain x + a·b + a·b computed here in plain Go.
func TestPlanInPlace(t *testing.T) {
	f64 := func(n ...int) core.Type { return vecType(core.Float64, n...) }
	for _, readLater := range []bool{false, true} {
		b := NewPlanBuilder(2)
		a := b.Input(0, 0, f64(2, 3))
		w := b.Input(1, 0, f64(3, 2))
		p0 := b.Step(MatMul{M: 2, K: 3, N: 2}, nil, f64(2, 2), a, w)                // a·w
		p1 := b.Step(MatMul{M: 2, K: 3, N: 2, Acc: true}, nil, f64(2, 2), p0, a, w) // p0 + a·w
		p2 := b.Step(MatMul{M: 2, K: 3, N: 2, Acc: true}, nil, f64(2, 2), p1, a, w) // p1 + a·w
		layout := []Slot{p2}
		if readLater {
			layout = append(layout, b.Step(Unary{Op: core.OpNeg}, nil, f64(2, 2), p0)) // p0 read after p1
		}
		p, _, err := b.Build(core.Float64, layout)
		if err != nil {
			t.Fatal(err)
		}
		shared := p.slots[p1].buf == p.slots[p0].buf
		if shared == readLater {
			t.Errorf("p0 read later %v: p1 shares p0's buffer: %v", readLater, shared)
		}
		as, ws := []float64{1, 2, 3, 4, 5, 6}, []float64{0.5, -1, 2, 0.25, -3, 1}
		out := make([]float64, p.OutLen())
		if err := p.Run(out, []any{as, ws}); err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			for j := range 2 {
				var s float64
				for k := range 3 {
					s += as[i*3+k] * ws[k*2+j]
				}
				if got, want := out[i*2+j], s+s+s; got != want {
					t.Errorf("p0 read later %v: element (%d, %d) = %v, want %v", readLater, i, j, got, want)
				}
				if readLater && out[4+i*2+j] != -s {
					t.Errorf("p0 read later: −p0 (%d, %d) = %v, want %v", i, j, out[4+i*2+j], -s)
				}
			}
		}
	}
}
