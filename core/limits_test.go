package core_test

import (
	"strings"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/core/tensors"
	"gorgonia.org/tensor"
)

// TestArrayLimit checks that programs with arrays far beyond memory give errors naming the
// term and its size before anything is allocated, and that the process carries on: the
// same test then evaluates a small program.
func TestArrayLimit(t *testing.T) {
	t.Setenv(core.ArrayLimitEnv, "") // the default: a fraction of physical memory
	a := tensor.New(tensor.WithShape(2), tensor.WithBacking([]float64{1, 2}))
	cases := []struct {
		name, src string
		args      map[string]*tensor.Dense
		want      []string
	}{
		{"replicate 1e12 of a vector", `fn (a : [] f64) => replicate 1000000000000 a`,
			map[string]*tensor.Dense{"a": tensor.New(tensor.FromScalar(1.0))},
			[]string{"core: eval: term replicate 1000000000000 a : [1000000000000] f64", "7.3 TiB", "above the array limit", core.ArrayLimitEnv}},
		{"nested in a sum", `fn (a : [2] f64) => sumOuter (sumOuter (replicate 100000 (replicate 100000 a)))`,
			map[string]*tensor.Dense{"a": a},
			[]string{"replicate 100000 (replicate 100000 a) : [100000,100000,2] f64", "149.0 GiB"}},
		{"iota", `fn (a : [2] f64) => cast f64 (sumOuter (iota 10000000000000)) + a ! [0]`,
			map[string]*tensor.Dense{"a": a},
			[]string{"iota 10000000000000 : [10000000000000] i64", "72.8 TiB"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := core.ParseProgram(c.src)
			if err != nil {
				t.Fatal(err)
			}
			_, err = tensors.Eval(p, c.args)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
	// Still alive: a small program evaluates.
	p, err := core.ParseProgram(`fn (a : [2] f64) => sumOuter (replicate 3 a)`)
	if err != nil {
		t.Fatal(err)
	}
	v, err := tensors.Eval(p, map[string]*tensor.Dense{"a": a})
	if err != nil || v.Data().([]float64)[1] != 6 {
		t.Errorf("after the refusals: %v, %v", v, err)
	}
}

// TestArrayLimitEnv checks the environment variable: a small limit refuses a small array,
// "off" and 0 disable the check, a malformed value is an error.
func TestArrayLimitEnv(t *testing.T) {
	p, err := core.ParseProgram(`fn (a : [] f64) => replicate 1000 a`) // 8000 bytes
	if err != nil {
		t.Fatal(err)
	}
	args := map[string]*tensor.Dense{"a": tensor.New(tensor.FromScalar(2.0))}
	cases := []struct {
		env     string
		wantErr string
	}{
		{"7999", "above the array limit of 7.8 KiB"},
		{"8000", ""},
		{"7K", "above the array limit of 7.0 KiB"},
		{"1M", ""},
		{"off", ""},
		{"0", ""},
		{"lots", "core: limits: BULKAD_MAX_ARRAY_BYTES=\"lots\""},
		{"-5", "non-negative"},
	}
	for _, c := range cases {
		t.Setenv(core.ArrayLimitEnv, c.env)
		_, err := tensors.Eval(p, args)
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%s=%s: %v", core.ArrayLimitEnv, c.env, err)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%s=%s: error %v, want one containing %q", core.ArrayLimitEnv, c.env, err, c.wantErr)
		}
	}
}

// TestArrayLimitDefault checks that the default limit is positive and below 2^48 bytes.
func TestArrayLimitDefault(t *testing.T) {
	t.Setenv(core.ArrayLimitEnv, "")
	n, err := core.ArrayLimit()
	if err != nil || n <= 0 || n > core.MaxAddressableBytes {
		t.Errorf("ArrayLimit() = %d, %v", n, err)
	}
}

// TestTypeBytes checks byte sizes by dtype, empty arrays and saturation.
func TestTypeBytes(t *testing.T) {
	cases := []struct {
		t    core.Type
		want int64
	}{
		{core.Type{Shape: core.Shape{}, Dtype: core.Float64}, 8},
		{core.Type{Shape: core.Shape{3, 5}, Dtype: core.Float32}, 60},
		{core.Type{Shape: core.Shape{7}, Dtype: core.Bool}, 7},
		{core.Type{Shape: core.Shape{7, 0, 1 << 40}, Dtype: core.Int64}, 0},
		{core.Type{Shape: core.Shape{1 << 40, 1 << 40}, Dtype: core.Float64}, 1<<63 - 1},
	}
	for _, c := range cases {
		if got := core.TypeBytes(c.t); got != c.want {
			t.Errorf("TypeBytes(%v) = %d, want %d", c.t, got, c.want)
		}
	}
}

// TestParseLimits checks that the parser refuses unaddressable types and overlong operator
// chains with errors (a flat sum of 600,000 terms used to overflow the stack), and accepts
// line comments.
func TestParseLimits(t *testing.T) {
	cases := []struct {
		name, src, want string
	}{
		{"huge parameter", `fn (a : [100000000,100000000] f64) => a`, "more than can be addressed"},
		{"huge result", `fn (a : [] f64) => replicate 100000000 (replicate 100000000 a)`, "more than can be addressed"},
		{"flat sum of 600000 terms", "fn (x : [] f64) => " + strings.Repeat("x + ", 600000) + "x", "nested deeper than 100000 levels"},
	}
	for _, c := range cases {
		_, err := core.ParseProgram(c.src)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
	p, err := core.ParseProgram("-- a comment line\nfn (t : [9] f64) => -- another\n  scatter [6] t (\\[i] -> [quot i 2])      -- on [1..9]: [3, 7, 11, 15, 9, 0]\n")
	if err != nil {
		t.Fatal(err)
	}
	v, err := tensors.Eval(p, map[string]*tensor.Dense{"t": tensor.New(tensor.WithShape(9), tensor.WithBacking([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9}))})
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{3, 7, 11, 15, 9, 0} // (1+2, 3+4, 5+6, 7+8, 9, nothing)
	for i, w := range want {
		if got := v.Data().([]float64)[i]; got != w {
			t.Errorf("scatter[%d] = %v, want %v", i, got, w)
		}
	}
}
