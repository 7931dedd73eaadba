package main

import (
	_ "embed"
	"fmt"
	"io"
	"math/rand"
	"strings"
	"time"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/accel"
	"github.com/bulkad/bulkad/examples/data"
	"github.com/bulkad/bulkad/examples/internal/train"
)

// digitsCNN is a small ResNet-style CNN exported from PyTorch by gen_cnn.py (input [32,1,28,28],
// output [32,10] logits), with PyTorch's initial weights.
//
//go:embed digits_cnn.onnx
var digitsCNN []byte

// cnnBatch is the batch size digits_cnn.onnx was exported with.
const cnnBatch = 32

// cnnOptions are the flags of -cnn.
type cnnOptions struct {
	steps, nTrain int
	lr            float64
	seed          int64
	model         []byte
	saveTo        string
}

// runCNN trains the imported CNN on the built-in procedural digits with bulkad gradients and
// Adam (every parameter except batch norm's running statistics, which stay what the file
// holds), in mini-batches of 32, and reports the held-out accuracy.
func runCNN(o cnnOptions, out io.Writer) error {
	m, err := bulkad.ImportONNX(o.model)
	if err != nil {
		return errors.Wrap(err, "finetune: -cnn")
	}
	xShape := []int{cnnBatch, 1, 28, 28}
	if len(m.Inputs) != 1 || len(m.Outputs) != 1 || !m.Inputs[0].Shape().Eq(tensor.Shape(xShape)) || !m.Outputs[0].Shape().Eq(tensor.Shape{cnnBatch, 10}) {
		return errors.Errorf("finetune: -cnn: the model must map one [32 1 28 28] input to one [32 10] output; it has inputs %v and outputs %v", shapes(m.Inputs), shapes(m.Outputs))
	}
	var learn G.Nodes
	var names []string
	for i, p := range m.Params {
		name := m.ParamNames[i]
		if strings.HasSuffix(name, "running_mean") || strings.HasSuffix(name, "running_var") {
			continue
		}
		learn, names = append(learn, p), append(names, name)
	}
	fmt.Fprintf(out, "imported a CNN with %d parameter tensors from ONNX opset %d; training %d of them (%s …)\n", len(m.Params), m.Opset, len(learn), strings.Join(names[:min(3, len(names))], ", "))
	trainSet, err := data.Digits(o.nTrain, o.seed)
	if err != nil {
		return err
	}
	testSet, err := data.Digits(8*cnnBatch, o.seed+1000)
	if err != nil {
		return err
	}
	dt := m.Inputs[0].Dtype()
	g := m.Graph
	y := G.NewMatrix(g, dt, G.WithShape(cnnBatch, 10), G.WithName("y"), G.WithInit(G.Zeroes()))
	logits := m.Outputs[0]
	var logitsVal G.Value
	perRow, berr := logLikelihoods(logits, y, &logitsVal)
	must := train.Must(&berr)
	cost := must(G.Neg(must(G.Mean(perRow))))
	if berr != nil {
		return errors.Wrap(berr, "finetune: -cnn: loss")
	}
	if _, err := bulkad.Grad(cost, learn...); err != nil {
		return errors.Wrap(err, "finetune: -cnn")
	}
	vm := G.NewTapeMachine(g, G.BindDualValues(learn...), G.WithEngine(accel.Engine{}))
	defer vm.Close()
	solver := G.NewAdamSolver(G.WithLearnRate(o.lr))
	set := func(s *data.Set, idx []int) ([]int, error) {
		d := &train.Data{X: s.Images, Labels: s.Labels, N: s.N, Features: data.Pixels}
		xb, yb, labels := train.Batch(dt, d, idx, xShape, 10)
		if err := G.Let(m.Inputs[0], xb); err != nil {
			return nil, err
		}
		return labels, G.Let(y, yb)
	}
	rng := rand.New(rand.NewSource(o.seed))
	order := rng.Perm(trainSet.N)
	var times []time.Duration
	var first, last float64
	for s := 0; s < o.steps; s++ {
		if (s+1)*cnnBatch%trainSet.N < cnnBatch {
			order = rng.Perm(trainSet.N)
		}
		idx := make([]int, cnnBatch)
		for i := range idx {
			idx[i] = order[(s*cnnBatch+i)%trainSet.N]
		}
		if _, err := set(trainSet, idx); err != nil {
			return err
		}
		t0 := time.Now()
		if err := vm.RunAll(); err != nil {
			return errors.Wrapf(err, "finetune: -cnn: step %d", s+1)
		}
		if err := solver.Step(G.NodesToValueGrads(learn)); err != nil {
			return errors.Wrap(err, "finetune: -cnn: solver")
		}
		vm.Reset()
		times = append(times, time.Since(t0))
		loss := train.Floats(cost.Value())[0]
		if s == 0 {
			first = loss
		}
		last = loss
	}
	right := 0
	for b := 0; b < testSet.N/cnnBatch; b++ {
		idx := make([]int, cnnBatch)
		for i := range idx {
			idx[i] = b*cnnBatch + i
		}
		labels, err := set(testSet, idx)
		if err != nil {
			return err
		}
		if err := vm.RunAll(); err != nil {
			return err
		}
		vm.Reset()
		for i, p := range train.Argmax(train.Floats(logitsVal), cnnBatch, 10) {
			if p == labels[i] {
				right++
			}
		}
	}
	fmt.Fprintf(out, "training loss %.4f → %.4f in %d steps of %d digits (median %s/step), held-out accuracy %.2f%% (%d digits)\n",
		first, last, o.steps, cnnBatch, train.FormatDuration(train.Median(times)), 100*float64(right)/float64(testSet.N), testSet.N)
	if o.saveTo != "" {
		if err := m.Save(o.saveTo); err != nil {
			return errors.Wrap(err, "finetune: -save")
		}
		fmt.Fprintf(out, "trained model written to %s\n", o.saveTo)
	}
	return nil
}

// logLikelihoods is Σ_j y_ij·log softmax(logits)_ij for each row i: the log-likelihood of
// each row's one-hot target y. The logits' value is pinned in *val (Gorgonia may run a later
// op in place on it).
func logLikelihoods(logits, y *G.Node, val *G.Value) (*G.Node, error) {
	var err error
	must := train.Must(&err)
	G.Read(logits, val)
	return must(G.Sum(must(G.HadamardProd(must(G.LogSoftMax(logits)), y)), 1)), err
}
