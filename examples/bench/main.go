// Command bench measures bulkad against Gorgonia's own autodiff in one process: for each zoo
// model and dtype it builds the same graph three times (gradient by bulkad.Grad, gradient by
// gorgonia.Grad, forward only), then steps them alternately (A B C A B C …) for several rounds
// and prints medians as a markdown table: step times, their ratio, (value + gradient) /
// forward, the graph's nodes before and after each Grad, differentiation time, set-up time
// (build + Grad + NewTapeMachine + first run; a second table splits it by stage) and bytes
// allocated per step. The models are the four (MLP, convnet, tanh RNN, attention) and
// the models people train (Gorgonia's MNIST convnet, a ResNet basic-block stack, a
// MobileNet-style depthwise-separable stack, a transformer encoder layer, an unrolled LSTM).
// With -growth (instead of the step times) it times differentiation on growing graphs —
// MLPs of 10, 100 and 1000 layers, a tanh/add chain of 5,000, 10,000 and 20,000 nodes reusing one weight, a tanh RNN of 500, 1000
// and 2000 steps — separating Differentiate, Raise and the time Raise spends in Gorgonia's own
// node constructors (Gorgonia scans every node of the graph for each new one: quadratic
// whatever bulkad does), and fits the growth exponent of each over the graph's node count;
// and set-up time (Grad, NewTapeMachine, first run) and node counts of ResNet blocks,
// MobileNet blocks and transformer layers stacked 1, 2, 4, … 32 deep, for both autodiffs.
//
//	go run ./examples/bench            # the step-time tables at full sizes
//	go run ./examples/bench -model convnet  # only the models whose name starts with convnet
//	go run ./examples/bench -small     # tiny sizes (smoke test)
//	go run ./examples/bench -json
//	go run ./examples/bench -growth    # only the growth tables (about a minute)
//	go run ./examples/bench -blas      # Gorgonia's own products on bulkad's GEMM (accel.UseBLAS)
//	go run ./examples/bench -blas -engine  # and Gorgonia's transposes and softmax on accel.Engine
//	go run ./examples/bench -torch     # also PyTorch's step (1 thread each) and a GEMM table
//	go run ./examples/bench -torch -threads 2 -blas -engine
//	go run ./examples/bench -machine -torch -blas -engine  # also bulkad.Grad's graph on machine.New
//	go run ./examples/bench -machine -torch -burst 4  # each turn four steps in a row, the last timed
//	go run ./examples/bench -gemm      # only the GEMM table (bulkad, gonum; numpy with -torch)
//	go run ./examples/bench -torchvision all -threads 1 -blas  # torchvision's models against PyTorch
//
// -torchvision exports torchvision's models (weights=None, eval mode) from PyTorch into a
// temporary folder, imports each with bulkad.ImportONNXFile, differentiates Σ out ⊙ r with
// respect to every initializer and steps it on a TapeMachine (accel.Engine) and on
// machine.New (ReuseValues) alternating with PyTorch's step: set-up by stage, peak Go heap,
// node counts, step times, each machine's forward pass alone, the machine's first loss
// against the TapeMachine's.
//
// -torch runs torch_anchor.py (embedded) with Debian's python3-torch (apt-get install
// python3-torch libopenblas0-pthread; skipped with a message when no python3 imports torch):
// the same models at the same sizes, forward and backward, stepped between the Go steps of each round, and
// numpy's GEMM (OpenBLAS) at the models' product shapes. -threads N sets GOMAXPROCS and
// PyTorch's and OpenBLAS's thread counts (default with -torch: 1; without: GOMAXPROCS as is).
//
// Ratios measured in one run are meaningful; absolute times depend on the machine's load.
// A turn's first step runs after the other variants' turns, during which PyTorch's process
// sat idle: on the VM where this was written, the machine's MobileNet step was 30–60% slower
// that way (17–23 ms) than in a loop of steps (13.5–14.5 ms), and a 150 ms sleep between steps
// did the same while a busy loop did not. -burst N runs N steps a turn (every variant and
// PyTorch alike) and times the last: the steady state of a training loop.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/bulkad/bulkad/accel"
	"github.com/bulkad/bulkad/examples/internal/train"
)

// Result is everything the command measures.
type Result struct {
	Rows   []Row     `json:"rows"`
	Growth []*Growth `json:"growth"`
	// SetupGrowth is set-up time (Grad, NewTapeMachine, first run) against stacked blocks.
	SetupGrowth []*SetupGrowth `json:"setup_growth"`
	Gemm        []GemmRow      `json:"gemm,omitempty"`
}

// options are the command's flags.
type options struct {
	small, verbose, torch, gemmOnly bool
	engine                          bool // every machine runs on accel.Engine
	baseline                        bool // also gorgonia.Grad on Gorgonia's defaults
	machine                         bool // also bulkad.Grad's graph on machine.New
	steps                           bool // the step-time tables of the zoo models
	growth                          bool // the growth tables (differentiation and set-up against graph size)
	rounds, threads                 int
	burst                           int    // -burst: steps a turn, the last timed
	only                            string // -model: only zoo models whose name starts with this
}

// about opens the usage -h prints.
const about = `Measures bulkad against Gorgonia's own autodiff (and PyTorch with -torch) in one process:
step times of the zoo models, alternating, as markdown tables; with -growth instead, the growth
tables (differentiation and set-up time on growing graphs, about a minute).`

// command is the command line: the options of run and the flags handled in main.
type command struct {
	o                        options
	asJSON, useBLAS          bool
	cpuProfile, tv, tvDtype  string
	tvBatch, tvSize, threads int
}

// parseFlags reads the command line (without the program name); help is set after -h, whose
// usage went to out.
func parseFlags(args []string, out io.Writer) (c command, help bool, err error) {
	fs := train.NewFlagSet("bench", about, out)
	fs.BoolVar(&c.o.small, "small", false, "tiny models (smoke test)")
	fs.IntVar(&c.o.rounds, "rounds", 15, "measured rounds per model (after one warm-up)")
	fs.IntVar(&c.o.burst, "burst", 1, "steps each machine (and PyTorch) runs in a row at its turn, only the last timed: 1 times a step after the other variants' turns (caches cold, PyTorch idle meanwhile); more times a training loop's steady state")
	fs.BoolVar(&c.asJSON, "json", false, "print JSON")
	fs.StringVar(&c.o.only, "model", "", "only the zoo models whose name starts with this")
	growthOnly := fs.Bool("growth", false, "only the growth tables (differentiation and set-up time on growing graphs; no step times)")
	fs.BoolVar(&c.useBLAS, "blas", false, "install a fast GEMM as Gorgonia's BLAS (accel.UseBLAS: the system's OpenBLAS/BLIS if installed, else bulkad's; BULKAD_BLAS=bulkad forces bulkad's) before measuring")
	fs.BoolVar(&c.o.torch, "torch", false, "also measure PyTorch (python3-torch) and numpy's GEMM, alternating with the Go runs")
	fs.IntVar(&c.threads, "threads", 0, "GOMAXPROCS and PyTorch/OpenBLAS threads (0: 1 with -torch, else GOMAXPROCS as is)")
	fs.BoolVar(&c.o.gemmOnly, "gemm", false, "only the GEMM table")
	fs.BoolVar(&c.o.engine, "engine", false, "run every machine (bulkad's, Gorgonia's, the forward pass) on accel.Engine (gorgonia.WithEngine): kernel's transpose and softmax for Gorgonia's forward pass")
	fs.BoolVar(&c.o.baseline, "baseline", false, "also step gorgonia.Grad's graph on Gorgonia's defaults (gonum's GEMM, its engine) between the other steps, and print bulkad/default")
	fs.BoolVar(&c.o.machine, "machine", false, "also step bulkad.Grad's graph on machine.New (the whole graph from compiled plans) between the other steps, and print a machine table: step, machine/bulkad, machine/PyTorch, set-up, first-step loss against the TapeMachine's")
	fs.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run to this file (go tool pprof)")
	fs.StringVar(&c.tv, "torchvision", "", "only the torchvision table: these models (comma-separated, or all) exported from PyTorch (needs python3-torch, python3-torchvision, python3-onnx), imported, differentiated and stepped (TapeMachine and machine.New) against PyTorch")
	fs.IntVar(&c.tvBatch, "tvbatch", 2, "batch of -torchvision")
	fs.IntVar(&c.tvSize, "tvsize", 64, "image size of -torchvision")
	fs.StringVar(&c.tvDtype, "tvdtype", "both", "dtypes of -torchvision: float32, float64 or both")
	if help, err := train.ParseFlags(fs, args); help || err != nil {
		return c, help, err
	}
	if *growthOnly && c.o.only != "" {
		return c, false, errors.New("bench: -growth and -model exclude each other (-model picks step-time models; -growth has none)")
	}
	if c.o.burst <= 0 {
		return c, false, errors.Errorf("bench: -burst %d: want at least one step a turn", c.o.burst)
	}
	if c.o.rounds <= 0 {
		return c, false, errors.Errorf("bench: -rounds %d: want at least one measured round", c.o.rounds)
	}
	if c.o.only != "" && !matchesAny(specs(c.o.small), c.o.only) {
		var names []string
		for _, s := range specs(c.o.small) {
			names = append(names, s.Name)
		}
		return c, false, errors.Errorf("bench: -model %q: no zoo model's name starts with it (%s)", c.o.only, strings.Join(names, "; "))
	}
	c.o.steps, c.o.growth = !*growthOnly, *growthOnly
	c.o.verbose = !c.asJSON
	return c, false, nil
}

// matchesAny reports whether a spec's name starts with prefix.
func matchesAny(ss []spec, prefix string) bool {
	for _, s := range ss {
		if strings.HasPrefix(s.Name, prefix) {
			return true
		}
	}
	return false
}

func main() {
	c := train.ParseCommandLine(parseFlags)
	if c.cpuProfile != "" {
		f, err := os.Create(c.cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "error: cpu profile:", err)
			os.Exit(1)
		}
		defer f.Close()
		defer pprof.StopCPUProfile()
	}
	if c.threads == 0 && c.o.torch {
		c.threads = 1
	}
	if c.threads > 0 {
		runtime.GOMAXPROCS(c.threads)
	}
	// After GOMAXPROCS: UseBLAS gives a system BLAS GOMAXPROCS threads.
	blasName := "gonum (-blas: accel.UseBLAS)"
	if c.useBLAS {
		blasName = accel.UseBLAS() + " (accel.UseBLAS; BULKAD_BLAS=bulkad chooses bulkad's GEMM over a system BLAS)"
	}
	if !c.asJSON {
		fmt.Printf("Gorgonia's matrix products: %s\n", blasName)
	}
	if c.tv != "" {
		if err := torchvisionMain(c.tv, c.tvBatch, c.tvSize, c.tvDtype, c.o.rounds, runtime.GOMAXPROCS(0), c.asJSON); err != nil {
			train.Fail(err)
		}
		return
	}
	c.o.threads = runtime.GOMAXPROCS(0)
	res, err := run(c.o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
	if c.asJSON {
		b, _ := json.MarshalIndent(res, "", "  ")
		fmt.Println(string(b))
	}
}

func run(o options) (*Result, error) {
	res := &Result{}
	small, only, verbose := o.small, o.only, o.verbose
	var torch *anchor
	if o.torch && small {
		fmt.Fprintln(os.Stderr, "bench: -torch needs the full sizes (drop -small); PyTorch not measured")
	} else if o.torch {
		a, err := startAnchor(o.threads)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench: PyTorch not measured:", err)
		} else {
			torch = a
			defer a.close()
		}
	}
	if verbose {
		fmt.Printf("threads: %d (GOMAXPROCS%s)\n\n", o.threads, map[bool]string{true: ", PyTorch, OpenBLAS", false: ""}[torch != nil])
	}
	if o.gemmOnly || torch != nil {
		rows, err := gemmTable(torch)
		if err != nil {
			return nil, err
		}
		res.Gemm = rows
		if verbose {
			printGemm(os.Stdout, rows)
			fmt.Println()
		}
		if o.gemmOnly {
			return res, nil
		}
	}
	if verbose && o.steps {
		fmt.Println(header)
	}
	for _, s := range specs(small) {
		if !o.steps || !strings.HasPrefix(s.Name, only) {
			continue
		}
		for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
			row, err := measure(s, dt, o.rounds, o.burst, torch, o.baseline, o.machine, o.vmOpts()...)
			if err != nil {
				return nil, err
			}
			res.Rows = append(res.Rows, row)
			if verbose {
				fmt.Println(fmtRow(row))
			}
		}
	}
	if verbose && len(res.Rows) > 0 {
		for _, r := range res.Rows {
			if r.HVPError != "" {
				fmt.Printf("\n%s %s: HessianVector not measured: %s\n", r.Model, r.Dtype, r.HVPError)
			}
		}
		fmt.Println()
		fmt.Println("set-up, from nothing to the end of the first step (one sample each):")
		fmt.Println()
		fmt.Println(setupHeader)
		for _, r := range res.Rows {
			fmt.Println(fmtSetupRow(r))
		}
	}
	if verbose && o.baseline {
		fmt.Println()
		fmt.Println(defaultHeader)
		for _, r := range res.Rows {
			fmt.Println(fmtDefaultRow(r))
		}
	}
	if verbose && torch != nil {
		fmt.Println()
		fmt.Println(torchHeader)
		for _, r := range res.Rows {
			fmt.Println(fmtTorchRow(r))
		}
	}
	if verbose && o.machine && len(res.Rows) > 0 {
		fmt.Println()
		printMachine(os.Stdout, res.Rows)
	}
	if !o.growth {
		return res, nil
	}
	if err := growthTables(o, res); err != nil {
		return nil, err
	}
	return res, nil
}

// vmOpts are the options of every machine: accel.Engine with -engine.
func (o options) vmOpts() []G.VMOpt {
	if o.engine {
		return []G.VMOpt{G.WithEngine(accel.Engine{})}
	}
	return nil
}

// growthTables measures res.Growth (3 repetitions, 2 for a family other than mlp at the full
// sizes) and res.SetupGrowth (2, 1 with -small), printing each with -verbose.
func growthTables(o options, res *Result) error {
	var err error
	res.Growth, err = collect(families(o.small), func(f family) (*Growth, error) {
		if !o.small && f.Name != "mlp" {
			return growth(f, 2)
		}
		return growth(f, 3)
	})
	if err != nil {
		return err
	}
	if o.verbose {
		fmt.Println()
		printGrowth(os.Stdout, res.Growth)
	}
	reps := 2
	if o.small {
		reps = 1
	}
	res.SetupGrowth, err = collect(blockFamilies(o.small), func(f blockFamily) (*SetupGrowth, error) { return setupGrowth(f, reps, o.vmOpts()...) })
	if err != nil {
		return err
	}
	if o.verbose {
		fmt.Println()
		printSetupGrowth(os.Stdout, res.SetupGrowth)
	}
	return nil
}

// collect calls f on every item, in order, and returns the results (the first error ends it).
func collect[T, R any](items []T, f func(T) (R, error)) ([]R, error) {
	out := make([]R, 0, len(items))
	for _, it := range items {
		r, err := f(it)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}
