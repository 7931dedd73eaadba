package main

import (
	"math/rand"
	"runtime"
	"testing"

	"gorgonia.org/tensor"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/examples/internal/train"
)

// TestLongRunHeapStable trains the MLP (a narrow one: 784-16-10, batch 10) for 2,000 steps with
// bulkad's gradient nodes and requires the live heap after step 2,000 to be within 10% of the
// live heap after step 200: a step must not leave memory behind (cached kernels, index tables,
// values kept per run). Both heaps are measured after a full garbage collection.
func TestLongRunHeapStable(t *testing.T) {
	ex, trainSet := exampleWithDigits(t, 16, 500, 1)
	cfg := ex.Defaults
	cfg.Name, cfg.Dtype, cfg.Batch = ex.Name, tensor.Float64, 10
	tr, err := train.NewTrainer(cfg, ex.Build, ex.Init(cfg.Dtype, 1), bulkad.Grad)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.VM.Close()
	live := func() uint64 {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	rng := rand.New(rand.NewSource(2))
	var at200, at2000 uint64
	var first, last float64
	for step := 1; step <= 2000; step++ {
		idx := make([]int, cfg.Batch)
		for i := range idx {
			idx[i] = rng.Intn(trainSet.N)
		}
		x, y, labels := train.Batch(cfg.Dtype, trainSet, idx, ex.XShape(cfg.Batch), cfg.Classes)
		loss, _, err := tr.Step(x, y, labels)
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		switch step {
		case 1:
			first = loss
		case 200:
			at200 = live()
		}
		last = loss
		if step == 2000 { // measured while the trainer is still in use (live)
			at2000 = live()
		}
	}
	diff := float64(at2000) - float64(at200)
	t.Logf("live heap after step 200: %d B, after step 2000: %d B (%+.1f%%); loss %.3f -> %.3f", at200, at2000, 100*diff/float64(at200), first, last)
	if diff < 0 {
		diff = -diff
	}
	if diff >= 0.1*float64(at200) {
		t.Errorf("live heap changed by %.1f%% between steps 200 and 2000 (%d -> %d bytes)", 100*diff/float64(at200), at200, at2000)
	}
	if !(last < first) {
		t.Errorf("loss did not decrease over 2000 steps: %.3f -> %.3f", first, last)
	}
}
