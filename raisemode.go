package bulkad

import (
	"os"

	"github.com/pkg/errors"
)

// RaiseEnv is the environment variable that chooses how programs become Gorgonia nodes:
// unset, "" or "plan" raises each program (a gradient, an imported model, a Hessian-vector
// product) as one plan node plus one node per result (raise.Options.Coarse); "ops" raises
// one node per operation, as bulkad did before (slower to set up on large models: Gorgonia's
// graph and TapeMachine compile are quadratic in the number of nodes; kept for comparison
// and debugging).
const RaiseEnv = "BULKAD_RAISE"

// coarseRaising reads RaiseEnv.
func coarseRaising() (bool, error) {
	switch v := os.Getenv(RaiseEnv); v {
	case "", "plan":
		return true, nil
	case "ops":
		return false, nil
	default:
		return false, errors.Errorf("%s=%q: want \"plan\" (the default) or \"ops\"", RaiseEnv, v)
	}
}
