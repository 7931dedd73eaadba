package mpitest

import (
	"os"
	"testing"

	"github.com/bulkad/bulkad/dist"
)

// NoLauncher ends tb, which needs an MPI launcher that is not installed (what says how to
// install one): it skips, or fails when BULKAD_MPI_REQUIRED=1.
func NoLauncher(tb testing.TB, what string) {
	tb.Helper()
	if os.Getenv(RequiredEnv) == "1" {
		tb.Fatalf("%s=1 but %s", RequiredEnv, what)
	}
	tb.Skipf("%s (set %s=1 to make this a failure)", what, RequiredEnv)
}

// OneProcess returns the world of a process no launcher started; a test that runs as a rank
// of an MPI job (the MPI tests rerun their test binary under a launcher) skips.
func OneProcess(tb testing.TB) *dist.Comm {
	tb.Helper()
	w, err := dist.Init()
	if err != nil {
		tb.Fatal(err)
	}
	if w.Size() != 1 {
		tb.Skip("running under an MPI launcher")
	}
	return w
}
