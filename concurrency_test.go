package bulkad_test

import (
	"fmt"
	"math"
	"math/rand"
	"sync"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/bulkad/bulkad"
)

// TestGradConcurrent calls bulkad.Grad on 8 goroutines at once, each with its own graph
// (cost = Σ tanh(x·w) + Σ b², with its own shapes and values), runs each graph's TapeMachine
// several times, and checks every gradient against the hand derivation
// ∂/∂w = xᵀ·(1 − tanh²(x·w)), ∂/∂b = 2b computed in plain Go. Under -race (.ci/run) it also
// shows that Grad shares no unsynchronised state between goroutines.
func TestGradConcurrent(t *testing.T) {
	const workers = 8
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for k := 0; k < workers; k++ {
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			errs[k] = gradWorker(k)
		}(k)
	}
	wg.Wait()
	for k, err := range errs {
		if err != nil {
			t.Errorf("goroutine %d: %v", k, err)
		}
	}
}

func gradWorker(k int) error {
	rng := rand.New(rand.NewSource(int64(k)))
	n, m, p := 2+k%3, 3+k%4, 1+k%2
	xs := make([]float64, n*m)
	ws := make([]float64, m*p)
	bs := make([]float64, p)
	for _, s := range [][]float64{xs, ws, bs} {
		for i := range s {
			s[i] = rng.Float64()*2 - 1
		}
	}
	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(n, m), G.WithName("x"), G.WithValue(tensor.New(tensor.WithShape(n, m), tensor.WithBacking(append([]float64(nil), xs...)))))
	w := G.NewMatrix(g, tensor.Float64, G.WithShape(m, p), G.WithName("w"), G.WithValue(tensor.New(tensor.WithShape(m, p), tensor.WithBacking(append([]float64(nil), ws...)))))
	b := G.NewVector(g, tensor.Float64, G.WithShape(p), G.WithName("b"), G.WithValue(tensor.New(tensor.WithShape(p), tensor.WithBacking(append([]float64(nil), bs...)))))
	th, err := G.Tanh(G.Must(G.Mul(x, w)))
	if err != nil {
		return err
	}
	cost, err := G.Add(G.Must(G.Sum(th)), G.Must(G.Sum(G.Must(G.Square(b)))))
	if err != nil {
		return err
	}
	grads, err := bulkad.Grad(cost, w, b)
	if err != nil {
		return err
	}
	// hand derivation
	wantW := make([]float64, m*p)
	for i := 0; i < n; i++ {
		for j := 0; j < p; j++ {
			s := 0.0
			for l := 0; l < m; l++ {
				s += xs[i*m+l] * ws[l*p+j]
			}
			d := 1 - math.Tanh(s)*math.Tanh(s)
			for l := 0; l < m; l++ {
				wantW[l*p+j] += xs[i*m+l] * d
			}
		}
	}
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	for run := 0; run < 3; run++ {
		if err := vm.RunAll(); err != nil {
			return err
		}
		gw := grads[0].Value().Data().([]float64)
		gb := grads[1].Value().Data().([]float64)
		for i := range wantW {
			if math.Abs(gw[i]-wantW[i]) > 1e-12*(1+math.Abs(wantW[i])) {
				return fmt.Errorf("run %d: ∂/∂w[%d] = %v, want %v", run, i, gw[i], wantW[i])
			}
		}
		for i := range bs {
			if math.Abs(gb[i]-2*bs[i]) > 1e-12 {
				return fmt.Errorf("run %d: ∂/∂b[%d] = %v, want %v", run, i, gb[i], 2*bs[i])
			}
		}
		vm.Reset()
	}
	return nil
}
