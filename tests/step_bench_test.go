package tests

import (
	"testing"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/examples/models"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// benchStep measures one training step (forward + gradient through the TapeMachine) with
// the given Grad on a freshly built model.
func benchStep(b *testing.B, mk func() (*models.Model, error), grad gradFunc) {
	_, vm := trainingMachine(b, mk, grad)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := vm.RunAll(); err != nil {
			b.Fatal(err)
		}
		vm.Reset()
	}
}

// BenchmarkRaisedStep compares a step with bulkad.Grad and gorgonia.Grad on the issue-9
// sizes: MLP 784-512-10 batch 128 and the small convnet (3×3 conv 1→32, relu, maxpool, FC)
// batch 32; RNN (batch 32, 64→128, 10 steps), LSTM cell (batch 32, 64→128), attention
// (64 tokens, width 64); float64 and float32.
func BenchmarkRaisedStep(b *testing.B) {
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		dt := dt
		ms := []struct {
			name string
			mk   func() (*models.Model, error)
		}{
			{"mlp", func() (*models.Model, error) { return models.MLP(dt, 128, []int{784, 512, 10}, 1) }},
			{"convnet", func() (*models.Model, error) { return models.ConvNet(dt, 32, 28, 28, 32, 10, 0, 1) }},
			{"rnn", func() (*models.Model, error) { return models.RNN(dt, 32, 64, 128, 10, 1) }},
			{"lstm", func() (*models.Model, error) { return models.LSTM(dt, 32, 64, 128, 1) }},
			{"attention", func() (*models.Model, error) { return models.Attention(dt, 64, 64, 1) }},
		}
		for _, m := range ms {
			b.Run(m.name+"/"+dt.String()+"/bulkad", func(b *testing.B) { benchStep(b, m.mk, bulkad.Grad) })
			b.Run(m.name+"/"+dt.String()+"/gorgonia", func(b *testing.B) { benchStep(b, m.mk, G.Grad) })
		}
	}
}
