package train

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"math/rand"
	"strings"
	"time"

	"github.com/bulkad/bulkad/accel"
	"github.com/bulkad/bulkad/examples/opgraphs"
	"github.com/bulkad/bulkad/gradcheck"
	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// GradFunc is the signature shared by gorgonia.Grad and bulkad.Grad.
type GradFunc func(cost *G.Node, wrt ...*G.Node) (G.Nodes, error)

// Data is a classification dataset: N rows of Features values and a label each.
type Data struct {
	X        []float64
	Labels   []int
	N        int
	Features int
}

// Net is a built classifier graph: inputs X (batch × features, any shape with that many
// elements) and one-hot targets Y (batch × classes), the scalar Cost, the Logits
// (batch × classes) and the learnable parameters in the order of the builder's params.
type Net struct {
	G      *G.ExprGraph
	X, Y   *G.Node
	Cost   *G.Node
	Logits *G.Node
	Learn  G.Nodes
}

// BuildFunc builds a classifier for batches of the given size with the given parameter
// values. With training false it may leave out dropout and need not build Y or Cost.
type BuildFunc func(dt tensor.Dtype, batch int, params []*tensor.Dense, training bool) (*Net, error)

// Config is a training run.
type Config struct {
	Name      string // model name for the output
	Dtype     tensor.Dtype
	Batch     int
	Epochs    int
	Steps     int // stop after this many steps in total (0: no limit)
	LearnRate float64
	Seed      int64
	Classes   int
	TTY       bool // redraw the progress bar in place
	Engine    bool // run the machines on accel.Engine (Gorgonia's transposes, softmax and ReLU mask on kernel's loops)
}

// vmOpts are the options of every machine cfg compiles.
func (cfg Config) vmOpts(opts ...G.VMOpt) []G.VMOpt {
	if cfg.Engine {
		opts = append(opts, G.WithEngine(accel.Engine{}))
	}
	return opts
}

// Result is what a training run reports.
type Result struct {
	Curve    Curve
	StepTime time.Duration // median
	TestAcc  float64
	Steps    int
}

// Dense makes a tensor of dtype dt (Float64 or Float32) from float64 values.
func Dense(dt tensor.Dtype, shape []int, v []float64) *tensor.Dense {
	return opgraphs.Dense(dt, shape, v)
}

// Floats returns a copy of a value's data as float64s (nil for no value).
func Floats(v G.Value) []float64 { return opgraphs.Floats(v) }

// Glorot draws an in×out weight matrix, Glorot-uniform, from rng.
func Glorot(rng *rand.Rand, dt tensor.Dtype, shape []int, fanIn, fanOut int) *tensor.Dense {
	lim := math.Sqrt(6 / float64(fanIn+fanOut))
	n := 1
	for _, k := range shape {
		n *= k
	}
	v := make([]float64, n)
	for i := range v {
		v[i] = (rng.Float64()*2 - 1) * lim
	}
	return Dense(dt, shape, v)
}

// Batch copies rows idx of d into a batch tensor shaped like x and a one-hot target tensor.
func Batch(dt tensor.Dtype, d *Data, idx []int, xShape []int, classes int) (*tensor.Dense, *tensor.Dense, []int) {
	n := len(idx)
	xv := make([]float64, n*d.Features)
	labels := make([]int, n)
	for i, k := range idx {
		copy(xv[i*d.Features:], d.X[k*d.Features:(k+1)*d.Features])
		labels[i] = d.Labels[k]
	}
	yv := make([]float64, n*classes)
	OneHot(yv, labels, classes)
	return Dense(dt, xShape, xv), Dense(dt, []int{n, classes}, yv), labels
}

// Trainer is a compiled training graph with its machine and solver.
type Trainer struct {
	Net     *Net
	VM      G.VM
	Solver  G.Solver
	cost    G.Value
	logits  G.Value
	classes int
}

// NewTrainer builds the training graph, differentiates it with grad and compiles it.
func NewTrainer(cfg Config, build BuildFunc, params []*tensor.Dense, grad GradFunc) (*Trainer, error) {
	cl := make([]*tensor.Dense, len(params))
	for i, p := range params {
		cl[i] = p.Clone().(*tensor.Dense)
	}
	n, err := build(cfg.Dtype, cfg.Batch, cl, true)
	if err != nil {
		return nil, errors.Wrapf(err, "%s: building the graph", cfg.Name)
	}
	t := &Trainer{Net: n, classes: cfg.Classes}
	G.Read(n.Cost, &t.cost)
	G.Read(n.Logits, &t.logits)
	if _, err := grad(n.Cost, n.Learn...); err != nil {
		return nil, errors.Wrap(err, cfg.Name) // the error names the autodiff and its operation
	}
	t.VM = G.NewTapeMachine(n.G, cfg.vmOpts(G.BindDualValues(n.Learn...))...)
	t.Solver = G.NewAdamSolver(G.WithLearnRate(cfg.LearnRate))
	return t, nil
}

// Forward sets the batch and runs the tape (forward and gradient) without a solver step.
func (t *Trainer) Forward(x, y *tensor.Dense) error {
	if err := G.Let(t.Net.X, x); err != nil {
		return err
	}
	if err := G.Let(t.Net.Y, y); err != nil {
		return err
	}
	return errors.Wrap(t.VM.RunAll(), "running the tape")
}

// Step runs one training step and returns the batch loss and accuracy.
func (t *Trainer) Step(x, y *tensor.Dense, labels []int) (float64, float64, error) {
	if err := t.Forward(x, y); err != nil {
		return 0, 0, err
	}
	loss := Floats(t.cost)[0]
	acc := Accuracy(Argmax(Floats(t.logits), len(labels), t.classes), labels)
	if err := t.Solver.Step(G.NodesToValueGrads(t.Net.Learn)); err != nil {
		return 0, 0, errors.Wrap(err, "solver step")
	}
	t.VM.Reset()
	return loss, acc, nil
}

// Params returns the current parameter values.
func (t *Trainer) Params() []*tensor.Dense {
	out := make([]*tensor.Dense, len(t.Net.Learn))
	for i, n := range t.Net.Learn {
		out[i] = n.Value().(*tensor.Dense)
	}
	return out
}

// Evaluate returns the accuracy of params on every example of d with forward-only graphs: one
// for batches of cfg.Batch (at most d.N) and, when d.N is no multiple of it, one for the
// remainder. xShape is the shape of one input batch, batch first.
func Evaluate(cfg Config, build BuildFunc, params []*tensor.Dense, d *Data, xShape []int) (float64, error) {
	if d.N == 0 {
		return 0, errors.Errorf("%s: evaluate: no examples", cfg.Name)
	}
	batch := min(cfg.Batch, d.N)
	full := d.N / batch * batch
	right, err := evaluateRange(cfg, build, params, d, xShape, batch, 0, full)
	if err != nil {
		return 0, err
	}
	if full < d.N {
		more, err := evaluateRange(cfg, build, params, d, xShape, d.N-full, full, d.N)
		if err != nil {
			return 0, err
		}
		right += more
	}
	return float64(right) / float64(d.N), nil
}

// evaluateRange counts the examples from..to−1 of d that params classify right, in batches of
// batch (which divides to−from) on a forward-only graph built for that batch.
func evaluateRange(cfg Config, build BuildFunc, params []*tensor.Dense, d *Data, xShape []int, batch, from, to int) (int, error) {
	n, err := build(cfg.Dtype, batch, params, false)
	if err != nil {
		return 0, errors.Wrapf(err, "%s: building the evaluation graph", cfg.Name)
	}
	vm := G.NewTapeMachine(n.G, cfg.vmOpts()...)
	defer vm.Close()
	shape := append([]int{batch}, xShape[1:]...)
	right := 0
	for start := from; start < to; start += batch {
		idx := make([]int, batch)
		for i := range idx {
			idx[i] = start + i
		}
		x, _, labels := Batch(cfg.Dtype, d, idx, shape, cfg.Classes)
		if err := G.Let(n.X, x); err != nil {
			return 0, err
		}
		if err := vm.RunAll(); err != nil {
			return 0, err
		}
		pred := Argmax(Floats(n.Logits.Value()), batch, cfg.Classes)
		for i := range pred {
			if pred[i] == labels[i] {
				right++
			}
		}
		vm.Reset()
	}
	return right, nil
}

// EpochShown reports whether the progress line of epoch (1-based, of epochs) is printed when
// the output is not a terminal: every k-th epoch with k = ⌈epochs/10⌉, and the last, so a log
// holds at most about ten lines per run.
func EpochShown(epoch, epochs int) bool {
	every := (epochs + 9) / 10
	return epoch == epochs || epoch%every == 0
}

// Run trains from params on trainSet (shuffled each epoch), prints a progress bar per epoch
// to out, and evaluates on testSet. xShape is the shape of one input batch.
func Run(cfg Config, build BuildFunc, params []*tensor.Dense, grad GradFunc, gradName string, trainSet, testSet *Data, xShape []int, out io.Writer) (*Result, error) {
	perEpoch := trainSet.N / cfg.Batch
	if perEpoch == 0 {
		return nil, errors.Errorf("%s: %d training examples is fewer than one batch of %d", cfg.Name, trainSet.N, cfg.Batch)
	}
	tr, err := NewTrainer(cfg, build, params, grad)
	if err != nil {
		return nil, err
	}
	defer tr.VM.Close()
	rng := rand.New(rand.NewSource(cfg.Seed + 1))
	res := &Result{}
	var times []time.Duration
	fmt.Fprintf(out, "training %s (%v, batch %d) with %s\n", cfg.Name, cfg.Dtype, cfg.Batch, gradName)
	epochs := cfg.Epochs // the epochs that run: -steps may end the run earlier
	if cfg.Steps > 0 {
		epochs = min(epochs, (cfg.Steps+perEpoch-1)/perEpoch)
	}
	if k := (epochs + 9) / 10; !cfg.TTY && k > 1 {
		fmt.Fprintf(out, "(output is not a terminal: one progress line every %d epochs, and the last)\n", k)
	}
	for epoch := 1; epoch <= epochs; epoch++ {
		order := rng.Perm(trainSet.N)
		steps := perEpoch
		if cfg.Steps > 0 && res.Steps+steps > cfg.Steps {
			steps = cfg.Steps - res.Steps
		}
		barOut := out
		if !cfg.TTY && !EpochShown(epoch, epochs) {
			barOut = io.Discard
		}
		bar := NewProgress(barOut, fmt.Sprintf("epoch %d", epoch), steps, cfg.TTY)
		var sumLoss, sumAcc float64
		for b := 0; b < steps; b++ {
			x, y, labels := Batch(cfg.Dtype, trainSet, order[b*cfg.Batch:(b+1)*cfg.Batch], xShape, cfg.Classes)
			t0 := time.Now()
			loss, acc, err := tr.Step(x, y, labels)
			if err != nil {
				return nil, errors.Wrapf(err, "%s: step %d", cfg.Name, res.Steps+1)
			}
			times = append(times, time.Since(t0))
			if math.IsNaN(loss) {
				return nil, errors.Errorf("%s: loss became NaN at step %d", cfg.Name, res.Steps+1)
			}
			res.Steps++
			res.Curve.Add(loss, acc)
			sumLoss += loss
			sumAcc += acc
			bar.Update(b+1, sumLoss/float64(b+1), sumAcc/float64(b+1), Median(times))
		}
		if cfg.Steps > 0 && res.Steps >= cfg.Steps {
			break
		}
	}
	res.StepTime = Median(times)
	if res.TestAcc, err = Evaluate(cfg, build, tr.Params(), testSet, xShape); err != nil {
		return nil, err
	}
	return res, nil
}

// GradientDifference computes the gradients of one batch with two autodiffs from the same
// parameters and returns the largest absolute difference over all parameters.
func GradientDifference(cfg Config, build BuildFunc, params []*tensor.Dense, a, b GradFunc, x, y *tensor.Dense) (float64, error) {
	var grads [2][][]float64
	for k, grad := range []GradFunc{a, b} {
		tr, err := NewTrainer(cfg, build, params, grad)
		if err != nil {
			return 0, err
		}
		if err := tr.Forward(x, y); err != nil {
			tr.VM.Close()
			return 0, err
		}
		for _, n := range tr.Net.Learn {
			gv, err := n.Grad()
			if err != nil {
				tr.VM.Close()
				return 0, errors.Wrapf(err, "gradient of %s", n.Name())
			}
			grads[k] = append(grads[k], append([]float64{}, Floats(gv)...))
		}
		tr.VM.Close()
	}
	worst := 0.0
	for i := range grads[0] {
		if len(grads[0][i]) != len(grads[1][i]) {
			return 0, errors.Errorf("gradient %d: %d vs %d elements", i, len(grads[0][i]), len(grads[1][i]))
		}
		for j := range grads[0][i] {
			worst = math.Max(worst, math.Abs(grads[0][i][j]-grads[1][i][j]))
		}
	}
	return worst, nil
}

// FDVerdict says which of bulkad's and Gorgonia's gradients agree with central finite
// differences on the batch (x, y) at params: it runs gradcheck.Check on the training graph
// (probes entries per parameter) and returns one line per autodiff. For a graph with random
// operations (dropout), whose every run draws new values, only bulkad's side is checked: Check
// holds bulkad's draw fixed for the differences, while Gorgonia's graph draws its own.
func FDVerdict(cfg Config, build BuildFunc, params []*tensor.Dense, x, y *tensor.Dense, probes int) (string, error) {
	cl := make([]*tensor.Dense, len(params))
	for i, p := range params {
		cl[i] = p.Clone().(*tensor.Dense)
	}
	n, err := build(cfg.Dtype, cfg.Batch, cl, true)
	if err != nil {
		return "", errors.Wrapf(err, "%s: building the graph", cfg.Name)
	}
	if err := G.Let(n.X, x); err != nil {
		return "", err
	}
	if err := G.Let(n.Y, y); err != nil {
		return "", err
	}
	rep, err := gradcheck.Check(n.Cost, n.Learn, gradcheck.WithMaxProbes(probes))
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "gradcheck.Check on that batch (central finite differences in float64, %d entries per parameter):\n", probes)
	random := false
	worst, gworst, gbad := 0.0, 0.0, ""
	for _, nr := range rep.Nodes {
		worst = math.Max(worst, nr.BulkadVsFD.MaxAbs)
		random = random || nr.RaisedVsArtifact != nil
		if s := nr.GorgoniaVsFD; s != nil {
			if s.MaxAbs > gworst {
				gworst = s.MaxAbs
			}
			if !s.OK && gbad == "" {
				gbad = nr.Name
			}
		}
	}
	switch {
	case rep.BulkadError != "" || rep.RaisedError != "":
		fmt.Fprintf(&b, "  bulkad.Grad: failed: %s%s\n", rep.BulkadError, rep.RaisedError)
	case rep.OK():
		fmt.Fprintf(&b, "  bulkad.Grad agrees with them (largest error %.1e)\n", worst)
	default:
		fmt.Fprintf(&b, "  bulkad.Grad DISAGREES with them (largest error %.1e):\n%s", worst, rep)
	}
	switch {
	case random:
		b.WriteString("  gorgonia.Grad is not checked: the graph has random operations (dropout) whose values each graph draws anew, so the difference above also reflects two different draws\n")
	case rep.GorgoniaError != "":
		fmt.Fprintf(&b, "  gorgonia.Grad failed: %s\n", rep.GorgoniaError)
	case gbad != "" && rep.OK():
		fmt.Fprintf(&b, "  gorgonia.Grad disagrees with them (largest error %.1e, first on %s): the difference above is Gorgonia's error\n", gworst, gbad)
	case gbad != "":
		fmt.Fprintf(&b, "  gorgonia.Grad disagrees with them too (largest error %.1e, first on %s)\n", gworst, gbad)
	default:
		fmt.Fprintf(&b, "  gorgonia.Grad agrees with them (largest error %.1e)\n", gworst)
	}
	return b.String(), nil
}

// Quick trains ex the way the examples' tests do: its built-in data (n examples, 0 for the
// example's default, shuffled with dataSeed), a copy of its defaults changed by edit (nil for
// none), parameters drawn with initSeed, grad as the autodiff. It returns the result and the
// data sets; an error carries the training output.
func Quick(ex Example, grad GradFunc, n int, dataSeed, initSeed int64, edit func(*Config)) (*Result, *Data, *Data, error) {
	trainSet, testSet, _, err := ex.Load("", n, dataSeed)
	if err != nil {
		return nil, nil, nil, err
	}
	cfg := ex.Defaults
	cfg.Name = ex.Name
	if edit != nil {
		edit(&cfg)
	}
	var out bytes.Buffer
	res, err := Run(cfg, ex.Build, ex.Init(cfg.Dtype, initSeed), grad, "grad", trainSet, testSet, ex.XShape(cfg.Batch), &out)
	if err != nil {
		return nil, nil, nil, errors.Wrapf(err, "output:\n%s", out.String())
	}
	return res, trainSet, testSet, nil
}

// Mean is the arithmetic mean of v.
func Mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// Reporter is what CheckLearned reports through (a *testing.T).
type Reporter interface {
	Helper()
	Logf(format string, args ...any)
	Errorf(format string, args ...any)
}

// CheckLearned is the examples' learning test: it logs the run and reports an error unless
// the mean loss over the last lastK steps is below ratio times the mean over the first firstK,
// and the held-out accuracy is at least minAcc (chance describes minAcc in the message).
func CheckLearned(t Reporter, res *Result, firstK, lastK int, ratio, minAcc float64, chance string) {
	t.Helper()
	loss := res.Curve.Loss
	n := len(loss)
	if n < firstK || n < lastK {
		t.Errorf("%d steps, want at least %d", n, max(firstK, lastK))
		return
	}
	first, last := Mean(loss[:firstK]), Mean(loss[n-lastK:])
	t.Logf("%d steps, loss %.3f -> %.3f, held-out accuracy %.3f", n, first, last, res.TestAcc)
	if !(last < ratio*first) {
		t.Errorf("loss did not decrease enough: %.3f -> %.3f, want below %.2f of the start", first, last, ratio)
	}
	if !(res.TestAcc >= minAcc) {
		t.Errorf("held-out accuracy %.3f, want ≥ %.3f (%s)", res.TestAcc, minAcc, chance)
	}
}
