// Command finetune loads a model exported from PyTorch as ONNX (shipped: iris_mlp.onnx, an MLP
// 4 → 16 → 3 pre-trained for only 15 steps, made by gen.py) with bulkad.ImportONNX, adds a
// cross-entropy loss with Gorgonia ops, and fine-tunes every parameter with bulkad.Grad and a
// Gorgonia Adam solver on Fisher's iris data (built in): 120 flowers train, 30 are held out.
//
//	go run ./examples/finetune
//	go run ./examples/finetune -steps 300 -plot finetune.png
//	go run ./examples/finetune -model my.onnx     (input [150,4], output [150,3] logits)
//	go run ./examples/finetune -save tuned.onnx   (writes the fine-tuned model back as ONNX)
//	go run ./examples/finetune -cnn               (a ResNet-style CNN from PyTorch, on built-in digits)
//
// -cnn imports digits_cnn.onnx (made by gen_cnn.py: a 3×3 stem with batch norm, a basic
// residual block, a stride-2 convolution, global average pooling and a linear layer, with
// PyTorch's initial weights) and trains it on the built-in procedural digits in mini-batches of
// 32 with bulkad gradients and Adam; -steps, -lr, -seed, -model and -save apply to it too.
//
// The model sees all 150 flowers at once (its exported batch size); the loss is the mean
// cross-entropy over the 120 training flowers only (a 0/1 row mask), and the held-out accuracy
// is read from the other 30 rows.
package main

import (
	_ "embed"
	"fmt"
	"io"
	"math"
	"math/rand"
	"os"
	"time"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/examples/data"
	"github.com/bulkad/bulkad/examples/internal/train"
)

//go:embed iris_mlp.onnx
var shipped []byte

func main() {
	train.RunCommand(run)
}

func run(args []string, out io.Writer) error {
	fs := train.NewFlagSet("finetune", "Fine-tunes an ONNX model (default: the shipped iris MLP) with bulkad gradients.", out)
	steps := fs.Int("steps", 200, "Adam steps (full batch of the 120 training flowers)")
	lr := fs.Float64("lr", 0.02, "Adam learning rate")
	plotTo := fs.String("plot", "", "write the loss/accuracy curve to this PNG file")
	modelPath := fs.String("model", "", "an .onnx file to fine-tune instead of the shipped one (input [150,4], output [150,3])")
	seed := fs.Int64("seed", 1, "seed of the train/held-out split")
	saveTo := fs.String("save", "", "write the fine-tuned model to this .onnx file (the imported file with the new parameter values)")
	cnn := fs.Bool("cnn", false, "train the shipped ResNet-style CNN (digits_cnn.onnx, from PyTorch) on the built-in digits instead")
	nCNN := fs.Int("n", 4096, "with -cnn: built-in digits to train on")
	if help, err := train.ParseFlags(fs, args); help || err != nil {
		return err
	}
	if *steps <= 0 {
		return errors.New("finetune: -steps must be positive")
	}
	if err := train.CheckLearnRate("finetune", *lr); err != nil {
		return err
	}
	if *plotTo != "" {
		if err := train.CheckPlotPath(*plotTo); err != nil {
			return errors.Wrap(err, "finetune: -plot")
		}
	}
	if *saveTo != "" {
		if err := train.CheckWritable(*saveTo); err != nil {
			return errors.Wrap(err, "finetune: -save")
		}
	}
	raw := shipped
	if *cnn {
		raw = digitsCNN
	}
	if *modelPath != "" {
		var err error
		if raw, err = os.ReadFile(*modelPath); err != nil {
			return errors.Wrap(err, "finetune: -model")
		}
	}
	if *cnn {
		if *nCNN < cnnBatch {
			return errors.Errorf("finetune: -n %d: want at least one batch of %d", *nCNN, cnnBatch)
		}
		return runCNN(cnnOptions{steps: *steps, nTrain: *nCNN, lr: *lr, seed: *seed, model: raw, saveTo: *saveTo}, out)
	}
	m, err := bulkad.ImportONNX(raw)
	if err != nil {
		return errors.Wrap(err, "finetune")
	}
	if len(m.Inputs) != 1 || len(m.Outputs) != 1 || !m.Inputs[0].Shape().Eq(tensor.Shape{150, 4}) || !m.Outputs[0].Shape().Eq(tensor.Shape{150, 3}) {
		return errors.Errorf("finetune: the model must map one [150 4] input to one [150 3] output; it has inputs %v and outputs %v", shapes(m.Inputs), shapes(m.Outputs))
	}
	fmt.Fprintf(out, "imported %d parameters (%v) from ONNX opset %d\n", len(m.Params), m.ParamNames, m.Opset)

	x, labels, trainRows, err := irisData(*seed)
	if err != nil {
		return err
	}
	dt := m.Inputs[0].Dtype()
	if err := G.Let(m.Inputs[0], train.Dense(dt, []int{150, 4}, x)); err != nil {
		return err
	}
	onehot := make([]float64, 150*3)
	train.OneHot(onehot, labels, 3)
	mask := make([]float64, 150)
	for _, r := range trainRows {
		mask[r] = 1
	}
	g := m.Graph
	y := G.NewMatrix(g, dt, G.WithShape(150, 3), G.WithName("y"), G.WithValue(train.Dense(dt, []int{150, 3}, onehot)))
	mk := G.NewVector(g, dt, G.WithShape(150), G.WithName("mask"), G.WithValue(train.Dense(dt, []int{150}, mask)))
	logits := m.Outputs[0]
	var logitsVal G.Value
	perRow, berr := logLikelihoods(logits, y, &logitsVal)
	must := train.Must(&berr)
	nTrain := G.NewConstant(float64(len(trainRows)))
	if dt == tensor.Float32 {
		nTrain = G.NewConstant(float32(len(trainRows)))
	}
	cost := must(G.Neg(must(G.HadamardDiv(must(G.Sum(must(G.HadamardProd(perRow, mk)))), nTrain))))
	if berr != nil {
		return errors.Wrap(berr, "finetune: loss")
	}
	if _, err := bulkad.Grad(cost, m.Params...); err != nil {
		return errors.Wrap(err, "finetune")
	}
	vm := G.NewTapeMachine(g, G.BindDualValues(m.Params...))
	defer vm.Close()
	solver := G.NewAdamSolver(G.WithLearnRate(*lr))

	tty := false
	if f, ok := out.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			tty = true
		}
	}
	var curve train.Curve
	bar := train.NewProgress(out, "fine-tune", *steps, tty)
	var first, last float64
	var times []time.Duration
	heldOut := 0.0
	for s := 0; s < *steps; s++ {
		t0 := time.Now()
		if err := vm.RunAll(); err != nil {
			return errors.Wrapf(err, "finetune: step %d", s+1)
		}
		loss := train.Floats(cost.Value())[0]
		pred := train.Argmax(train.Floats(logitsVal), 150, 3)
		trainAcc := accuracy(pred, labels, trainRows, true)
		heldOut = accuracy(pred, labels, trainRows, false) // before this step's update
		if err := solver.Step(G.NodesToValueGrads(m.Params)); err != nil {
			return errors.Wrap(err, "finetune: solver")
		}
		vm.Reset()
		times = append(times, time.Since(t0))
		if s == 0 {
			first = loss
		}
		last = loss
		curve.Add(loss, trainAcc)
		bar.Update(s+1, loss, trainAcc, train.Median(times))
	}
	fmt.Fprintf(out, "training loss %.4f → %.4f in %d steps (median %s/step), held-out accuracy %.2f%% (30 flowers)\n",
		first, last, *steps, train.FormatDuration(train.Median(times)), 100*heldOut)
	if *plotTo != "" {
		if err := curve.Plot(*plotTo, "fine-tuning an ONNX model with bulkad.Grad"); err != nil {
			return err
		}
		fmt.Fprintf(out, "curves written to %s\n", *plotTo)
	}
	if *saveTo != "" {
		if err := m.Save(*saveTo); err != nil {
			return errors.Wrap(err, "finetune: -save")
		}
		fmt.Fprintf(out, "fine-tuned model written to %s\n", *saveTo)
	}
	return nil
}

func shapes(ns G.Nodes) []tensor.Shape {
	var out []tensor.Shape
	for _, n := range ns {
		out = append(out, n.Shape())
	}
	return out
}

// irisData returns the 150 flowers standardised (as the model was pre-trained), their labels
// and the 120 training rows of a seeded split.
func irisData(seed int64) ([]float64, []int, []int, error) {
	feats, labels, err := data.Iris()
	if err != nil {
		return nil, nil, nil, err
	}
	var mu, sd [4]float64
	n := float64(len(feats))
	for _, f := range feats {
		for j := range mu {
			mu[j] += f[j] / n
		}
	}
	for _, f := range feats {
		for j := range sd {
			sd[j] += (f[j] - mu[j]) * (f[j] - mu[j]) / (n - 1)
		}
	}
	x := make([]float64, 0, 4*len(feats))
	for _, f := range feats {
		for j := range f {
			x = append(x, (f[j]-mu[j])/math.Sqrt(sd[j]))
		}
	}
	order := rand.New(rand.NewSource(seed)).Perm(len(feats))
	return x, labels, order[:120], nil
}

// accuracy over the training rows (train) or the other rows.
func accuracy(pred, labels, trainRows []int, trainSet bool) float64 {
	in := map[int]bool{}
	for _, r := range trainRows {
		in[r] = true
	}
	right, total := 0, 0
	for i := range labels {
		if in[i] != trainSet {
			continue
		}
		total++
		if pred[i] == labels[i] {
			right++
		}
	}
	return float64(right) / float64(total)
}
