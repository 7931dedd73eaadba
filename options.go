package bulkad

import (
	"os"

	"github.com/bulkad/bulkad/raise"
	"github.com/pkg/errors"
)

// RaiseMode is the granularity at which a program becomes Gorgonia nodes.
type RaiseMode string

const (
	// RaisePlan raises each program (a gradient, an imported model, a Hessian-vector
	// product) as one plan node plus one node per result (raise.Options.Coarse): the default.
	RaisePlan RaiseMode = "plan"
	// RaiseOps raises one node per operation, as bulkad did before (slower to set up on large
	// models: Gorgonia's graph and TapeMachine compile are quadratic in the number of nodes;
	// kept for comparison and debugging).
	RaiseOps RaiseMode = "ops"
)

// RaiseEnv is the environment variable that gives the default RaiseMode of Options whose
// Raise is empty (and so of the package-level Grad, GradAll, HessianVector and ImportONNX):
// unset, "" or "plan" for RaisePlan, "ops" for RaiseOps. It is read at each call.
const RaiseEnv = "BULKAD_RAISE"

// Options chooses where and how Grad, GradAll, HessianVector, ImportONNX and
// Gradient.RaiseWith turn programs into Gorgonia nodes; the package-level functions are the
// methods of the zero Options. An empty field takes its default from the process environment
// (VulkanEnv for the device, RaiseEnv for the granularity), read at each call; a set field
// overrides it. Options is a plain value: copy it, share it between goroutines.
//
//	v, err := bulkad.VulkanAuto() // the process-wide device, where worthwhile
//	if err != nil { … }           // no usable device: say so, or go on with the CPU
//	grads, err := bulkad.Options{Device: v}.Grad(cost, w1, w2)
type Options struct {
	// Device runs the float kernels of the raised nodes on this device configuration where
	// it accepts them (raise.Vulkan; VulkanAuto and VulkanForce return the process-wide
	// ones). nil: VulkanEnv decides, unless CPU is set. The raised nodes keep it.
	Device *raise.Vulkan
	// CPU keeps every kernel on the CPU whatever VulkanEnv says. Setting both CPU and Device
	// is an error.
	CPU bool
	// Raise is the granularity; "" lets RaiseEnv decide.
	Raise RaiseMode
}

// resolve returns the device (nil: the CPU) and whether to raise coarsely.
func (o Options) resolve() (*raise.Vulkan, bool, error) {
	if o.CPU && o.Device != nil {
		return nil, false, errors.New("options: both CPU and Device are set; choose one")
	}
	mode := o.Raise
	if mode == "" {
		mode = RaiseMode(os.Getenv(RaiseEnv))
		if mode == "" {
			mode = RaisePlan
		}
	}
	var coarse bool
	switch mode {
	case RaisePlan:
		coarse = true
	case RaiseOps:
	default:
		return nil, false, errors.Errorf("options: raise mode %q (Options.Raise or %s): want %q (the default) or %q", mode, RaiseEnv, RaisePlan, RaiseOps)
	}
	if o.CPU || o.Device != nil {
		return o.Device, coarse, nil
	}
	v, err := CurrentVulkan()
	return v, coarse, err
}
