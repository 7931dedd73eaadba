//go:build unix

package dist_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/accel"
	"github.com/bulkad/bulkad/dist"
	"github.com/bulkad/bulkad/dist/mpitest"
	"github.com/bulkad/bulkad/examples/models"
)

// The benchmarks start MPI jobs of this test binary (as the integration tests do) and report
// what its ranks measured: the median time of one all-reduce of each bench model's gradients
// (BenchmarkAllReduce), and the median training step of the bench's MLP at one and two ranks
// (BenchmarkStepMLP). ns/op is the measured median, not the time of the benchmark loop.

// benchModel is one model of examples/bench (the same constructors and sizes; the batch
// does not change the gradient's size).
type benchModel struct {
	name  string
	build func(dt tensor.Dtype) (*models.Model, error)
}

func benchModels() []benchModel {
	return []benchModel{
		{"mlp-784-512-10", func(dt tensor.Dtype) (*models.Model, error) { return models.MLP(dt, 1, []int{784, 512, 10}, 1) }},
		{"convnet-28x28x32", func(dt tensor.Dtype) (*models.Model, error) { return models.ConvNet(dt, 1, 28, 28, 32, 10, 0, 1) }},
		{"rnn-64-128x16", func(dt tensor.Dtype) (*models.Model, error) { return models.RNN(dt, 1, 64, 128, 16, 1) }},
		{"attention-128x64", func(dt tensor.Dtype) (*models.Model, error) { return models.Attention(dt, 128, 64, 1) }},
		{"convnet-mnist", func(dt tensor.Dtype) (*models.Model, error) { return models.ConvNetMNIST(dt, 1, [4]float64{}, 1) }},
		{"resnet-2x16ch", func(dt tensor.Dtype) (*models.Model, error) { return models.ResNet(dt, 1, 16, 16, 2, 10, 1) }},
		{"mobilenet-3x32ch", func(dt tensor.Dtype) (*models.Model, error) { return models.MobileNet(dt, 1, 16, 32, 3, 10, 1) }},
		{"transformer-d128", func(dt tensor.Dtype) (*models.Model, error) { return models.Transformer(dt, 1, 64, 128, 4, 512, 1, 1) }},
		{"lstm-64-128x16", func(dt tensor.Dtype) (*models.Model, error) { return models.LSTMSeq(dt, 1, 64, 128, 16, 1) }},
	}
}

// gradientSize is the number of learnable values of m (the length of its packed gradient).
func gradientSize(m *models.Model) int {
	n := 0
	for _, w := range m.Wrt {
		n += w.Shape().TotalSize()
	}
	return n
}

// benchEnv passes the benchmark's parameters to the ranks.
const benchEnv = "BULKAD_DIST_BENCH"

// allReduceTimes is what rank 0 of the allreduce scenario writes: per element count, the
// median seconds of one in-place all-reduce (Sum), float64 and float32.
type allReduceTimes struct {
	F64, F32 map[int]float64
}

// childAllReduce times all-reduces of the element counts in benchEnv (comma-separated).
func childAllReduce(world *dist.Comm, out string) error {
	var counts []int
	for _, f := range strings.Split(os.Getenv(benchEnv), ",") {
		n, err := strconv.Atoi(f)
		if err != nil {
			return errors.Wrapf(err, "%s", benchEnv)
		}
		counts = append(counts, n)
	}
	res := allReduceTimes{F64: map[int]float64{}, F32: map[int]float64{}}
	for _, n := range counts {
		b64, b32 := make([]float64, n), make([]float32, n)
		reps := max(20, min(400, 20_000_000/(n+1)))
		t64, err := medianTime(world, reps, func() error { return world.AllReduceFloat64(b64, dist.Sum) })
		if err != nil {
			return err
		}
		t32, err := medianTime(world, reps, func() error { return world.AllReduceFloat32(b32, dist.Sum) })
		if err != nil {
			return err
		}
		res.F64[n], res.F32[n] = t64, t32
	}
	return writeRank0(world, out, res)
}

// medianTime runs f reps times after 5 warm-up calls, each after a barrier (so that every
// rank starts together), and returns the median seconds of one call.
func medianTime(world *dist.Comm, reps int, f func() error) (float64, error) {
	var ts []float64
	for i := 0; i < reps+5; i++ {
		if err := world.Barrier(); err != nil {
			return 0, err
		}
		t0 := time.Now()
		if err := f(); err != nil {
			return 0, err
		}
		if i >= 5 {
			ts = append(ts, time.Since(t0).Seconds())
		}
	}
	sort.Float64s(ts)
	return ts[len(ts)/2], nil
}

func writeRank0(world *dist.Comm, out string, v any) error {
	if world.Rank() != 0 {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "bench.json"), b, 0o644)
}

// stepTimes is what rank 0 of the step scenario writes (median seconds).
type stepTimes struct {
	Step, Run, AllReduce float64 // Run: the machine's forward and backward pass
	Wait                 float64 // rank 0 waiting for the slowest rank before the all-reduce
	Solver               float64 // Adam's step
	Procs                int     // GOMAXPROCS of rank 0
}

// childStep trains the bench's MLP (784-512-10, bulkad.Grad, Adam, float64) with a global
// batch of 128 split evenly among the ranks and times its steps: forward and backward pass,
// a barrier (so that the all-reduce's own time shows apart from the wait for the slowest
// rank, which an all-reduce would otherwise include), AverageGradients, solver step.
func childStep(world *dist.Comm, out string) error {
	accel.UseBLAS()
	const global = 128
	n := global / world.Size()
	m, err := models.MLP(tensor.Float64, n, []int{784, 512, 10}, 1)
	if err != nil {
		return err
	}
	if _, err := bulkad.Grad(m.Cost, m.Wrt...); err != nil {
		return err
	}
	vm := G.NewTapeMachine(m.G, G.BindDualValues(m.Wrt...), G.WithEngine(accel.Engine{}))
	defer vm.Close()
	solver := G.NewAdamSolver(G.WithLearnRate(1e-3))
	dp, err := dist.NewDataParallel(world, m.Wrt)
	if err != nil {
		return err
	}
	if err := dp.BroadcastParams(); err != nil {
		return err
	}
	var steps, runs, reduces, waits, solves []float64
	for s := 0; s < 45; s++ {
		t0 := time.Now()
		if err := vm.RunAll(); err != nil {
			return err
		}
		t1 := time.Now()
		if err := world.Barrier(); err != nil { // separates waiting for the slowest rank from the all-reduce
			return err
		}
		t1b := time.Now()
		if _, err := dp.AverageGradients(float64(n)); err != nil {
			return err
		}
		t2 := time.Now()
		if err := solver.Step(G.NodesToValueGrads(m.Wrt)); err != nil {
			return err
		}
		t3 := time.Now()
		vm.Reset()
		if s >= 5 {
			solves = append(solves, t3.Sub(t2).Seconds())
			runs = append(runs, t1.Sub(t0).Seconds())
			steps = append(steps, time.Since(t0).Seconds())
			reduces = append(reduces, t2.Sub(t1b).Seconds())
			waits = append(waits, t1b.Sub(t1).Seconds())
		}
	}
	sort.Float64s(steps)
	sort.Float64s(reduces)
	sort.Float64s(waits)
	sort.Float64s(runs)
	sort.Float64s(solves)
	return writeRank0(world, out, stepTimes{steps[len(steps)/2], runs[len(runs)/2], reduces[len(reduces)/2], waits[len(waits)/2], solves[len(solves)/2], procs()})
}

// benchLauncher is Open MPI's launcher, else MPICH's; the benchmark skips without either.
func benchLauncher(b *testing.B) mpitest.Launcher {
	if os.Getenv(childEnv) != "" {
		b.Skip("inside an MPI job")
	}
	l, ok := mpitest.Any()
	if !ok {
		b.Skip("no MPI launcher on PATH (Debian: apt-get install openmpi-bin)")
	}
	return l
}

// runBench runs a benchmark scenario and decodes rank 0's results into v.
func runBench(b *testing.B, l mpitest.Launcher, scenario string, np int, env string, extra []string, v any) {
	b.Helper()
	dir := b.TempDir()
	job, err := start(l, scenario, np, dir, map[string]string{benchEnv: env}, extra, 10*time.Minute)
	if err != nil {
		b.Fatal(err)
	}
	data, rerr := os.ReadFile(filepath.Join(dir, "bench.json"))
	if job.Code != 0 || rerr != nil {
		b.Fatalf("%s -np %d %s: exit status %d, %v\n%s", l.Family, np, scenario, job.Code, rerr, mpitest.Tail(job.Output))
	}
	if err := json.Unmarshal(data, v); err != nil {
		b.Fatal(err)
	}
}

func procs() int { return runtime.GOMAXPROCS(0) }

// BenchmarkAllReduce: one all-reduce (Sum, in place) of each bench model's gradient at two
// ranks on this machine, float64 and float32, with every MPI family installed.
func BenchmarkAllReduce(b *testing.B) {
	benchLauncher(b) // skips without any
	var counts []string
	sizes := map[string]int{}
	for _, m := range benchModels() {
		mod, err := m.build(tensor.Float64)
		if err != nil {
			b.Fatal(err)
		}
		sizes[m.name] = gradientSize(mod)
		counts = append(counts, strconv.Itoa(sizes[m.name]))
	}
	for _, family := range []string{mpitest.OpenMPI, mpitest.MPICH} {
		l, ok := mpitest.Find(family)
		if !ok {
			continue
		}
		var res allReduceTimes
		runBench(b, l, "allreduce", 2, strings.Join(counts, ","), nil, &res)
		for _, m := range benchModels() {
			n := sizes[m.name]
			for _, dt := range []struct {
				name  string
				bytes int
				t     float64
			}{{"float64", 8, res.F64[n]}, {"float32", 4, res.F32[n]}} {
				b.Run(fmt.Sprintf("%s/%s/%s", strings.ReplaceAll(strings.ToLower(family), " ", ""), m.name, dt.name), func(b *testing.B) {
					b.ReportMetric(dt.t*1e9, "ns/op")
					b.ReportMetric(float64(n*dt.bytes)/1024, "KiB")
					b.ReportMetric(float64(n*dt.bytes)/dt.t/1e9, "GB/s")
				})
			}
		}
	}
}

// BenchmarkStepMLP: a training step of the bench's MLP (784-512-10, float64, global batch 128)
// on one rank that has the whole machine, and on two ranks with half the batch each (Open MPI
// binds each to one core), with the all-reduce's share.
func BenchmarkStepMLP(b *testing.B) {
	l := benchLauncher(b)
	for _, np := range []int{1, 2} {
		var extra []string
		if np == 1 && l.Family == mpitest.OpenMPI {
			extra = []string{"--bind-to", "none"} // one rank: every core
		}
		var res stepTimes
		runBench(b, l, "step", np, "", extra, &res)
		b.Run(fmt.Sprintf("ranks=%d", np), func(b *testing.B) {
			b.ReportMetric(res.Step*1e9, "ns/op")
			b.ReportMetric(res.AllReduce*1e9, "allreduce-ns/op")
			b.ReportMetric(res.Wait*1e9, "wait-ns/op")
			b.ReportMetric(res.Run*1e9, "fwd+bwd-ns/op")
			b.ReportMetric(res.Solver*1e9, "solver-ns/op")
			b.ReportMetric(float64(res.Procs), "GOMAXPROCS")
		})
	}
}
