package mpitest

import (
	"os"
	"testing"
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
