package conformance

import (
	"fmt"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/kernel"
	"github.com/bulkad/bulkad/raise"
	"github.com/bulkad/bulkad/vulkan"
	"github.com/bulkad/bulkad/vulkan/vulkantest"
)

// executor is one way bulkad computes an element-wise operation. run computes o on the
// operand columns ins and returns the result column together with what core.Eval gives for
// the same computation (want); both may hold the results for ins several times over (two
// runs of a machine): element i belongs to the operands at position i mod len(ins[0]).
// runs, when set instead, returns several such results (labelled).
type executor struct {
	name    string
	device  bool                      // needs the Vulkan device
	grid    bool                      // runs on the grid of special values, whatever its operands
	scalar  bool                      // one node or program term per element: trimmed operands in -short
	applies func(operation) bool      // nil: every operation
	tol     func(operation) tolerance // nil: bitwise
	run     func(o operation, ins []any) (got, want any, err error)
	runs    func(o operation, ins []any) ([]result, error)
}

// result is one computation's column and core.Eval's, labelled for messages.
type result struct {
	label     string
	got, want any
}

// rank builds the program of one operation at one rank for operand columns of n elements.
type rank struct {
	name string
	prog func(o operation, n int) (*core.Program, error)
}

func ranks() []rank {
	return []rank{
		{"rank0", scalarTuple},
		{"rank1", func(o operation, n int) (*core.Program, error) { return oneOp(o, core.Shape{n}) }},
		{"rankN", func(o operation, n int) (*core.Program, error) { return oneOp(o, shapeRankN(n)) }},
	}
}

// floatArith reports whether o is a float unary or non-comparison binary operation: what
// kernel fuses and what Vulkan's element-wise shaders take.
func floatArith(o operation) bool {
	return !o.cast && o.in.IsFloat() && (o.bin == 0 || !o.bin.IsComparison())
}

// executors lists the executors; dev (possibly nil) is the device of the forced Vulkan runs.
func executors(dev *vulkan.Device) []executor {
	var exs []executor
	// the reference itself at ranks 0 and n, against rank 1
	for _, r := range []rank{ranks()[0], ranks()[2]} {
		exs = append(exs, executor{name: "core.Eval/" + r.name, scalar: r.name == "rank0",
			run: func(o operation, ins []any) (any, any, error) {
				n := colLen(ins[0])
				p, err := r.prog(o, n)
				if err != nil {
					return nil, nil, err
				}
				got, err := reference(p, ins)
				if err != nil {
					return nil, nil, err
				}
				want, err := expect(oneOp(o, core.Shape{n}))(ins)
				return got, want, err
			}})
	}
	// kernel.Compile: the one-op program at every rank, and two-op chains
	for _, r := range ranks() {
		exs = append(exs, executor{name: "kernel.Compile/" + r.name, scalar: r.name == "rank0",
			run: func(o operation, ins []any) (any, any, error) {
				p, err := r.prog(o, colLen(ins[0]))
				if err != nil {
					return nil, nil, err
				}
				return compiled(p, ins)
			}})
	}
	exs = append(exs, executor{name: "kernel.Compile/chains", runs: runChains})
	exs = append(exs, singleOpKernels("", nil, false)...)
	// raised nodes on a TapeMachine, per operation and coarse
	exs = append(exs, raisedExecutors("", nil)...)
	// Vulkan forced: the single-op kernels and raised nodes with the device
	vkExs := append(singleOpKernels("vulkan/", dev, true), raisedExecutors("vulkan/", dev)...)
	for _, ex := range vkExs {
		ex.device, ex.tol = true, vulkanTolerance(dev)
		if ex.applies == nil {
			ex.applies = floatArith
		} else {
			inner := ex.applies
			ex.applies = func(o operation) bool { return inner(o) && floatArith(o) }
		}
		exs = append(exs, ex)
	}
	return exs
}

// raisedExecutors are raised nodes on a TapeMachine, per operation and coarse, at every rank;
// with dev (not nil), the kernels with the device dev forced.
func raisedExecutors(prefix string, dev *vulkan.Device) []executor {
	var exs []executor
	for _, coarse := range []bool{false, true} {
		mode := "ops"
		if coarse {
			mode = "coarse"
		}
		for _, r := range ranks() {
			exs = append(exs, executor{name: prefix + "raise/" + mode + "/" + r.name, scalar: r.name == "rank0",
				run: func(o operation, ins []any) (any, any, error) {
					var vk *kernel.Vulkan // nil: the CPU
					if dev != nil {
						vk = forced(dev)
					}
					return raisedRun(r, o, ins, raise.Options{Coarse: coarse, Vulkan: vk}, vk)
				}})
		}
	}
	return exs
}

// expect returns a function giving core.Eval's column for the program p (built with error
// err) on operand columns.
func expect(p *core.Program, err error) func(ins []any) (any, error) {
	return func(ins []any) (any, error) {
		if err != nil {
			return nil, err
		}
		return reference(p, ins)
	}
}

// compiled runs p on ins with kernel.Compile and core.Eval.
func compiled(p *core.Program, ins []any) (got, want any, err error) {
	ex, err := kernel.Compile(p)
	if err != nil {
		return nil, nil, fmt.Errorf("kernel.Compile: %w", err)
	}
	outs, err := ex.Run(args(p, ins))
	if err != nil {
		return nil, nil, fmt.Errorf("Exec.Run: %w", err)
	}
	if got, err = flatAll(outs); err != nil {
		return nil, nil, err
	}
	want, err = reference(p, ins)
	return got, want, err
}

// raisedRun raises o's program at rank r with opt, runs it twice on a TapeMachine and
// returns both runs' results and core.Eval's (twice); with vk, it also requires the device
// to have run the kernels it claims.
func raisedRun(r rank, o operation, ins []any, opt raise.Options, vk *kernel.Vulkan) (got, want any, err error) {
	p, err := r.prog(o, colLen(ins[0]))
	if err != nil {
		return nil, nil, err
	}
	if got, err = raised(p, ins, opt); err != nil {
		return nil, nil, err
	}
	w, err := reference(p, ins)
	if err != nil {
		return nil, nil, err
	}
	if err := deviceRan(vk, o, 1); err != nil {
		return nil, nil, err
	}
	return got, concat([]any{w, w}), nil
}

// forced is a Vulkan for dev that runs every supported kernel on the device.
func forced(dev *vulkan.Device) *kernel.Vulkan {
	return &kernel.Vulkan{Device: dev, Force: true, Report: func(error) {}}
}

// deviceRan checks a forced Vulkan after a run: no device error or fallback, at least one
// device call when the device takes o (n elements), and none when it declines o, which then
// ran on the CPU (nil vk: nothing to check).
func deviceRan(vk *kernel.Vulkan, o operation, n int) error {
	if vk == nil {
		return nil
	}
	if err := vk.Err(); err != nil || vk.Fallbacks() != 0 {
		return fmt.Errorf("device error %v, %d fallbacks to the CPU", err, vk.Fallbacks())
	}
	kind, name, ok := deviceOp(o)
	if !ok {
		return nil
	}
	takes := vk.Wants(o.in, kind, name, n)
	if takes && vk.Calls() == 0 {
		return fmt.Errorf("the device takes %s %s %v but ran no kernel", kind, name, o.in)
	}
	if !takes && vk.Calls() != 0 {
		return fmt.Errorf("the device declines %s %s %v but ran %d kernels", kind, name, o.in, vk.Calls())
	}
	return nil
}

// deviceOp is the Vulkan kernel and op name of an element-wise operation.
func deviceOp(o operation) (kind, name string, ok bool) {
	switch {
	case o.un != 0:
		return "unary", o.un.String(), true
	case o.bin != 0:
		return "binary", o.bin.String(), true
	}
	return "", "", false
}

// vulkanTolerance is what package vulkan documents for its element-wise shaders on dev:
// vulkan.ULPBound for float32 (0: bitwise), bitwise for float64 and for every operation the
// device declines (which runs on the CPU; deviceRan checks that).
func vulkanTolerance(dev *vulkan.Device) func(o operation) tolerance {
	return func(o operation) tolerance {
		kind, name, ok := deviceOp(o)
		if !ok || o.in != core.Float32 || !vulkan.Supports[float32](dev, kind, name) {
			return tolerance{}
		}
		return tolerance{ulps: int64(vulkan.ULPBound(name))}
	}
}

// singleOpKernels are package kernel's kernels of single operations, which package raise
// wraps as custom ops; withDevice: the element-wise ones with the device dev forced.
func singleOpKernels(prefix string, dev *vulkan.Device, withDevice bool) []executor {
	withVK := func(run func(vk *kernel.Vulkan, o operation, ins []any) (any, any, error)) func(o operation, ins []any) (any, any, error) {
		return func(o operation, ins []any) (any, any, error) {
			var vk *kernel.Vulkan
			if withDevice {
				vk = forced(dev)
			}
			got, want, err := run(vk, o, ins)
			if err == nil {
				err = deviceRan(vk, o, colLen(got))
			}
			return got, want, err
		}
	}
	exs := []executor{
		{name: prefix + "kernel.Unary", applies: func(o operation) bool { return o.un != 0 },
			run: withVK(func(vk *kernel.Vulkan, o operation, ins []any) (any, any, error) {
				n := colLen(ins[0])
				return kernelRun(kernel.Unary{Op: o.un, VK: vk}, o, n, ins, expect(oneOp(o, core.Shape{n})))
			})},
		{name: prefix + "kernel.Binary", applies: func(o operation) bool { return o.bin != 0 },
			run: withVK(func(vk *kernel.Vulkan, o operation, ins []any) (any, any, error) {
				n := colLen(ins[0])
				return kernelRun(kernel.Binary{Op: o.bin, VK: vk}, o, n, ins, expect(oneOp(o, core.Shape{n})))
			})},
		// y read cyclically: x holds every pair's first operand (n² elements), y the n
		// special values, which are the pairs' second operands in order
		{name: prefix + "kernel.Binary/cyclic", grid: true, applies: func(o operation) bool { return o.bin != 0 },
			run: withVK(func(vk *kernel.Vulkan, o operation, ins []any) (any, any, error) {
				vals := specials(o.in)
				n := colLen(vals)
				return kernelRun(kernel.Binary{Op: o.bin, VK: vk}, o, n*n, []any{ins[0], vals}, expect(cyclicProgram(o, n)))
			})},
		// both operands broadcast: out[i,j] = vals[i] op vals[j], the pairs in order
		{name: prefix + "kernel.StridedBinary", grid: true, applies: func(o operation) bool { return o.bin != 0 },
			run: withVK(func(vk *kernel.Vulkan, o operation, ins []any) (any, any, error) {
				vals := specials(o.in)
				n := colLen(vals)
				k := kernel.StridedBinary{Op: o.bin, Shape: []int{n, n}, XS: []int{1, 0}, YS: []int{0, 1}, VK: vk}
				return kernelRun(k, o, n*n, []any{vals, vals}, expect(outerProgram(o, n)))
			})},
	}
	if !withDevice {
		exs = append(exs, executor{name: prefix + "kernel.Cast", applies: func(o operation) bool { return o.cast },
			run: func(o operation, ins []any) (any, any, error) {
				n := colLen(ins[0])
				return kernelRun(kernel.Cast{}, o, n, ins, expect(oneOp(o, core.Shape{n})))
			}})
	}
	return exs
}

// kernelRun runs k on the operand columns xs into a fresh column of n elements of o's result
// dtype and returns it with the expected column, want(xs).
func kernelRun(k kernel.Kernel, o operation, n int, xs []any, want func(xs []any) (any, error)) (got, w any, err error) {
	out := kernel.NewSlice(o.out(), n)
	if err := k.Run(out, xs); err != nil {
		return nil, nil, err
	}
	w, err = want(xs)
	return out, w, err
}

// cyclicProgram is fn (x : [n²], y : [n]) => x op reshape [n²] (replicate n y).
func cyclicProgram(o operation, n int) (*core.Program, error) {
	var b core.Builder
	x := b.Var("x", core.Type{Shape: core.Shape{n * n}, Dtype: o.in})
	y := b.Var("y", core.Type{Shape: core.Shape{n}, Dtype: o.in})
	body := o.apply(&b, x, b.Reshape(core.Shape{n * n}, b.Replicate(n, y)))
	if err := b.Err(); err != nil {
		return nil, err
	}
	return core.NewProgram([]*core.Var{x, y}, body)
}

// outerProgram is fn (x : [n], y : [n]) => reshape [n²] (tr [1,0] (replicate n x) op replicate n y).
func outerProgram(o operation, n int) (*core.Program, error) {
	var b core.Builder
	x := b.Var("x", core.Type{Shape: core.Shape{n}, Dtype: o.in})
	y := b.Var("y", core.Type{Shape: core.Shape{n}, Dtype: o.in})
	body := b.Reshape(core.Shape{n * n}, o.apply(&b, b.Transpose([]int{1, 0}, b.Replicate(n, x)), b.Replicate(n, y)))
	if err := b.Err(); err != nil {
		return nil, err
	}
	return core.NewProgram([]*core.Var{x, y}, body)
}

// TestExecutors compares every executor with core.Eval on every operation at its special
// values, and at its extra operands (see extraOperands) on the CPU (see the package
// documentation).
func TestExecutors(t *testing.T) {
	vulkantest.NoShaderCache()
	dev, devErr := vulkan.Open()
	if devErr == nil {
		defer dev.Close()
		t.Logf("Vulkan device %s (%v), float64 %v", dev.Name(), dev.Type(), dev.SupportsFloat64())
	}
	for _, ex := range executors(dev) {
		t.Run(ex.name, func(t *testing.T) {
			if ex.device && dev == nil {
				vulkantest.NoDevice(t, devErr)
			}
			for _, o := range operations() {
				if ex.applies != nil && !ex.applies(o) {
					continue
				}
				t.Run(o.String(), func(t *testing.T) {
					ins := operands(o)
					if ex.scalar && testing.Short() {
						ins = trimmed(o, ins)
					}
					runExecutor(t, ex, o, ins)
					if extra := extraOperands(o); extra != nil && !ex.device && !ex.grid {
						runExecutor(t, ex, o, extra)
					}
				})
			}
		})
	}
}

// runExecutor runs ex on o's operand columns ins and reports where it differs from core.Eval.
func runExecutor(t *testing.T, ex executor, o operation, ins []any) {
	t.Helper()
	var rs []result
	var err error
	if ex.runs != nil {
		rs, err = ex.runs(o, ins)
	} else {
		var r result
		r.got, r.want, err = ex.run(o, ins)
		rs = []result{r}
	}
	if err != nil {
		t.Fatalf("%s: %s: %v", ex.name, o.name(), err)
	}
	var tol tolerance
	if ex.tol != nil {
		tol = ex.tol(o)
	}
	for _, r := range rs {
		if msg := mismatches(o, ins, r.got, r.want, "core.Eval", tol); msg != "" {
			t.Errorf("%s%s: %s", ex.name, r.label, msg)
		}
	}
}
