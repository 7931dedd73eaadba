package lower

import (
	"fmt"
	"slices"

	"github.com/bulkad/bulkad/core"
	"github.com/pkg/errors"
)

// CellKind selects the cell of a Recurrence.
type CellKind int

// The cells, with the gate order of their weights (ONNX's, which PyTorch's exporter produces
// by permuting its own).
const (
	// CellRNN: Hₜ = f(Xₜ·Wᵀ + Hₜ₋₁·Rᵀ + Wb + Rb); one gate.
	CellRNN CellKind = iota + 1
	// CellGRU: gates z (update), r (reset), h (hidden), in that order:
	//	zₜ = f(Xₜ·Wzᵀ + Hₜ₋₁·Rzᵀ + Wbz + Rbz), rₜ likewise,
	//	hₜ = g(Xₜ·Whᵀ + (rₜ ⊙ Hₜ₋₁)·Rhᵀ + Rbh + Wbh), or with LinearBeforeReset
	//	hₜ = g(Xₜ·Whᵀ + rₜ ⊙ (Hₜ₋₁·Rhᵀ + Rbh) + Wbh) (PyTorch's GRU),
	//	Hₜ = (1 − zₜ) ⊙ hₜ + zₜ ⊙ Hₜ₋₁.
	CellGRU
	// CellLSTM: gates i (input), o (output), f (forget), c (cell), in that order, peepholes
	// P = [Pi, Po, Pf]:
	//	iₜ = f(Xₜ·Wiᵀ + Hₜ₋₁·Riᵀ + Pi ⊙ Cₜ₋₁ + Wbi + Rbi), fₜ likewise with Pf,
	//	cₜ = g(Xₜ·Wcᵀ + Hₜ₋₁·Rcᵀ + Wbc + Rbc), Cₜ = fₜ ⊙ Cₜ₋₁ + iₜ ⊙ cₜ,
	//	oₜ = f(Xₜ·Woᵀ + Hₜ₋₁·Roᵀ + Po ⊙ Cₜ + Wbo + Rbo), Hₜ = oₜ ⊙ h(Cₜ).
	CellLSTM
)

// cellFacts is what the lowering needs to know of a cell kind.
type cellFacts struct {
	name  string
	gates int // the blocks of rows of the cell's weights
	// acts are the default activations (f; f, g; f, g, h): a Recurrence's Activations must
	// have as many.
	acts []string
}

// cells holds the facts of every cell kind, indexed by CellKind (never written).
var cells = [...]cellFacts{
	CellRNN:  {name: "rnn", gates: 1, acts: []string{"tanh"}},
	CellGRU:  {name: "gru", gates: 3, acts: []string{"sigmoid", "tanh"}},
	CellLSTM: {name: "lstm", gates: 4, acts: []string{"sigmoid", "tanh", "tanh"}},
}

// facts returns the cell's entry of cells (the zero cellFacts, with no gates, for an unknown
// cell).
func (k CellKind) facts() cellFacts {
	if k > 0 && int(k) < len(cells) {
		return cells[k]
	}
	return cellFacts{}
}

// gates is the number of gates of a cell (the blocks of rows of its weights; 0 for an
// unknown cell).
func (k CellKind) gates() int { return k.facts().gates }

// String returns the cell's name: rnn, gru or lstm.
func (k CellKind) String() string {
	if n := k.facts().name; n != "" {
		return n
	}
	return fmt.Sprintf("cell(%d)", int(k))
}

// Recurrence is one direction of a recurrent layer (ONNX's RNN, GRU and LSTM operators for
// one direction; PyTorch's nn.RNN, nn.GRU and nn.LSTM for one layer and direction).
type Recurrence struct {
	Cell CellKind
	// Reverse runs the recurrence from the last time step to the first.
	Reverse bool
	// Activations are the cell's functions f (RNN); f, g (GRU); f, g, h (LSTM), by name:
	// "sigmoid", "tanh" or "relu". nil gives the defaults: tanh (RNN); sigmoid, tanh (GRU);
	// sigmoid, tanh, tanh (LSTM).
	Activations []string
	// Clip > 0 clips the input of every activation function to [−Clip, Clip] (ONNX's clip:
	// the gates' pre-activations, and for LSTM Cₜ where h is applied to it; the states
	// themselves are not clipped).
	Clip float64
	// LinearBeforeReset selects the GRU form that applies the reset gate after the recurrent
	// product (PyTorch's).
	LinearBeforeReset bool
}

// Recurrent unrolls rc over the static length T of x : [T, b, in] with the weights
// w : [G·hidden, in] and r : [G·hidden, hidden] (G gates, in rc.Cell's order), the biases
// wb, rb : [G·hidden], the initial states h0, c0 : [b, hidden] and the LSTM peepholes
// p : [3·hidden]; wb, rb, h0, c0 and p may be nil (zeros). The result holds the hidden
// states Hₜ in time order, [T, b, hidden] (for Reverse, row t is the state after reading
// x[t], …, x[T−1], so the final state is row 0); for CellLSTM it has one row more, [T+1, b,
// hidden], whose last row is the final cell state.
//
// The input products of all steps are one matrix product, [T·b, in] × [in, G·hidden] (the
// biases added once); each step is one product of the previous state with Rᵀ (two for a GRU
// without LinearBeforeReset, whose reset gate comes between) and element-wise operations on
// let-bound states, so the program and its gradient grow linearly with T.
func Recurrent(rc Recurrence, x, w, r, wb, rb, h0, c0, p core.Term) (core.Term, error) {
	op := "recurrent " + rc.Cell.String()
	g := rc.Cell.gates()
	if g == 0 {
		return nil, errors.Errorf("lower: recurrent: unknown cell %v", rc.Cell)
	}
	acts, err := checkRecurrent(op, rc, g, x, w, r, wb, rb, h0, c0, p)
	if err != nil {
		return nil, err
	}
	xs := x.Type().Shape
	dt := x.Type().Dtype
	steps, batch, hid := xs[0], xs[1], w.Type().Shape[0]/g
	u := &unroll{dt: dt, batch: batch, hid: hid, clip: rc.Clip}
	b := &u.b
	u.k = keep(b)
	full := func(sh core.Shape, v float64) core.Term { return b.Full(core.Type{Shape: sh, Dtype: dt}, v) }
	// The biases folded into the input products: Wb + Rb, except a GRU's Rbh with
	// LinearBeforeReset, which is added to the recurrent product inside the reset gate.
	lbr := rc.Cell == CellGRU && rc.LinearBeforeReset
	var bias, rbh core.Term
	if wb != nil {
		bias = wb
	}
	if rb != nil {
		rbIn := rb
		if lbr {
			mask := make([]float64, g*hid)
			for i := 0; i < 2*hid; i++ {
				mask[i] = 1
			}
			m, err := core.NewLitF(core.Type{Shape: core.Shape{g * hid}, Dtype: dt}, mask)
			if err != nil {
				return nil, errors.Wrapf(err, "lower: %s", op)
			}
			rbIn = b.Mul(rb, m)
			rbh = u.rows(rb, 2*hid, hid)
		}
		if bias == nil {
			bias = rbIn
		} else {
			bias = b.Add(bias, rbIn)
		}
	}
	xw := b.MatMul(b.Reshape(core.Shape{steps * batch, xs[2]}, x), b.Transpose([]int{1, 0}, w))
	if bias != nil {
		xw = b.Add(xw, u.k(Broadcast(bias, core.Shape{steps * batch, g * hid})))
	}
	xw = u.bind("xw", b.Reshape(core.Shape{steps, batch, g * hid}, xw))
	var rT, rzrT, rhT, rbhB core.Term
	if rc.Cell == CellGRU && !lbr {
		rzrT = u.bind("rzrT", b.Transpose([]int{1, 0}, u.rows(r, 0, 2*hid)))
		rhT = u.bind("rhT", b.Transpose([]int{1, 0}, u.rows(r, 2*hid, hid)))
	} else {
		rT = u.bind("rT", b.Transpose([]int{1, 0}, r))
	}
	if rbh != nil {
		rbhB = u.bind("rbh", u.k(Broadcast(rbh, core.Shape{batch, hid})))
	}
	var pi, po, pf core.Term
	if p != nil {
		pi = u.bind("pi", u.k(Broadcast(u.rows(p, 0, hid), core.Shape{batch, hid})))
		po = u.bind("po", u.k(Broadcast(u.rows(p, hid, hid), core.Shape{batch, hid})))
		pf = u.bind("pf", u.k(Broadcast(u.rows(p, 2*hid, hid), core.Shape{batch, hid})))
	}
	if err := wrap(op, b); err != nil {
		return nil, err
	}
	sh := core.Shape{batch, hid}
	hs := make([]core.Term, steps)
	h, c := h0, c0 // nil: zeros
	for k := 0; k < steps; k++ {
		t := k
		if rc.Reverse {
			t = steps - 1 - k
		}
		xt := b.Index(xw, core.ScalarI(int64(t))) // [b, G·hidden]
		switch rc.Cell {
		case CellRNN:
			z := xt
			if h != nil {
				z = b.Add(z, b.MatMul(h, rT))
			}
			h = u.bind(fmt.Sprintf("h%d", t), u.act(acts[0], z))
		case CellGRU:
			var hr core.Term // the recurrent product of the gates z, r (and h with lbr)
			if h != nil {
				if lbr {
					hr = u.bind(fmt.Sprintf("hr%d", t), b.MatMul(h, rT))
				} else {
					hr = u.bind(fmt.Sprintf("hr%d", t), b.MatMul(h, rzrT))
				}
			}
			pre := func(k int) core.Term {
				z := u.gate(xt, g, k)
				if hr != nil {
					z = b.Add(z, u.gate(hr, hr.Type().Shape[1]/hid, k))
				}
				return z
			}
			zt := u.bind(fmt.Sprintf("z%d", t), u.act(acts[0], pre(0)))
			rt := u.act(acts[0], pre(1))
			var hh core.Term
			switch {
			case lbr:
				rec := rbhB
				if hr != nil {
					rec = b.Add(u.gate(hr, g, 2), rbhB)
				}
				if rec != nil {
					hh = b.Add(u.gate(xt, g, 2), b.Mul(rt, rec))
				} else {
					hh = u.gate(xt, g, 2)
				}
			case h != nil:
				hh = b.Add(u.gate(xt, g, 2), b.MatMul(b.Mul(rt, h), rhT))
			default:
				hh = u.gate(xt, g, 2)
			}
			ht := u.act(acts[1], hh)
			// Hₜ = (1 − zₜ) ⊙ hₜ + zₜ ⊙ Hₜ₋₁
			next := b.Mul(b.Sub(full(sh, 1), zt), ht)
			if h != nil {
				next = b.Add(next, b.Mul(zt, h))
			}
			h = u.bind(fmt.Sprintf("h%d", t), next)
		case CellLSTM:
			h, c = u.lstmStep(t, xt, h, c, rT, [3]core.Term{pi, po, pf}, acts)
		}
		hs[t] = h
		if err := wrap(op, b); err != nil {
			return nil, err
		}
	}
	rows := hs
	if rc.Cell == CellLSTM {
		rows = append(append([]core.Term{}, hs...), c)
	}
	body := b.FromVector(rows...)
	for i := len(u.vars) - 1; i >= 0; i-- {
		body = b.Let(u.vars[i], u.bounds[i], body)
	}
	return result(op, b, body)
}

// checkRecurrent checks the operands of Recurrent (op names it in errors; g is the cell's
// number of gates) and returns the activations: rc's, or the cell's defaults.
func checkRecurrent(op string, rc Recurrence, g int, x, w, r, wb, rb, h0, c0, p core.Term) ([]string, error) {
	if err := checkTerm(op, x, w, r); err != nil {
		return nil, err
	}
	xs, ws, rs := x.Type().Shape, w.Type().Shape, r.Type().Shape
	dt := x.Type().Dtype
	if !dt.IsFloat() || xs.Rank() != 3 || ws.Rank() != 2 || rs.Rank() != 2 || ws[0]%g != 0 {
		return nil, errors.Errorf("lower: %s: input %v, weights %v and recurrence %v: want float [T, b, in], [%d·hidden, in] and [%d·hidden, hidden]", op, x.Type(), ws, rs, g, g)
	}
	batch, hid := xs[1], ws[0]/g
	if ws[1] != xs[2] || !rs.Equal(core.Shape{g * hid, hid}) {
		return nil, errors.Errorf("lower: %s: input %v, weights %v and recurrence %v do not match (want [%d, %d] and [%d, %d])", op, xs, ws, rs, g*hid, xs[2], g*hid, hid)
	}
	want := map[string]struct {
		t  core.Term
		sh core.Shape
	}{"W bias": {wb, core.Shape{g * hid}}, "R bias": {rb, core.Shape{g * hid}},
		"initial hidden state": {h0, core.Shape{batch, hid}}, "initial cell state": {c0, core.Shape{batch, hid}},
		"peepholes": {p, core.Shape{3 * hid}}}
	for name, o := range want {
		if o.t == nil {
			continue
		}
		if err := checkTerm(op, o.t); err != nil {
			return nil, err
		}
		if !o.t.Type().Shape.Equal(o.sh) || o.t.Type().Dtype != dt {
			return nil, errors.Errorf("lower: %s: %s %v, want %v %v", op, name, o.t.Type(), o.sh, dt)
		}
	}
	if rc.Cell != CellLSTM && (c0 != nil || p != nil) {
		return nil, errors.Errorf("lower: %s: a cell state and peepholes belong to an LSTM", op)
	}
	defaults := rc.Cell.facts().acts
	acts := rc.Activations
	if acts == nil {
		acts = slices.Clone(defaults)
	}
	if nAct := len(defaults); len(acts) != nAct {
		return nil, errors.Errorf("lower: %s: %d activations %v, want %d", op, len(acts), acts, nAct)
	}
	for _, a := range acts {
		if a != "sigmoid" && a != "tanh" && a != "relu" {
			return nil, errors.Errorf("lower: %s: activation %q; supported: sigmoid, tanh, relu", op, a)
		}
	}
	if rc.Clip < 0 {
		return nil, errors.Errorf("lower: %s: negative clip %v", op, rc.Clip)
	}
	return acts, nil
}

// lstmStep is step t of an LSTM: xt is the step's input product [b, 4·hidden] (biases added),
// h and c the previous states (nil: zeros), rT the transposed recurrence, peep the peepholes
// broadcast to [b, hidden] (i, o, f; nil without), acts the three activations. It returns the
// new hidden and cell states, let-bound.
func (u *unroll) lstmStep(t int, xt, h, c, rT core.Term, peep [3]core.Term, acts []string) (core.Term, core.Term) {
	b, g := &u.b, CellLSTM.gates()
	pi, po, pf := peep[0], peep[1], peep[2]
	z := xt
	if h != nil {
		z = b.Add(z, b.MatMul(h, rT))
	}
	z = u.bind(fmt.Sprintf("g%d", t), z)
	withPeep := func(pre, pk, state core.Term) core.Term {
		if pk == nil || state == nil {
			return pre
		}
		return b.Add(pre, b.Mul(pk, state))
	}
	it := u.act(acts[0], withPeep(u.gate(z, g, 0), pi, c))
	ft := u.act(acts[0], withPeep(u.gate(z, g, 2), pf, c))
	ct := u.act(acts[1], u.gate(z, g, 3))
	next := b.Mul(it, ct)
	if c != nil {
		next = b.Add(b.Mul(ft, c), next)
	}
	c = u.bind(fmt.Sprintf("c%d", t), next)
	ot := u.act(acts[0], withPeep(u.gate(z, g, 1), po, c))
	h = u.bind(fmt.Sprintf("h%d", t), b.Mul(ot, u.act(acts[2], c)))
	return h, c
}

// unroll is the state of one Recurrent: the builder and the lets of the unrolled steps.
type unroll struct {
	b          core.Builder
	dt         core.Dtype
	batch, hid int
	clip       float64
	vars       []*core.Var
	bounds     []core.Term
	k          func(core.Term, error) core.Term // records a lower function's error in b
}

// bind let-binds t (its variable is named name with a prime, which no front end uses).
func (u *unroll) bind(name string, t core.Term) core.Term {
	if u.b.Err() != nil || t == nil {
		return t
	}
	v := u.b.Var(name+"'", t.Type())
	u.vars = append(u.vars, v)
	u.bounds = append(u.bounds, t)
	return v
}

// rows is the slice [off, off+n) of the first axis of x.
func (u *unroll) rows(x core.Term, off, n int) core.Term {
	return u.k(Slice(x, 0, off, 1, n, true))
}

// gate is the columns [k·hidden, (k+1)·hidden) of z : [b, n·hidden].
func (u *unroll) gate(z core.Term, n, k int) core.Term {
	if n == 1 {
		return z
	}
	vs, ts := indexVars(&u.b, 2)
	return u.b.Gather(core.Shape{u.batch, u.hid}, z, u.b.IndexFn(vs, ts[0], affine(&u.b, ts[1], 1, int64(k*u.hid))))
}

// act applies the activation name to x, clipped first when a clip is set.
func (u *unroll) act(name string, x core.Term) core.Term {
	b := &u.b
	if x == nil {
		return nil
	}
	if u.clip > 0 {
		sh := x.Type().Shape
		lo := b.Full(core.Type{Shape: sh, Dtype: u.dt}, -u.clip)
		hi := b.Full(core.Type{Shape: sh, Dtype: u.dt}, u.clip)
		x = b.Binary(core.OpMin, b.Binary(core.OpMax, x, lo), hi)
	}
	switch name {
	case "sigmoid":
		return b.Unary(core.OpSigmoid, x)
	case "tanh":
		return b.Unary(core.OpTanh, x)
	default: // relu
		return b.Binary(core.OpMax, x, b.Full(x.Type(), 0))
	}
}
