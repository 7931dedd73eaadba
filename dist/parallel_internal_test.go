package dist

import (
	"math"
	"math/rand"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// fakeReduce is an in-memory all-reduce (sum) among n goroutines, for testing the packing of
// AverageGradients without MPI: every caller blocks until all n have called it.
type fakeReduce struct {
	mu   sync.Mutex
	n    int
	sum  []float64
	got  int
	done chan struct{}
}

func newFakeReduce(n int) *fakeReduce { return &fakeReduce{n: n, done: make(chan struct{})} }

func (f *fakeReduce) reduce(buf []float64, op Op) error {
	f.mu.Lock()
	if f.sum == nil {
		f.sum = make([]float64, len(buf))
	}
	for i, v := range buf {
		f.sum[i] += v
	}
	f.got++
	if f.got == f.n {
		close(f.done)
	}
	f.mu.Unlock()
	<-f.done
	copy(buf, f.sum)
	return nil
}

// TestAverageGradientsWeights: three simulated ranks with uneven shards (5, 4 and 3 examples,
// and one empty shard whose gradients are NaN) give the mean over all 12 examples — computed
// here directly from the per-example values — for the gradients, the loss and a metric.
func TestAverageGradientsWeights(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	const dim = 7
	shards := []int{5, 0, 4, 3}
	var perExample [][]float64 // per example: dim gradient values, then the loss and a metric
	for i := 0; i < 12; i++ {
		v := make([]float64, dim+2)
		for j := range v {
			v[j] = rng.NormFloat64()
		}
		perExample = append(perExample, v)
	}
	want := make([]float64, dim+2)
	for _, v := range perExample {
		for j := range v {
			want[j] += v[j] / 12
		}
	}
	f := newFakeReduce(len(shards))
	results := make([][]float64, len(shards))
	errs := make([]error, len(shards))
	var wg sync.WaitGroup
	start := 0
	for r, n := range shards {
		mean := make([]float64, dim+2)
		for _, v := range perExample[start : start+n] {
			for j := range v {
				mean[j] += v[j] / float64(n)
			}
		}
		if n == 0 {
			for j := range mean {
				mean[j] = math.NaN() // a mean over no examples
			}
		}
		start += n
		wg.Add(1)
		go func(r, n int, mean []float64) {
			defer wg.Done()
			c := &Comm{rank: r, size: len(shards)}
			grads := []floats{{f64: mean[:3]}, {f64: mean[3:dim]}}
			metrics := append([]float64{}, mean[dim:]...)
			buf := make([]float64, dim+len(metrics)+1)
			errs[r] = averageGradients(c, buf, grads, float64(n), metrics, f.reduce)
			results[r] = append(append([]float64{}, mean[:dim]...), metrics...)
		}(r, n, mean)
	}
	wg.Wait()
	for r := range shards {
		if errs[r] != nil {
			t.Fatalf("rank %d: %v", r, errs[r])
		}
		for j := range want {
			if d := math.Abs(results[r][j] - want[j]); d > 1e-15*math.Max(1, math.Abs(want[j])) {
				t.Errorf("rank %d value %d: %v, want %v (mean over all examples)", r, j, results[r][j], want[j])
			}
		}
		if !reflect.DeepEqual(results[r], results[0]) {
			t.Errorf("rank %d got %v, rank 0 %v", r, results[r], results[0])
		}
	}
}

// TestAverageGradientsNoExamples: weights that add up to 0 are an error on every rank.
func TestAverageGradientsNoExamples(t *testing.T) {
	f := newFakeReduce(2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			c := &Comm{rank: r, size: 2}
			errs[r] = averageGradients(c, make([]float64, 3), []floats{{f64: []float64{1, 2}}}, 0, nil, f.reduce)
		}(r)
	}
	wg.Wait()
	for r, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "add up to 0") {
			t.Errorf("rank %d: %v", r, err)
		}
	}
}

// BenchmarkAverageGradientsPacking: the packing and unpacking AverageGradients adds around
// the all-reduce, for the 407,050 float64 gradients of an MLP 784-512-10 (the reduction
// itself is left out: one rank).
func BenchmarkAverageGradientsPacking(b *testing.B) {
	sizes := []int{784 * 512, 512, 512 * 10, 10}
	var grads []floats
	n := 0
	for _, s := range sizes {
		grads = append(grads, floats{f64: make([]float64, s)})
		n += s
	}
	buf := make([]float64, n+2)
	c := &Comm{size: 2}
	noop := func([]float64, Op) error { return nil }
	b.SetBytes(int64(8 * n))
	for i := 0; i < b.N; i++ {
		if err := averageGradients(c, buf, grads, 50, []float64{1}, noop); err != nil {
			b.Fatal(err)
		}
	}
}
