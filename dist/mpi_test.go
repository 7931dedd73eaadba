//go:build unix

package dist_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pkg/errors"
	"gorgonia.org/tensor"

	"github.com/bulkad/bulkad/dist"
	"github.com/bulkad/bulkad/dist/mpitest"
)

// The integration tests rerun this test binary under an MPI launcher: the parent test (say
// TestMPIOpenMPI) starts `mpirun -np N <test binary> -test.run ^TestMPIChild$` with the
// scenario in childEnv and an output folder in outEnv; every rank runs TestMPIChild, which
// trains and writes its results there; the parent compares them with its own single-process
// runs. Without a launcher on PATH the parent tests skip with a message.
const (
	childEnv = "BULKAD_DIST_TEST_CHILD" // the scenario a rank runs: train, abort or panic
	outEnv   = "BULKAD_DIST_TEST_OUT"   // the folder the ranks write their results to
)

// mpiSteps is the number of training steps of every configuration in the MPI tests.
const mpiSteps = 12

// rankResult is what one rank of the train scenario writes: the curves of every
// configuration (by its String) and the verdicts of the agreement check.
type rankResult struct {
	Rank, Size int
	Library    string
	Curves     map[string]*curve
	// CheckBefore, CheckPerturbed and CheckResynced are CheckParams's errors ("" for none)
	// on equal parameters, after the last rank changed one value by one ulp, and after
	// BroadcastParams brought it back.
	CheckBefore, CheckPerturbed, CheckResynced string
	// SecondInit is the error of a second dist.Init while MPI runs ("" for none).
	SecondInit string
}

// TestMPIChild is one rank of a job the MPI tests start; it skips in an ordinary test run.
func TestMPIChild(t *testing.T) {
	scenario := os.Getenv(childEnv)
	if scenario == "" {
		t.Skip("a rank of the MPI integration tests; runs only when they start it under mpirun")
	}
	world, err := dist.Init()
	if err != nil {
		t.Fatal(err) // exits non-zero: the launcher ends the job
	}
	switch scenario {
	case "train":
		err = childTrain(world, os.Getenv(outEnv))
	case "allreduce":
		err = childAllReduce(world, os.Getenv(outEnv))
	case "step":
		err = childStep(world, os.Getenv(outEnv))
	case "abort", "panic":
		_, err = trainDistributed(world, testConfigs(mpiSteps)[0], func(step int) error {
			if step == 3 && world.Rank() == 1 {
				if scenario == "panic" {
					panic("injected panic at step 3")
				}
				return errors.New("injected failure at step 3")
			}
			return nil
		})
		if err == nil {
			err = os.WriteFile(filepath.Join(os.Getenv(outEnv), fmt.Sprintf("finished-%d", world.Rank())), nil, 0o644)
		}
	default:
		err = errors.Errorf("unknown scenario %q", scenario)
	}
	if err != nil {
		world.Abort(err)
	}
	if err := world.Finalize(); err != nil {
		t.Fatal(err)
	}
	if scenario == "train" { // MPI cannot start again: Init must say so, not crash
		msg := "no error"
		if _, err := dist.Init(); err != nil {
			msg = err.Error()
		}
		if err := os.WriteFile(filepath.Join(os.Getenv(outEnv), fmt.Sprintf("init-after-finalize-%d", world.Rank())), []byte(msg), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// childTrain trains every test configuration data-parallel, checks CheckParams's verdicts
// and writes this rank's results.
func childTrain(world *dist.Comm, out string) error {
	res := rankResult{Rank: world.Rank(), Size: world.Size(), Library: world.Library(), Curves: map[string]*curve{}}
	if _, err := dist.Init(); err != nil {
		res.SecondInit = err.Error()
	}
	for _, cfg := range testConfigs(mpiSteps) {
		c, err := trainDistributed(world, cfg, nil)
		if err != nil {
			return err
		}
		res.Curves[cfg.String()] = c
	}
	// The agreement check, on a replica with broadcast parameters.
	cfg := runConfig{Dtype: tensor.Float64, Grad: "bulkad", Solver: "adam", Steps: 1}
	r, err := newReplica(cfg, batch, initParams(cfg.Dtype, 1+int64(world.Rank())))
	if err != nil {
		return err
	}
	defer r.vm.Close()
	dp, err := dist.NewDataParallel(world, r.learn)
	if err != nil {
		return err
	}
	if err := dp.BroadcastParams(); err != nil {
		return err
	}
	verdict := func() string {
		if err := dp.CheckParams(); err != nil {
			return err.Error()
		}
		return ""
	}
	res.CheckBefore = verdict()
	if world.Rank() == world.Size()-1 {
		w1 := r.learn[2].Value().Data().([]float64)
		w1[4] = math.Nextafter(w1[4], math.Inf(1))
	}
	res.CheckPerturbed = verdict()
	if err := dp.BroadcastParams(); err != nil {
		return err
	}
	res.CheckResynced = verdict()
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, fmt.Sprintf("rank-%d.json", world.Rank())), b, 0o644)
}

// childArgs are the test binary's arguments that run TestMPIChild.
func childArgs() (string, []string) {
	exe, _ := os.Executable()
	return exe, []string{"-test.run=^TestMPIChild$", "-test.v", "-test.timeout=5m"}
}

// start runs scenario on np ranks writing to dir, with env added to the ranks' environment.
func start(l mpitest.Launcher, scenario string, np int, dir string, env map[string]string, extra []string, limit time.Duration) (mpitest.Result, error) {
	all := map[string]string{childEnv: scenario, outEnv: dir}
	for k, v := range env {
		all[k] = v
	}
	exe, args := childArgs()
	return l.Run(np, all, extra, limit, exe, args...)
}

// run is start in a fresh folder, failing t on a hang.
func run(t *testing.T, l mpitest.Launcher, scenario string, np int, limit time.Duration) (string, mpitest.Result) {
	t.Helper()
	dir := t.TempDir()
	res, err := start(l, scenario, np, dir, nil, nil, limit)
	if err != nil {
		t.Fatal(err)
	}
	return dir, res
}

// relErr is |a−b| / max(|b|, tiny).
func relErr(a, b float64) float64 {
	return math.Abs(a-b) / math.Max(math.Abs(b), 1e-300)
}

// checkTrain runs the train scenario on np ranks and compares every rank's curves with the
// single-process runs.
func checkTrain(t *testing.T, l mpitest.Launcher, np int, want map[string]*curve) {
	dir, job := run(t, l, "train", np, 5*time.Minute)
	if job.Code != 0 {
		t.Fatalf("%s -np %d: exit status %d\n%s", l.Family, np, job.Code, mpitest.Tail(job.Output))
	}
	t.Logf("%s -np %d: %d configurations × %d steps in %v", l.Family, np, len(want), mpiSteps, job.Took.Round(time.Millisecond))
	var ranks []rankResult
	for r := 0; r < np; r++ {
		b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("rank-%d.json", r)))
		if err != nil {
			t.Fatalf("rank %d wrote no results: %v\n%s", r, err, mpitest.Tail(job.Output))
		}
		var res rankResult
		if err := json.Unmarshal(b, &res); err != nil {
			t.Fatal(err)
		}
		if res.Rank != r || res.Size != np || !strings.Contains(res.Library, l.Family) {
			t.Errorf("rank %d: says rank %d of %d on %q, want rank %d of %d on %s", r, res.Rank, res.Size, res.Library, r, np, l.Family)
		}
		ranks = append(ranks, res)
	}
	t.Logf("library: %s", ranks[0].Library)
	worstLoss := map[tensor.Dtype]float64{}
	for _, cfg := range testConfigs(mpiSteps) {
		key := cfg.String()
		ref := want[key]
		tolLoss, tolParam := 1e-12, 1e-9
		if cfg.Dtype == tensor.Float32 {
			tolLoss, tolParam = 1e-5, 1e-4
		}
		for r, res := range ranks {
			got := res.Curves[key]
			if got == nil || len(got.Loss) != len(ref.Loss) {
				t.Fatalf("%s rank %d: no curve of %d steps", key, r, len(ref.Loss))
			}
			for s := range ref.Loss {
				e := relErr(got.Loss[s], ref.Loss[s])
				worstLoss[cfg.Dtype] = math.Max(worstLoss[cfg.Dtype], e)
				if !(e <= tolLoss) {
					t.Errorf("%s -np %d rank %d step %d: loss %v, single process %v (relative difference %.2g > %g)", key, np, r, s+1, got.Loss[s], ref.Loss[s], e, tolLoss)
				}
			}
			for i := range ref.Params {
				for j := range ref.Params[i] {
					if e := math.Abs(got.Params[i][j] - ref.Params[i][j]); !(e <= tolParam*math.Max(1, math.Abs(ref.Params[i][j]))) {
						t.Errorf("%s -np %d rank %d: parameter %d[%d] = %v, single process %v", key, np, r, i, j, got.Params[i][j], ref.Params[i][j])
						break
					}
				}
			}
			if r > 0 && !sameParams(got.Params, ranks[0].Curves[key].Params) {
				t.Errorf("%s -np %d: rank %d's parameters differ from rank 0's", key, np, r)
			}
			if r > 0 && !sameLosses(got.Loss, ranks[0].Curves[key].Loss) {
				t.Errorf("%s -np %d: rank %d's averaged losses differ from rank 0's", key, np, r)
			}
		}
	}
	t.Logf("largest relative loss difference from the single-process run: float64 %.2g, float32 %.2g", worstLoss[tensor.Float64], worstLoss[tensor.Float32])
	for r, res := range ranks {
		if res.CheckBefore != "" || res.CheckResynced != "" {
			t.Errorf("rank %d: CheckParams on equal parameters: %q, after resync %q", r, res.CheckBefore, res.CheckResynced)
		}
		wantRank := fmt.Sprintf("rank %d: 1 of", np-1)
		if !strings.Contains(res.CheckPerturbed, wantRank) || !strings.Contains(res.CheckPerturbed, fmt.Sprintf("(rank %d of %d)", r, np)) {
			t.Errorf("rank %d: CheckParams after rank %d changed one value: %q, want an error naming %q", r, np-1, res.CheckPerturbed, wantRank)
		}
	}
	t.Logf("rank %d's view of a one-ulp change on rank %d: %s", 0, np-1, ranks[0].CheckPerturbed)
	for r, res := range ranks {
		if !strings.Contains(res.SecondInit, "already initialised") {
			t.Errorf("rank %d: a second Init while MPI runs: %q, want an error saying MPI is already initialised", r, res.SecondInit)
		}
		b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("init-after-finalize-%d", r)))
		if err != nil || !strings.Contains(string(b), "finalised") {
			t.Errorf("rank %d: Init after Finalize: %q (%v), want an error saying MPI was finalised", r, b, err)
		}
	}
}

func sameLosses(a, b []float64) bool {
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return len(a) == len(b)
}

// checkFailure runs a scenario where rank 1 fails at step 3 and checks that the whole job
// ends with a non-zero status, naming the rank and the cause, and that rank 0 never finished.
func checkFailure(t *testing.T, l mpitest.Launcher, scenario string, np int, cause string) {
	dir, job := run(t, l, scenario, np, time.Minute)
	t.Logf("%s -np %d, rank 1 %s at step 3: the job ended with status %d after %v", l.Family, np, scenario, job.Code, job.Took.Round(time.Millisecond))
	if job.Code == 0 {
		t.Errorf("exit status 0, want non-zero\n%s", mpitest.Tail(job.Output))
	}
	if !strings.Contains(job.Output, cause) {
		t.Errorf("output does not mention %q\n%s", cause, mpitest.Tail(job.Output))
	}
	if scenario == "abort" && !strings.Contains(job.Output, fmt.Sprintf("rank 1 of %d", np)) {
		t.Errorf("output does not name rank 1 of %d\n%s", np, mpitest.Tail(job.Output))
	}
	if _, err := os.Stat(filepath.Join(dir, "finished-0")); err == nil {
		t.Errorf("rank 0 finished training although rank 1 failed at step 3")
	}
}

// reference runs every test configuration in this process, without MPI.
func reference(t *testing.T) map[string]*curve {
	want := map[string]*curve{}
	for _, cfg := range testConfigs(mpiSteps) {
		c, err := trainSingle(cfg)
		if err != nil {
			t.Fatalf("%v: %v", cfg, err)
		}
		want[cfg.String()] = c
	}
	return want
}

func TestMPIOpenMPI(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		t.Skip("inside an MPI job")
	}
	l, ok := mpitest.Find(mpitest.OpenMPI)
	if !ok {
		mpitest.NoLauncher(t, "Open MPI's mpirun is not on PATH (Debian: apt-get install openmpi-bin): the Open MPI integration tests do not run")
	}
	want := reference(t)
	t.Run("np2", func(t *testing.T) { checkTrain(t, l, 2, want) })
	t.Run("np3", func(t *testing.T) { checkTrain(t, l, 3, want) })
	t.Run("abort", func(t *testing.T) { checkFailure(t, l, "abort", 2, "injected failure at step 3") })
	t.Run("panic", func(t *testing.T) { checkFailure(t, l, "panic", 3, "injected panic at step 3") })
}

func TestMPIMPICH(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		t.Skip("inside an MPI job")
	}
	l, ok := mpitest.Find(mpitest.MPICH)
	if !ok {
		t.Skip("MPICH's mpiexec.hydra is not on PATH (Debian: apt-get install mpich): the MPICH integration tests do not run")
	}
	want := reference(t)
	t.Run("np2", func(t *testing.T) { checkTrain(t, l, 2, want) })
	t.Run("abort", func(t *testing.T) { checkFailure(t, l, "abort", 3, "injected failure at step 3") })
}
