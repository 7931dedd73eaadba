package lower

import (
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/bulkad/bulkad/ad"
	"github.com/bulkad/bulkad/core"
)

// Recurrent against a direct loop over time, batch and hidden units written here from the
// equations of the ONNX RNN, GRU and LSTM operators (gate orders z, r, h and i, o, f, c;
// clip applied to the input of every activation), and its gradients with respect to every
// operand against central differences of that loop.

// absent marks an optional operand that is not given.
var absent = arr{}

func (a arr) given() bool { return a.v != nil }

func actFn(name string, clip float64) func(float64) float64 {
	return func(x float64) float64 {
		if clip > 0 {
			x = math.Max(-clip, math.Min(clip, x))
		}
		switch name {
		case "sigmoid":
			return 1 / (1 + math.Exp(-x))
		case "tanh":
			return math.Tanh(x)
		}
		return math.Max(x, 0)
	}
}

// loopRecurrent computes the hidden states (and for an LSTM the final cell state) of rc.
// ops: x, w, r, wb, rb, h0, c0, p (absent ones have no values).
func loopRecurrent(rc Recurrence, ops []arr) arr {
	x, w, r, wb, rb, h0, c0, p := ops[0], ops[1], ops[2], ops[3], ops[4], ops[5], ops[6], ops[7]
	T, B, in := x.sh[0], x.sh[1], x.sh[2]
	G := map[CellKind]int{CellRNN: 1, CellGRU: 3, CellLSTM: 4}[rc.Cell]
	H := w.sh[0] / G
	acts := rc.Activations
	if acts == nil {
		acts = map[CellKind][]string{CellRNN: {"tanh"}, CellGRU: {"sigmoid", "tanh"}, CellLSTM: {"sigmoid", "tanh", "tanh"}}[rc.Cell]
	}
	f := actFn(acts[0], rc.Clip)
	var g, hf func(float64) float64
	if len(acts) > 1 {
		g = actFn(acts[1], rc.Clip)
	}
	if len(acts) > 2 {
		hf = actFn(acts[2], rc.Clip)
	}
	opt := func(a arr, i int) float64 {
		if !a.given() {
			return 0
		}
		return a.v[i]
	}
	hPrev := make([]float64, B*H)
	cPrev := make([]float64, B*H)
	for i := range hPrev {
		hPrev[i], cPrev[i] = opt(h0, i), opt(c0, i)
	}
	// xin(t, b, k, j): row k·H + j of W times x[t, b] plus Wb; rec(hs, b, k, j): of R times hs[b]
	xin := func(t, bb, k, j int) float64 {
		s := opt(wb, k*H+j)
		for m := 0; m < in; m++ {
			s += x.at(t, bb, m) * w.at(k*H+j, m)
		}
		return s
	}
	rec := func(hs []float64, bb, k, j int) float64 {
		s := 0.0
		for m := 0; m < H; m++ {
			s += hs[bb*H+m] * r.at(k*H+j, m)
		}
		return s
	}
	states := make([][]float64, T)
	for step := 0; step < T; step++ {
		t := step
		if rc.Reverse {
			t = T - 1 - step
		}
		hNext := make([]float64, B*H)
		cNext := make([]float64, B*H)
		for bb := 0; bb < B; bb++ {
			for j := 0; j < H; j++ {
				q := bb*H + j
				switch rc.Cell {
				case CellRNN:
					hNext[q] = f(xin(t, bb, 0, j) + rec(hPrev, bb, 0, j) + opt(rb, j))
				case CellGRU:
					z := f(xin(t, bb, 0, j) + rec(hPrev, bb, 0, j) + opt(rb, j))
					rr := func(jj int) float64 { return f(xin(t, bb, 1, jj) + rec(hPrev, bb, 1, jj) + opt(rb, H+jj)) }
					var hh float64
					if rc.LinearBeforeReset {
						hh = g(xin(t, bb, 2, j) + rr(j)*(rec(hPrev, bb, 2, j)+opt(rb, 2*H+j)))
					} else {
						// (r ⊙ H)·Rhᵀ: the reset gate of every hidden unit m
						s := 0.0
						for m := 0; m < H; m++ {
							s += rr(m) * hPrev[bb*H+m] * r.at(2*H+j, m)
						}
						hh = g(xin(t, bb, 2, j) + s + opt(rb, 2*H+j))
					}
					hNext[q] = (1-z)*hh + z*hPrev[q]
				case CellLSTM:
					pre := func(k int) float64 { return xin(t, bb, k, j) + rec(hPrev, bb, k, j) + opt(rb, k*H+j) }
					i := f(pre(0) + opt(p, j)*cPrev[q])
					ff := f(pre(2) + opt(p, 2*H+j)*cPrev[q])
					c := g(pre(3))
					cNext[q] = ff*cPrev[q] + i*c
					o := f(pre(1) + opt(p, H+j)*cNext[q])
					hNext[q] = o * hf(cNext[q])
				}
			}
		}
		states[t] = hNext
		hPrev, cPrev = hNext, cNext
	}
	rows := T
	if rc.Cell == CellLSTM {
		rows++
		states = append(states, cPrev)
	}
	out := zeros(rows, B, H)
	for t, s := range states {
		copy(out.v[t*B*H:], s)
	}
	return out
}

type rnnCase struct {
	name              string
	rc                Recurrence
	T, B, in, H       int
	wb, rb, h0, c0, p bool
}

func rnnCases() []rnnCase {
	return []rnnCase{
		{"rnn tanh, biases, h0", Recurrence{Cell: CellRNN}, 4, 2, 3, 5, true, true, true, false, false},
		{"rnn relu reverse, no biases", Recurrence{Cell: CellRNN, Reverse: true, Activations: []string{"relu"}}, 3, 2, 3, 4, false, false, false, false, false},
		{"rnn sigmoid, clip", Recurrence{Cell: CellRNN, Activations: []string{"sigmoid"}, Clip: 0.7}, 3, 1, 2, 3, true, false, true, false, false},
		{"gru linear before reset, h0", Recurrence{Cell: CellGRU, LinearBeforeReset: true}, 4, 2, 3, 5, true, true, true, false, false},
		{"gru linear before reset, no h0, reverse", Recurrence{Cell: CellGRU, LinearBeforeReset: true, Reverse: true}, 3, 2, 3, 4, true, true, false, false, false},
		{"gru reset before the product, clip", Recurrence{Cell: CellGRU, Clip: 0.9}, 3, 2, 3, 4, true, true, true, false, false},
		{"gru reset before the product, no h0, no R bias", Recurrence{Cell: CellGRU}, 3, 1, 2, 3, true, false, false, false, false},
		{"lstm, biases, h0, c0", Recurrence{Cell: CellLSTM}, 4, 2, 3, 5, true, true, true, true, false},
		{"lstm reverse, no states", Recurrence{Cell: CellLSTM, Reverse: true}, 3, 2, 3, 4, true, true, false, false, false},
		{"lstm peepholes, clip, c0 only", Recurrence{Cell: CellLSTM, Clip: 0.8}, 3, 2, 2, 3, true, false, false, true, true},
		{"lstm relu activations", Recurrence{Cell: CellLSTM, Activations: []string{"sigmoid", "relu", "tanh"}}, 2, 2, 2, 3, false, true, true, true, false},
	}
}

func TestRecurrentAgainstLoops(t *testing.T) {
	rng := rand.New(rand.NewSource(31))
	for _, c := range rnnCases() {
		G := c.rc.Cell.gates()
		opt := func(on bool, sh ...int) arr {
			if !on {
				return absent
			}
			return randArr(rng, sh...)
		}
		all := []arr{randArr(rng, c.T, c.B, c.in), randArr(rng, G*c.H, c.in), randArr(rng, G*c.H, c.H),
			opt(c.wb, G*c.H), opt(c.rb, G*c.H), opt(c.h0, c.B, c.H), opt(c.c0, c.B, c.H), opt(c.p, 3*c.H)}
		var args []arr
		var pos []int // operand index of each argument
		for i, a := range all {
			if i < 3 || a.given() {
				args = append(args, a)
				pos = append(pos, i)
			}
		}
		expand := func(as []arr) []arr {
			ops := make([]arr, 8)
			for k, i := range pos {
				ops[i] = as[k]
			}
			return ops
		}
		diff := make([]bool, len(args))
		for i := range diff {
			diff[i] = true
		}
		checkLayer(t, c.name, func(v ...core.Term) (core.Term, error) {
			ops := make([]core.Term, 8)
			for k, i := range pos {
				ops[i] = v[k]
			}
			return Recurrent(c.rc, ops[0], ops[1], ops[2], ops[3], ops[4], ops[5], ops[6], ops[7])
		}, func(as []arr) arr { return loopRecurrent(c.rc, expand(as)) }, args, diff, 1e-5)
	}
}

// TestRecurrentSizeLinear: the program of an unrolled LSTM and its gradient grow linearly
// with the number of steps (the same increase from 8 to 16 steps as from 16 to 24).
func TestRecurrentSizeLinear(t *testing.T) {
	var sizes, gsizes []int
	for _, T := range []int{8, 16, 24} {
		x, _ := core.NewVar("x", core.Type{Shape: core.Shape{T, 2, 3}, Dtype: core.Float64})
		w, _ := core.NewVar("w", core.Type{Shape: core.Shape{16, 3}, Dtype: core.Float64})
		r, _ := core.NewVar("r", core.Type{Shape: core.Shape{16, 4}, Dtype: core.Float64})
		y, err := Recurrent(Recurrence{Cell: CellLSTM}, x, w, r, nil, nil, nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		var b core.Builder
		l := b.SumOuter(b.Reshape(core.Shape{(T + 1) * 8}, y))
		p, err := core.NewProgram([]*core.Var{x, w, r}, l)
		if err != nil {
			t.Fatal(err, b.Err())
		}
		art, err := ad.Grad(p, "x", "w", "r")
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, core.Size(p.Body))
		gsizes = append(gsizes, core.Size(art.Program().Body))
	}
	if sizes[2]-sizes[1] != sizes[1]-sizes[0] || gsizes[2]-gsizes[1] > (gsizes[1]-gsizes[0])*11/10 {
		t.Errorf("program sizes %v and gradient sizes %v for 8, 16, 24 steps: not linear", sizes, gsizes)
	}
}

func TestRecurrentErrors(t *testing.T) {
	v := func(sh ...int) core.Term { return f64Var(t, sh...) }
	lstm := Recurrence{Cell: CellLSTM}
	for _, c := range []struct {
		name string
		rc   Recurrence
		ops  []core.Term
		want string
	}{
		{"rank", lstm, []core.Term{v(3, 3), v(16, 3), v(16, 4)}, "want float [T, b, in]"},
		{"gates", lstm, []core.Term{v(2, 1, 3), v(15, 3), v(15, 4)}, "[4·hidden, in]"},
		{"recurrence", lstm, []core.Term{v(2, 1, 3), v(16, 3), v(16, 3)}, "do not match"},
		{"bias", lstm, []core.Term{v(2, 1, 3), v(16, 3), v(16, 4), v(8)}, "W bias"},
		{"h0", lstm, []core.Term{v(2, 1, 3), v(16, 3), v(16, 4), nil, nil, v(2, 4)}, "initial hidden state"},
		{"activation", Recurrence{Cell: CellRNN, Activations: []string{"softsign"}}, []core.Term{v(2, 1, 3), v(4, 3), v(4, 4)}, `activation "softsign"`},
		{"activations", Recurrence{Cell: CellGRU, Activations: []string{"tanh"}}, []core.Term{v(2, 1, 3), v(12, 3), v(12, 4)}, "1 activations"},
		{"cell state of a GRU", Recurrence{Cell: CellGRU}, []core.Term{v(2, 1, 3), v(12, 3), v(12, 4), nil, nil, nil, v(1, 4)}, "belong to an LSTM"},
		{"clip", Recurrence{Cell: CellRNN, Clip: -1}, []core.Term{v(2, 1, 3), v(4, 3), v(4, 4)}, "negative clip"},
		{"cell", Recurrence{}, []core.Term{v(2, 1, 3), v(4, 3), v(4, 4)}, "unknown cell"},
	} {
		ops := append(append([]core.Term{}, c.ops...), make([]core.Term, 8-len(c.ops))...)
		_, err := Recurrent(c.rc, ops[0], ops[1], ops[2], ops[3], ops[4], ops[5], ops[6], ops[7])
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "lower: ") {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
	}
}
