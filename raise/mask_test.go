package raise

import (
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/bulkad/bulkad/core"
	kern "github.com/bulkad/bulkad/kernel"
	"gorgonia.org/tensor"
)

// TestMaskOnePass: a comparison cast to its operands' float dtype (a ReLU's mask) plans as one
// fused step, not a comparison writing bools and a cast, with core.Eval's bits where the
// operands are equal, NaN, infinite or zeros of either sign; a cast to another dtype, or an
// operand read across its rows, keeps the two steps.
func TestMaskOnePass(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		steps     int // steps of the plan
		fused     bool
	}{
		{"x >= z", "cast %s (x >= z)", 1, true},
		{"x < a broadcast scalar", "cast %s (x < gather [32,16,256] s (\\[i, j, k] -> [0]))", 1, true},
		{"a transposed operand (the fused kernel reads rows)", "cast %s (tr [0,2,1] y > z)", 2, false},
		{"to the other dtype", "cast %o (x >= z)", 2, false},
	} {
		for _, dt := range []string{"f64", "f32"} {
			other := map[string]string{"f64": "f32", "f32": "f64"}[dt]
			src := strings.ReplaceAll(strings.ReplaceAll(tc.src, "%s", dt), "%o", other)
			p := parseProgram(t, strings.ReplaceAll("x : [32,16,256] %s, y : [32,256,16] %s, z : [32,16,256] %s, s : [1] %s", "%s", dt), src)
			args := randArgs(rand.New(rand.NewSource(9)), p)
			for i, v := range []float64{math.NaN(), 0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1)} {
				setElem(args["x"], 7*i, v)
				setElem(args["z"], 7*i+1, v)
				setElem(args["y"], 7*i+2, v)
				setElem(args["x"], 7*i+3, v)
				setElem(args["z"], 7*i+3, v) // equal operands (NaN: unequal)
			}
			setElem(args["x"], 100, 0)
			setElem(args["z"], 100, math.Copysign(0, -1)) // +0 ≥ −0
			got, want, plans := coarseRun(t, p, args)
			if d := bitsEqual(got, want); d != "" {
				t.Errorf("%s %s: %s", tc.name, dt, d)
			}
			steps := 0
			for _, kp := range plans {
				steps += kp.Steps()
				for i := 0; i < kp.Steps(); i++ {
					if _, ok := kp.StepKernel(i).(*kern.Fused); ok != tc.fused {
						t.Errorf("%s %s: step %d is %T", tc.name, dt, i, kp.StepKernel(i))
					}
				}
			}
			if steps != tc.steps {
				t.Errorf("%s %s: %d steps, want %d", tc.name, dt, steps, tc.steps)
			}
		}
	}
}

// TestGatherOfMask: a ReLU's mask read at an index array (a max-pool's gradient reads it at
// the argmax) plans as the gather of the mask's operand and a comparison of the gathered
// elements — no step writes the whole mask — with core.Eval's bits, NaN and signed zeros at
// the gathered positions included; a mask against an array (not one broadcast value) is
// gathered whole as before.
func TestGatherOfMask(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		big       bool // a step writes an array of the mask's full size (4·64·64)
	}{
		{"x >= a broadcast zero", "gather [4,64] (cast %s (x >= gather [4,64,64] s (\\[i, j, k] -> [0]))) (\\[i, j] -> [i, j, index am [i, j]])", false},
		{"x > z", "gather [4,64] (cast %s (x > z)) (\\[i, j] -> [i, j, index am [i, j]])", true},
	} {
		for _, dt := range []string{"f64", "f32"} {
			src := strings.ReplaceAll(tc.src, "%s", dt)
			p := parseProgram(t, strings.ReplaceAll("x : [4,64,64] %s, z : [4,64,64] %s, s : [1] %s, am : [4,64] i64", "%s", dt), src)
			r := rand.New(rand.NewSource(5))
			args := randArgs(r, p)
			am := make([]int64, 4*64)
			for i := range am {
				am[i] = int64(r.Intn(64))
			}
			args["am"] = tensor.New(tensor.WithShape(4, 64), tensor.WithBacking(am))
			setElem(args["s"], 0, 0)
			for i, v := range []float64{math.NaN(), 0, math.Copysign(0, -1), math.Inf(-1)} {
				setElem(args["x"], i*64+int(am[i]), v) // gathered positions (row 0, column i)
			}
			got, want, plans := coarseRun(t, p, args)
			if d := bitsEqual(got, want); d != "" {
				t.Errorf("%s %s: %s", tc.name, dt, d)
			}
			big := false
			for _, kp := range plans {
				for i := 0; i < kp.Steps(); i++ {
					if kp.StepTerm(i).Type().Shape.Size() == 4*64*64 {
						big = true
					}
				}
			}
			if big != tc.big {
				t.Errorf("%s %s: a step writes the whole mask: %v, want %v", tc.name, dt, big, tc.big)
			}
		}
	}
}

// TestGatherOfTransposeWritten: a gather of a transpose reads the transpose's source through
// a permuted index function, unless a coarse plan writes the transpose anyway (it is planned
// already): then the gather reads that array in its order (a permuted read of the MNIST
// convnet's channels-last convolution output took 2.3 ms more than the contiguous one).
func TestGatherOfTransposeWritten(t *testing.T) {
	p, err := core.ParseProgram("fn (y : [4,64,64] f64, am : [4,64] i64) => gather [4,64] (tr [0,2,1] y) (\\[i, j] -> [i, j, index am [i, j]])")
	if err != nil {
		t.Fatal(err)
	}
	g := p.Body.(*core.Gather)
	for _, tc := range []struct {
		coarse, written, rewrite bool
	}{{true, false, true}, {true, true, false}, {false, true, true}} {
		pl := &plan{coarse: tc.coarse, memo: map[core.Term]ref{}}
		if tc.written {
			pl.memo[g.X] = ref{}
		}
		r, ok := pl.gatherOfTranspose(g)
		if ok != tc.rewrite {
			t.Errorf("coarse %v, transpose written %v: rewritten %v, want %v", tc.coarse, tc.written, ok, tc.rewrite)
			continue
		}
		if ok {
			if _, isTr := r.(*core.Gather).X.(*core.Transpose); isTr {
				t.Errorf("coarse %v: the rewritten gather still reads the transpose", tc.coarse)
			}
		}
	}
}
