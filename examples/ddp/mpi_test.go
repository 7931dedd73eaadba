//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bulkad/bulkad/dist"
	"github.com/bulkad/bulkad/dist/mpitest"
)

// TestMPI reruns this test binary as a two-rank MPI job (TestMPIChild on every rank) and
// checks the example against its one-process run: the same loss at every step (within 1e-12
// relative), the same held-out accuracy, identical parameters on both ranks; then that a rank
// failing at step 3 ends the job with its error. It skips when no MPI launcher is installed.
func TestMPI(t *testing.T) {
	if os.Getenv("BULKAD_DDP_TEST_OUT") != "" {
		t.Skip("inside the MPI job")
	}
	l, ok := mpitest.Any()
	if !ok {
		mpitest.NoLauncher(t, "no MPI launcher on PATH (Debian: apt-get install openmpi-bin): the two-rank run does not happen")
	}
	var out bytes.Buffer
	want, err := run(mpitest.OneProcess(t), smallArgs(), &out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	exe, _ := os.Executable()
	dir := t.TempDir()
	job, err := l.Run(2, map[string]string{"BULKAD_DDP_TEST_OUT": dir, "BULKAD_DDP_TEST_ARGS": strings.Join(smallArgs(), " ")}, nil, 5*time.Minute,
		exe, "-test.run=^TestMPIChild$", "-test.timeout=4m")
	if err != nil {
		t.Fatal(err)
	}
	if job.Code != 0 {
		t.Fatalf("%s -np 2: exit status %d\n%s", l.Family, job.Code, mpitest.Tail(job.Output))
	}
	t.Logf("%s -np 2: %v", l.Family, job.Took.Round(time.Millisecond))
	var ranks [2]result
	for r := range ranks {
		b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("rank-%d.json", r)))
		if err != nil {
			t.Fatalf("rank %d: %v\n%s", r, err, mpitest.Tail(job.Output))
		}
		if err := json.Unmarshal(b, &ranks[r]); err != nil {
			t.Fatal(err)
		}
	}
	worst := 0.0
	for s, w := range want.Loss {
		for r := range ranks {
			e := math.Abs(ranks[r].Loss[s]-w) / math.Abs(w)
			worst = math.Max(worst, e)
			if !(e <= 1e-12) {
				t.Errorf("rank %d step %d: loss %v, one process %v", r, s+1, ranks[r].Loss[s], w)
			}
		}
	}
	t.Logf("largest relative loss difference from the one-process run: %.2g", worst)
	if ranks[0].TestAcc != want.TestAcc {
		t.Errorf("held-out accuracy %v, one process %v", ranks[0].TestAcc, want.TestAcc)
	}
	for i := range ranks[0].Params {
		for j := range ranks[0].Params[i] {
			if math.Float64bits(ranks[0].Params[i][j]) != math.Float64bits(ranks[1].Params[i][j]) {
				t.Fatalf("parameter %d[%d]: rank 0 %v, rank 1 %v", i, j, ranks[0].Params[i][j], ranks[1].Params[i][j])
			}
		}
	}

	fail, err := l.Run(2, map[string]string{"BULKAD_DDP_TEST_OUT": t.TempDir(), "BULKAD_DDP_TEST_ARGS": strings.Join(append(smallArgs(), "-fail-rank", "1", "-fail-step", "3"), " ")}, nil, time.Minute,
		exe, "-test.run=^TestMPIChild$", "-test.timeout=4m")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("rank 1 failing at step 3: the job ended with status %d after %v", fail.Code, fail.Took.Round(time.Millisecond))
	if fail.Code == 0 || !strings.Contains(fail.Output, "rank 1 of 2") || !strings.Contains(fail.Output, "failing at step 3") {
		t.Errorf("exit status %d, want non-zero and rank 1's error\n%s", fail.Code, mpitest.Tail(fail.Output))
	}
}

// TestMPIChild is one rank of TestMPI's job: it runs the example with the job's arguments
// and writes its result; it skips in an ordinary test run.
func TestMPIChild(t *testing.T) {
	dir := os.Getenv("BULKAD_DDP_TEST_OUT")
	if dir == "" {
		t.Skip("a rank of TestMPI's job")
	}
	world, err := dist.Init()
	if err != nil {
		t.Fatal(err)
	}
	res, err := run(world, strings.Fields(os.Getenv("BULKAD_DDP_TEST_ARGS")), os.Stdout)
	if err != nil {
		world.Abort(err)
	}
	b, err := json.Marshal(res)
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, fmt.Sprintf("rank-%d.json", world.Rank())), b, 0o644)
	}
	if err != nil {
		world.Abort(err)
	}
	if err := world.Finalize(); err != nil {
		t.Fatal(err)
	}
}
