package machine

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/examples/models"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// kindModels are the zoo models of examples/bench at its sizes.
var kindModels = []struct {
	name string
	mk   build
}{
	{"mlp", func(dt tensor.Dtype) (*models.Model, error) { return models.MLP(dt, 128, []int{784, 512, 10}, 1) }},
	{"convnet", func(dt tensor.Dtype) (*models.Model, error) { return models.ConvNet(dt, 32, 28, 28, 32, 10, 0, 1) }},
	{"rnn", func(dt tensor.Dtype) (*models.Model, error) { return models.RNN(dt, 32, 64, 128, 16, 1) }},
	{"attention", func(dt tensor.Dtype) (*models.Model, error) { return models.Attention(dt, 128, 64, 1) }},
	{"convnet-mnist", func(dt tensor.Dtype) (*models.Model, error) { return models.ConvNetMNIST(dt, 50, [4]float64{}, 1) }},
	{"resnet", func(dt tensor.Dtype) (*models.Model, error) { return models.ResNet(dt, 32, 16, 16, 2, 10, 1) }},
	{"mobilenet", func(dt tensor.Dtype) (*models.Model, error) { return models.MobileNet(dt, 32, 16, 32, 3, 10, 1) }},
	{"transformer", func(dt tensor.Dtype) (*models.Model, error) { return models.Transformer(dt, 4, 64, 128, 4, 512, 1, 1) }},
	{"lstm", func(dt tensor.Dtype) (*models.Model, error) { return models.LSTMSeq(dt, 32, 64, 128, 16, 1) }},
}

// BenchmarkKernelKinds runs the compiled plans of the bench's zoo models (bulkad.Grad's graph
// on a lean machine, as examples/bench -machine steps it) and reports, per step, the time of
// each kind of kernel (the plan's steps timed one by one, summed by Go type: Fused-µs/step,
// MatMul-µs/step, …) and of all of them (kernels-µs/step). Comparing two thread counts shows
// which kernels a split helps and which it slows:
//
//	go test ./machine -run '^$' -bench 'KernelKinds/mobilenet' -benchtime 20x -cpu 1,2
func BenchmarkKernelKinds(b *testing.B) {
	for _, km := range kindModels {
		for _, dt := range []tensor.Dtype{G.Float64, G.Float32} {
			b.Run(km.name+"/"+dt.String(), func(b *testing.B) {
				m, err := km.mk(dt)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := bulkad.Grad(m.Cost, m.Wrt...); err != nil {
					b.Fatal(err)
				}
				vm, err := New(m.G, BindDualValues(m.Wrt...), ReuseValues(), Lean(m.Cost))
				if err != nil {
					b.Fatal(err)
				}
				defer vm.Close()
				for range 2 { // node values in place, buffers grown
					if err := vm.RunAll(); err != nil {
						b.Fatal(err)
					}
					vm.Reset()
				}
				kinds := map[string]time.Duration{}
				var total time.Duration
				outs := make([]any, len(vm.plans)) // packed outputs kept between runs, as the machine keeps them
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					for j, p := range vm.plans {
						d, err := timedRun(p, &outs[j], kinds)
						if err != nil {
							b.Fatal(err)
						}
						total += d
					}
				}
				b.StopTimer()
				for k, d := range kinds {
					b.ReportMetric(float64(d.Microseconds())/float64(b.N), k+"-µs/step")
				}
				b.ReportMetric(float64(total.Microseconds())/float64(b.N), "kernels-µs/step")
			})
		}
	}
}

// timedRun runs plan p once on its nodes' current values into *out (allocated on the first
// run) with every step timed, adds each step's time to kinds under its kernel's type name
// (without package) and returns the sum.
func timedRun(p *planRun, out *any, kinds map[string]time.Duration) (time.Duration, error) {
	args := make([]any, len(p.ins))
	for j, s := range p.ins {
		if s.node == nil {
			args[j] = s.konst
			continue
		}
		f, err := Flat(s.node.Value())
		if err != nil {
			return 0, err
		}
		args[j] = f
	}
	if *out == nil {
		switch p.kp.Dtype() {
		case core.Float64:
			*out = make([]float64, p.kp.OutLen())
		case core.Float32:
			*out = make([]float32, p.kp.OutLen())
		default:
			return 0, fmt.Errorf("machine: timed run: plan of %v", p.kp.Dtype())
		}
	}
	times := make([]time.Duration, p.kp.Steps())
	if err := p.kp.RunTimed(*out, args, times); err != nil {
		return 0, err
	}
	var sum time.Duration
	for j, d := range times {
		name := fmt.Sprintf("%T", p.kp.StepKernel(j))
		name = name[strings.LastIndex(name, ".")+1:]
		kinds[name] += d
		sum += d
	}
	return sum, nil
}
