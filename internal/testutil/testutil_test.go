package testutil

import (
	"math"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"gorgonia.org/tensor"
)

func TestFloats(t *testing.T) {
	cases := []struct {
		name string
		data any
		want []float64
		ok   bool
	}{
		{"f64", []float64{1.5, -2}, []float64{1.5, -2}, true},
		{"f32", []float32{0.25, 3}, []float64{0.25, 3}, true},
		{"i64", []int64{-7, 1 << 40}, []float64{-7, 1 << 40}, true},
		{"int", []int{4}, []float64{4}, true},
		{"bool", []bool{true, false}, []float64{1, 0}, true},
		{"f64 scalar", 2.5, []float64{2.5}, true},
		{"f32 scalar", float32(0.5), []float64{0.5}, true},
		{"i64 scalar", int64(9), []float64{9}, true},
		{"int scalar", 3, []float64{3}, true},
		{"true", true, []float64{1}, true},
		{"false", false, []float64{0}, true},
		{"string", "x", nil, false},
		{"complex", []complex128{1}, nil, false},
	}
	for _, c := range cases {
		got, ok := Floats(c.data)
		if ok != c.ok || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: Floats = %v, %v; want %v, %v", c.name, got, ok, c.want, c.ok)
		}
	}
	// the result is a copy
	src := []float64{1, 2}
	got, _ := Floats(src)
	got[0] = 9
	if src[0] != 1 {
		t.Errorf("Floats shares its argument's backing array")
	}
}

func TestDenseFloats(t *testing.T) {
	cases := []struct {
		name  string
		d     *tensor.Dense
		want  []float64
		error bool
	}{
		{"matrix", tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float32{1, 2, 3, 4})), []float64{1, 2, 3, 4}, false},
		{"scalar", tensor.New(tensor.FromScalar(int64(5))), []float64{5}, false},
		{"empty", tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(0, 3)), []float64{}, false},
		{"uint8", tensor.New(tensor.WithShape(1), tensor.WithBacking([]uint8{1})), nil, true},
	}
	for _, c := range cases {
		got, err := DenseFloats(c.d)
		if (err != nil) != c.error || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: DenseFloats = %v, %v; want %v (error %v)", c.name, got, err, c.want, c.error)
		}
	}
}

func TestRandDense(t *testing.T) {
	for _, f32 := range []bool{false, true} {
		d := RandDense(rand.New(rand.NewSource(1)), f32, 3, 4, 5)
		if !reflect.DeepEqual([]int(d.Shape()), []int{3, 4, 5}) {
			t.Fatalf("f32=%v: shape %v, want [3 4 5]", f32, d.Shape())
		}
		want := tensor.Float64
		if f32 {
			want = tensor.Float32
		}
		if d.Dtype() != want {
			t.Fatalf("f32=%v: dtype %v, want %v", f32, d.Dtype(), want)
		}
		// the draws are rand's NormFloat64 in order (rounded for float32)
		r := rand.New(rand.NewSource(1))
		got, _ := DenseFloats(d)
		mean := 0.0
		for i, g := range got {
			w := r.NormFloat64()
			if f32 {
				w = float64(float32(w))
			}
			if g != w {
				t.Fatalf("f32=%v: element %d = %v, want %v", f32, i, g, w)
			}
			mean += g / float64(len(got))
		}
		if math.Abs(mean) > 0.5 {
			t.Errorf("f32=%v: mean %v of 60 standard normal draws", f32, mean)
		}
	}
}

func TestScaledDiff(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	cases := []struct {
		name        string
		got, want   []float64
		tol, floor  float64
		fail        bool
		mentionsIdx string
	}{
		{"equal", []float64{1, 2}, []float64{1, 2}, 0, 1, false, ""},
		{"exact when tol 0", []float64{1, 2 + 1e-15}, []float64{1, 2}, 0, 1, true, "element 1"},
		// scale 10, floor 1: bound 1e-3·11 = 0.011
		{"inside scaled bound", []float64{0.01, 10}, []float64{0, 10}, 1e-3, 1, false, ""},
		{"outside scaled bound", []float64{0.012, 10}, []float64{0, 10}, 1e-3, 1, true, "element 0"},
		// floor 1e-300, scale 1: bound 1e-3
		{"relative floor", []float64{1.002}, []float64{1}, 1e-3, 1e-300, true, "element 0"},
		{"nan matches nan", []float64{nan, 1}, []float64{nan, 1}, 0, 1, false, ""},
		{"nan vs number", []float64{1}, []float64{nan}, 1, 1, true, "element 0"},
		{"number vs nan", []float64{nan}, []float64{1}, 1, 1, true, "element 0"},
		{"inf matches inf", []float64{inf}, []float64{inf}, 0, 1, false, ""},
		{"finite vs inf", []float64{1e300}, []float64{inf}, 1, 1, true, "element 0"},
		{"inf vs -inf", []float64{inf}, []float64{-inf}, 1, 1, true, "element 0"},
		{"lengths", []float64{1}, []float64{1, 2}, 1, 1, true, "1 elements, want 2"},
	}
	for _, c := range cases {
		got := ScaledDiff(c.got, c.want, c.tol, c.floor)
		if (got != "") != c.fail || !strings.Contains(got, c.mentionsIdx) {
			t.Errorf("%s: ScaledDiff = %q, want failure %v mentioning %q", c.name, got, c.fail, c.mentionsIdx)
		}
	}
}

func TestSortedKeys(t *testing.T) {
	cases := []struct {
		m    map[string]int
		want []string
	}{
		{map[string]int{}, []string{}},
		{map[string]int{"b": 1, "a": 2, "c": 0}, []string{"a", "b", "c"}},
	}
	for _, c := range cases {
		if got := SortedKeys(c.m); !reflect.DeepEqual(got, c.want) {
			t.Errorf("SortedKeys(%v) = %v, want %v", c.m, got, c.want)
		}
	}
}

func TestCentralDiff(t *testing.T) {
	// f = x0³ + 2·x1: the central difference of x³ is 3x² + h² (hand expansion), of 2x is 2
	cases := []struct {
		name string
		j    int
		h    float64
		want float64
	}{
		{"cubic", 0, 0.5, 3*1.5*1.5 + 0.25},
		{"linear", 1, 0.25, 2},
	}
	for _, c := range cases {
		data := []float64{1.5, -4}
		f := func() float64 { return data[0]*data[0]*data[0] + 2*data[1] }
		if got := CentralDiff(data, c.j, c.h, f); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: CentralDiff = %v, want %v", c.name, got, c.want)
		}
		if data[0] != 1.5 || data[1] != -4 {
			t.Errorf("%s: data %v not restored", c.name, data)
		}
	}
}
