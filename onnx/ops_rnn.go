package onnx

import (
	"strings"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/lower"
	"github.com/pkg/errors"
)

// opsRecurrent lowers the recurrent layers, unrolled over the static sequence length by
// lower.Recurrent (after raising, the whole model stays one plan node however long the
// sequence: unrolling costs no Gorgonia nodes).
var opsRecurrent = map[string]opFn{
	"RNN":  opRecurrent(lower.CellRNN),
	"GRU":  opRecurrent(lower.CellGRU),
	"LSTM": opRecurrent(lower.CellLSTM),
}

// opRecurrent lowers RNN, GRU and LSTM: inputs X, W, R, B, sequence_lens, initial_h and for
// LSTM initial_c and P; outputs Y [T, directions, b, hidden], Y_h and (LSTM) Y_c
// [directions, b, hidden]. Supported: direction forward, reverse and bidirectional, layout 0,
// clip, linear_before_reset (GRU), activations Sigmoid, Tanh and Relu (the defaults are
// Tanh; Sigmoid, Tanh; Sigmoid, Tanh, Tanh), and sequence_lens only when it is a constant
// equal to the sequence length for every sample. Refused: layout 1, input_forget = 1,
// activations with parameters (activation_alpha, activation_beta: Affine, LeakyRelu, …).
func opRecurrent(cell lower.CellKind) opFn {
	return func(c *ctx, n *Node, ins []value) ([]value, error) {
		xwr, err := c.floatIns(ins, 3)
		if err != nil {
			return nil, err
		}
		x, w, r := xwr[0], xwr[1], xwr[2]
		xs, ws := shapeOf(x), shapeOf(w)
		nAct := map[lower.CellKind]int{lower.CellRNN: 1, lower.CellGRU: 2, lower.CellLSTM: 3}[cell]
		dirs, acts, err := recurrentAttrs(n, nAct)
		if err != nil {
			return nil, err
		}
		nd := len(dirs)
		if len(xs) != 3 || len(ws) != 3 || ws[0] != nd {
			return nil, errors.Errorf("X %v and W %v: want [sequence, batch, input] and [%d directions, gates·hidden, input]", xs, ws, nd)
		}
		steps, batch := xs[0], xs[1]
		gates := map[lower.CellKind]int{lower.CellRNN: 1, lower.CellGRU: 3, lower.CellLSTM: 4}[cell]
		hid := int(n.attrInt("hidden_size", int64(ws[1]/gates)))
		if hid*gates != ws[1] {
			return nil, errors.Errorf("hidden_size %d and W %v: want W [%d, %d·hidden, input]", hid, ws, nd, gates)
		}
		if len(ins) > 4 && (ins[4].t != nil || ins[4].isInt || ins[4].isF) {
			lens, ok, err := constInts(ins, 4, "sequence_lens")
			if err != nil || !ok {
				return nil, errors.Wrap(orMissing(err, "sequence_lens"), "sequence_lens")
			}
			for _, l := range lens {
				if int(l) != steps {
					return nil, errors.Errorf("sequence_lens %v: only sequences of the full length %d are supported", lens, steps)
				}
			}
		}
		opt := func(i int) (core.Term, error) {
			if i >= len(ins) || (ins[i].t == nil && !ins[i].isF && !ins[i].isInt) {
				return nil, nil
			}
			return c.term(ins[i])
		}
		bias, err := opt(3)
		if err != nil {
			return nil, err
		}
		h0, err := opt(5)
		if err != nil {
			return nil, err
		}
		var c0, p core.Term
		if cell == lower.CellLSTM {
			if c0, err = opt(6); err != nil {
				return nil, err
			}
			if p, err = opt(7); err != nil {
				return nil, err
			}
		}
		check := func(name string, t core.Term, sh core.Shape) error {
			if t != nil && !shapeOf(t).Equal(sh) {
				return errors.Errorf("%s %v, want %v", name, shapeOf(t), sh)
			}
			return nil
		}
		for _, o := range []struct {
			name string
			t    core.Term
			sh   core.Shape
		}{{"R", r, core.Shape{nd, gates * hid, hid}}, {"B", bias, core.Shape{nd, 2 * gates * hid}},
			{"initial_h", h0, core.Shape{nd, batch, hid}}, {"initial_c", c0, core.Shape{nd, batch, hid}},
			{"P", p, core.Shape{nd, 3 * hid}}} {
			if err := check(o.name, o.t, o.sh); err != nil {
				return nil, err
			}
		}
		// pick is direction d of a [directions, …] operand (nil stays nil)
		pick := func(t core.Term, d int) (core.Term, error) {
			if t == nil {
				return nil, nil
			}
			return lower.Slice(t, 0, d, 1, 1, false)
		}
		var ys, yh, yc []core.Term
		for d, reverse := range dirs {
			rc := lower.Recurrence{Cell: cell, Reverse: reverse, Clip: n.attrFloat("clip", 0),
				LinearBeforeReset: n.attrInt("linear_before_reset", 0) != 0}
			if acts != nil {
				rc.Activations = acts[d*nAct : (d+1)*nAct]
			}
			var ops [6]core.Term // w, r, bias, h0, c0, p of direction d
			for k, t := range []core.Term{w, r, bias, h0, c0, p} {
				if ops[k], err = pick(t, d); err != nil {
					return nil, err
				}
			}
			var wb, rb core.Term
			if ops[2] != nil {
				if wb, err = lower.Slice(ops[2], 0, 0, 1, gates*hid, true); err != nil {
					return nil, err
				}
				if rb, err = lower.Slice(ops[2], 0, gates*hid, 1, gates*hid, true); err != nil {
					return nil, err
				}
			}
			seq, err := lower.Recurrent(rc, x, ops[0], ops[1], wb, rb, ops[3], ops[4], ops[5])
			if err != nil {
				return nil, err
			}
			seq = c.letTerm(firstNamed(n.Outputs)+"_dir", seq)
			hs := seq
			if cell == lower.CellLSTM {
				if hs, err = lower.Slice(seq, 0, 0, 1, steps, true); err != nil {
					return nil, err
				}
				last, err := lower.Slice(seq, 0, steps, 1, 1, false)
				if err != nil {
					return nil, err
				}
				yc = append(yc, last)
			}
			final := steps - 1
			if reverse {
				final = 0
			}
			last, err := lower.Slice(seq, 0, final, 1, 1, false)
			if err != nil {
				return nil, err
			}
			ys, yh = append(ys, hs), append(yh, last)
		}
		var b core.Builder
		// Y: [T, 1, b, h], or [directions, T, b, h] → [T, directions, b, h]
		y := b.Reshape(core.Shape{steps, 1, batch, hid}, ys[0])
		if nd > 1 {
			y = b.Transpose([]int{1, 0, 2, 3}, b.FromVector(ys...))
		}
		outs := []value{{t: y}, {t: b.FromVector(yh...)}}
		if cell == lower.CellLSTM {
			outs = append(outs, value{t: b.FromVector(yc...)})
		}
		if err := b.Err(); err != nil {
			return nil, err
		}
		return outs, nil
	}
}

// letTerm let-binds t (for a term that several outputs of a node read) and returns its
// variable.
func (c *ctx) letTerm(name string, t core.Term) core.Term {
	v, err := core.NewVar(c.fresh(name), t.Type())
	if err != nil { // fresh names are valid identifiers
		return t
	}
	c.lets = append(c.lets, v)
	c.bounds = append(c.bounds, t)
	return v
}

// firstNamed is the first non-empty name of outs (c.node guarantees one).
func firstNamed(outs []string) string {
	for _, o := range outs {
		if o != "" {
			return o
		}
	}
	return "out"
}

// recurrentAttrs reads the attributes of an RNN, GRU or LSTM node n whose cell has nAct
// activations per direction: the directions (reverse or not, in ONNX's order) and the
// activations (nil: the cell's defaults). Attributes the lowering does not support are errors.
func recurrentAttrs(n *Node, nAct int) (dirs []bool, acts []string, err error) {
	if layout := n.attrInt("layout", 0); layout != 0 {
		return nil, nil, errors.Errorf("layout %d: only layout 0 (X as [sequence, batch, input]) is supported", layout)
	}
	if n.attrInt("input_forget", 0) != 0 {
		return nil, nil, errors.New("input_forget = 1 (coupled input and forget gates) is not supported")
	}
	if _, ok := n.Attrs["activation_alpha"]; ok {
		return nil, nil, errors.New("activation_alpha is not supported (supported activations: Sigmoid, Tanh, Relu)")
	}
	if _, ok := n.Attrs["activation_beta"]; ok {
		return nil, nil, errors.New("activation_beta is not supported (supported activations: Sigmoid, Tanh, Relu)")
	}
	dirs = []bool{false} // reverse?
	dir := "forward"
	if a, ok := n.Attrs["direction"]; ok && a.S != "" {
		dir = a.S
	}
	switch dir {
	case "forward":
	case "reverse":
		dirs = []bool{true}
	case "bidirectional":
		dirs = []bool{false, true}
	default:
		return nil, nil, errors.Errorf("direction %q: supported are forward, reverse and bidirectional", dir)
	}
	if a, ok := n.Attrs["activations"]; ok {
		if len(a.Strings) != nAct*len(dirs) {
			return nil, nil, errors.Errorf("activations %v: want %d for %d direction(s)", a.Strings, nAct*len(dirs), len(dirs))
		}
		for _, s := range a.Strings {
			switch strings.ToLower(s) {
			case "sigmoid", "tanh", "relu":
				acts = append(acts, strings.ToLower(s))
			default:
				return nil, nil, errors.Errorf("activation %q: supported are Sigmoid, Tanh and Relu", s)
			}
		}
	}
	return dirs, acts, nil
}
