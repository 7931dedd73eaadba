// Command bench measures bulkad against Gorgonia's own autodiff in one process: for each zoo
// model and dtype it builds the same graph three times (gradient by bulkad.Grad, gradient by
// gorgonia.Grad, forward only), then steps them alternately (A B C A B C …) for several rounds
// and prints medians as a markdown table: step times, their ratio, (value + gradient) /
// forward, the graph's nodes before and after each Grad, differentiation time, set-up time
// (build + Grad + NewTapeMachine + first run; a second table splits it by stage) and bytes
// allocated per step. The models are the four (MLP, convnet, tanh RNN, attention) and
// the models people train (Gorgonia's MNIST convnet, a ResNet basic-block stack, a
// MobileNet-style depthwise-separable stack, a transformer encoder layer, an unrolled LSTM).
// It also times differentiation on growing graphs — MLPs of 10, 100 and 1000 layers, a
// tanh/add chain of 5,000, 10,000 and 20,000 nodes reusing one weight, a tanh RNN of 500, 1000
// and 2000 steps — separating Differentiate, Raise and the time Raise spends in Gorgonia's own
// node constructors (Gorgonia scans every node of the graph for each new one: quadratic
// whatever bulkad does), and fits the growth exponent of each over the graph's node count;
// and set-up time (Grad, NewTapeMachine, first run) and node counts of ResNet blocks,
// MobileNet blocks and transformer layers stacked 1, 2, 4, … 32 deep, for both autodiffs.
//
//	go run ./examples/bench            # full sizes (about a minute)
//	go run ./examples/bench -small     # tiny sizes (smoke test)
//	go run ./examples/bench -json
//	go run ./examples/bench -growth    # only the growth tables
//	go run ./examples/bench -blas      # Gorgonia's own products on bulkad's GEMM (bulkad.UseBLAS)
//	go run ./examples/bench -blas -engine  # and Gorgonia's transposes and softmax on bulkad.Engine
//	go run ./examples/bench -torch     # also PyTorch's step (1 thread each) and a GEMM table
//	go run ./examples/bench -torch -threads 2 -blas -engine
//	go run ./examples/bench -gemm      # only the GEMM table (bulkad, gonum; numpy with -torch)
//	go run ./examples/bench -torchvision all -threads 1 -blas  # torchvision's models against PyTorch
//
// -torchvision exports torchvision's models (weights=None, eval mode) from PyTorch into a
// temporary folder, imports each with bulkad.ImportONNXFile, differentiates Σ out ⊙ r with
// respect to every initializer and steps it on a TapeMachine (bulkad.Engine) alternating with
// PyTorch's step: set-up by stage, peak Go heap, node counts, step times.
//
// -torch runs torch_anchor.py (embedded) with Debian's python3-torch (apt-get install
// python3-torch libopenblas0-pthread; skipped with a message when no python3 imports torch):
// the same models at the same sizes, forward and backward, stepped between the Go steps of each round, and
// numpy's GEMM (OpenBLAS) at the models' product shapes. -threads N sets GOMAXPROCS and
// PyTorch's and OpenBLAS's thread counts (default with -torch: 1; without: GOMAXPROCS as is).
//
// Ratios measured in one run are meaningful; absolute times depend on the machine's load.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/bulkad/bulkad"
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
	engine                          bool // every machine runs on bulkad.Engine
	baseline                        bool // also gorgonia.Grad on Gorgonia's defaults
	rounds, threads                 int
	only                            string
}

func main() {
	small := flag.Bool("small", false, "tiny models (smoke test)")
	rounds := flag.Int("rounds", 15, "measured rounds per model (after one warm-up)")
	asJSON := flag.Bool("json", false, "print JSON")
	only := flag.String("model", "", "only models whose name starts with this")
	growthOnly := flag.Bool("growth", false, "only the growth tables (no step times)")
	useBLAS := flag.Bool("blas", false, "install a fast GEMM as Gorgonia's BLAS (bulkad.UseBLAS: the system's OpenBLAS/BLIS if installed, else bulkad's; BULKAD_BLAS=bulkad forces bulkad's) before measuring")
	torch := flag.Bool("torch", false, "also measure PyTorch (python3-torch) and numpy's GEMM, alternating with the Go runs")
	threads := flag.Int("threads", 0, "GOMAXPROCS and PyTorch/OpenBLAS threads (0: 1 with -torch, else GOMAXPROCS as is)")
	gemmOnly := flag.Bool("gemm", false, "only the GEMM table")
	engine := flag.Bool("engine", false, "run every machine (bulkad's, Gorgonia's, the forward pass) on bulkad.Engine (gorgonia.WithEngine): kernel's transpose and softmax for Gorgonia's forward pass")
	baseline := flag.Bool("baseline", false, "also step gorgonia.Grad's graph on Gorgonia's defaults (gonum's GEMM, its engine) between the other steps, and print bulkad/default")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file (go tool pprof)")
	tv := flag.String("torchvision", "", "only the torchvision table: these models (comma-separated, or all) exported from PyTorch (needs python3-torch, python3-torchvision, python3-onnx), imported, differentiated and stepped against PyTorch")
	tvBatch := flag.Int("tvbatch", 2, "batch of -torchvision")
	tvSize := flag.Int("tvsize", 64, "image size of -torchvision")
	tvDtype := flag.String("tvdtype", "both", "dtypes of -torchvision: float32, float64 or both")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
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
	if *growthOnly {
		*only = "\x00none"
	}
	if *threads == 0 && *torch {
		*threads = 1
	}
	if *threads > 0 {
		runtime.GOMAXPROCS(*threads)
	}
	// After GOMAXPROCS: UseBLAS gives a system BLAS GOMAXPROCS threads.
	blasName := "gonum (-blas: bulkad.UseBLAS)"
	if *useBLAS {
		blasName = bulkad.UseBLAS() + " (bulkad.UseBLAS; BULKAD_BLAS=bulkad chooses bulkad's GEMM over a system BLAS)"
	}
	if !*asJSON {
		fmt.Printf("Gorgonia's matrix products: %s\n", blasName)
	}
	if *tv != "" {
		if err := torchvisionMain(*tv, *tvBatch, *tvSize, *tvDtype, *rounds, runtime.GOMAXPROCS(0), *asJSON); err != nil {
			fmt.Fprintln(os.Stderr, "error:", err)
			os.Exit(1)
		}
		return
	}
	res, err := run(options{small: *small, rounds: *rounds, only: *only, verbose: !*asJSON, torch: *torch, threads: runtime.GOMAXPROCS(0), gemmOnly: *gemmOnly, engine: *engine, baseline: *baseline})
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
	if *asJSON {
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
	if verbose && only != "\x00none" {
		fmt.Println(header)
	}
	for _, s := range specs(small) {
		if only != "" && (len(s.Name) < len(only) || s.Name[:len(only)] != only) {
			continue
		}
		for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
			var vm []G.VMOpt
			if o.engine {
				vm = append(vm, G.WithEngine(bulkad.Engine{}))
			}
			row, err := measure(s, dt, o.rounds, torch, o.baseline, vm...)
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
	for _, f := range families(small) {
		reps := 3
		if !small && f.Name != "mlp" {
			reps = 2
		}
		g, err := growth(f, reps)
		if err != nil {
			return nil, err
		}
		res.Growth = append(res.Growth, g)
	}
	if verbose {
		fmt.Println()
		printGrowth(os.Stdout, res.Growth)
	}
	var vm []G.VMOpt
	if o.engine {
		vm = append(vm, G.WithEngine(bulkad.Engine{}))
	}
	for _, f := range blockFamilies(small) {
		reps := 2
		if small {
			reps = 1
		}
		g, err := setupGrowth(f, reps, vm...)
		if err != nil {
			return nil, err
		}
		res.SetupGrowth = append(res.SetupGrowth, g)
	}
	if verbose {
		fmt.Println()
		printSetupGrowth(os.Stdout, res.SetupGrowth)
	}
	return res, nil
}
