package tests

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/examples/opgraphs"
	"github.com/bulkad/bulkad/onnx/onnxtest"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// layerFixtures are the models of onnx/testdata/gen_layers.py: torch.nn modules exported by
// PyTorch (recurrent layers, 1-D and 3-D convolution and pooling, transposed convolution,
// Resize and Upsample at operator sets 9 to 13) and graphs written with onnx.helper for the
// attributes PyTorch never exports (auto_pad, clip, peepholes, linear_before_reset = 0,
// asymmetric linear and cubic resizing, ConvTranspose's output_shape), whose expected values
// are PyTorch computations written from the ONNX specification. check marks the ones that
// gradcheck.Check (finite differences through the raised nodes) also runs on.
var layerFixtures = []struct {
	name  string
	check bool
}{
	{"lstm", true}, {"lstm16", false}, {"lstm_bi2", true}, {"gru_h0", true}, {"gru_bi2", false},
	{"rnn_bi", false}, {"rnn_relu2", false}, {"rnn_spec", true},
	{"conv1d", true}, {"conv3d", true}, {"pool2d", false}, {"autopad", true},
	{"convt", true}, {"convt1d", false}, {"convt3d", false}, {"convt_spec", false},
	{"upsample9", false}, {"resize10", false}, {"resize11", true}, {"resize13", false},
	{"resize_linear1d", false}, {"resize_trilinear", true},
	{"resize_spec0", false}, {"resize_spec1", false}, {"resize_spec2", false},
	{"resize_spec3", false}, {"resize_spec4", true}, {"resize_spec5", false}, {"resize_spec6", false},
}

// TestONNXLayers: every layer fixture imports with bulkad.ImportONNXFile as a few Gorgonia
// nodes (coarse raising: one plan node whatever the sequence length or the number of
// layers), its forward pass on a TapeMachine equals PyTorch's output and bulkad.Grad of
// loss = Σ output ⊙ r equals PyTorch's autograd gradient of every parameter (1e-9 / 1e-8
// relative in float64, 1e-5 / 1e-4 in float32), and the gradient adds a few nodes.
func TestONNXLayers(t *testing.T) {
	for _, fx := range layerFixtures {
		for _, tag := range []string{"f64", "f32"} {
			fx, tag := fx, tag
			t.Run(fx.name+"_"+tag, func(t *testing.T) {
				checkONNXFixture(t, onnxCase{base: fixtureBase("layers", fx.name, tag), tag: tag, coarse: true, check: fx.check && tag == "f64"})
			})
		}
	}
}

// TestONNXLSTM16Nodes: an LSTM unrolled over 16 steps imports as its input, its parameters,
// its output and at most 2 nodes more, and the gradient of a loss on it adds at most one node
// per parameter and 2 more (the unrolled recurrence and its reverse pass are one plan each).
func TestONNXLSTM16Nodes(t *testing.T) {
	m, err := bulkad.ImportONNXFile(filepath.Join("..", "onnx", "testdata", "layers", "lstm16_f32.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	base := len(m.Inputs) + len(m.Params) + len(m.Outputs)
	n := len(m.Graph.AllNodes())
	if n > base+2 {
		t.Errorf("the imported 16-step LSTM has %d nodes, want at most %d", n, base+2)
	}
	r := G.NewTensor(m.Graph, tensor.Float32, 1, G.WithShape(m.Outputs[0].Shape()...), G.WithName("r"),
		G.WithValue(tensor.New(tensor.WithShape(m.Outputs[0].Shape()...), tensor.Of(tensor.Float32))))
	cost := G.Must(G.Sum(G.Must(G.HadamardProd(m.Outputs[0], r))))
	before := len(m.Graph.AllNodes())
	if _, err := bulkad.Grad(cost, m.Params...); err != nil {
		t.Fatal(err)
	}
	added := len(m.Graph.AllNodes()) - before
	if added > len(m.Params)+2 {
		t.Errorf("the gradient added %d nodes for %d parameters, want at most %d", added, len(m.Params), len(m.Params)+2)
	}
	t.Logf("16-step LSTM: %d nodes imported (%d inputs, parameters and outputs), %d added by the gradient (%d parameters)", n, base, added, len(m.Params))
}

// BenchmarkONNXLSTM16 measures the 16-step LSTM fixture (float32, batch 4, 8 inputs, 16
// hidden units): set-up (import, bulkad.Grad, the TapeMachine) once, then one training step
// (forward and gradient) per iteration. onnx/testdata/bench_lstm16.py times PyTorch on the
// same model.
//
//	go test ./tests -run XXX -bench ONNXLSTM16 -benchtime 200x
func BenchmarkONNXLSTM16(b *testing.B) {
	start := time.Now()
	m, err := bulkad.ImportONNXFile(filepath.Join("..", "onnx", "testdata", "layers", "lstm16_f32.onnx"))
	if err != nil {
		b.Fatal(err)
	}
	imported := time.Now()
	fx, err := onnxtest.Load(filepath.Join("..", "onnx", "testdata", "layers", "lstm16_f32.json"))
	if err != nil {
		b.Fatal(err)
	}
	if err := G.Let(m.Inputs[0], opgraphs.Dense(tensor.Float32, tensor.Shape(fx.Input.Shape), fx.Input.Data)); err != nil {
		b.Fatal(err)
	}
	r := G.NewTensor(m.Graph, tensor.Float32, 1, G.WithShape(fx.Output.Shape...), G.WithName("r"),
		G.WithValue(opgraphs.Dense(tensor.Float32, tensor.Shape(fx.Output.Shape), fx.R)))
	cost := G.Must(G.Sum(G.Must(G.HadamardProd(m.Outputs[0], r))))
	gradStart := time.Now()
	if _, err := bulkad.Grad(cost, m.Params...); err != nil {
		b.Fatal(err)
	}
	differentiated := time.Now()
	vm := G.NewTapeMachine(m.Graph)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		b.Fatal(err)
	}
	vm.Reset()
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	importMS, gradMS, firstMS := ms(imported.Sub(start)), ms(differentiated.Sub(gradStart)), ms(time.Since(differentiated))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := vm.RunAll(); err != nil {
			b.Fatal(err)
		}
		vm.Reset()
	}
	b.StopTimer()
	b.ReportMetric(importMS, "import-ms")
	b.ReportMetric(gradMS, "grad-ms")
	b.ReportMetric(firstMS, "vm+first-run-ms")
}
