package train

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/accel"
	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Example describes one example program for Main.
type Example struct {
	Name     string
	Defaults Config
	// Init draws the initial parameters for dtype dt from seed.
	Init func(dt tensor.Dtype, seed int64) []*tensor.Dense
	// Build builds the graph (see BuildFunc).
	Build BuildFunc
	// XShape is the shape of an input batch of the given size.
	XShape func(batch int) []int
	// Load returns the training and test sets and a description; dataDir is the -data flag
	// ("" for the built-in data) and n the -n flag.
	Load func(dataDir string, n int, seed int64) (trainSet, testSet *Data, desc string, err error)
	// DefaultN is the default of -n (examples drawn for built-in data); 0: the built-in data
	// has a fixed size and there is no -n flag.
	DefaultN int
	// BuiltInOnly: the example has no -data flag (its data set is built in).
	BuiltInOnly bool
	// ExtraFlags registers the example's own flags; they are parsed before Init and Build run.
	ExtraFlags func(fs *flag.FlagSet)
	// CheckFlags validates the values of the ExtraFlags after parsing, before anything is
	// loaded or built (nil: nothing to check).
	CheckFlags func() error
	// CompareNote is printed after the gradient comparison of -compare (empty: none): what
	// is known about the example's operations where the two autodiffs differ.
	CompareNote string
}

// Command is the main function of the training examples: Main with bulkad.Grad (and
// gorgonia.Grad for -compare) on the process's arguments, exiting with status 1 on an error.
func Command(ex Example) {
	RunCommand(func(args []string, out io.Writer) error {
		return Main(ex, bulkad.Grad, "bulkad.Grad", G.Grad, args, out)
	})
}

// RunCommand is the main function of an example command: run on the process's arguments
// (without the program name) and standard output; an error is printed and exits with status 1.
func RunCommand(run func(args []string, out io.Writer) error) {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		Fail(err)
	}
}

// Fail ends a command that failed with err: it prints err to standard error and exits with
// status 1.
func Fail(err error) {
	fmt.Fprintln(os.Stderr, "error:", err)
	os.Exit(1)
}

// NewFlagSet is the flag set of an example command: parse errors are returned (see
// ParseFlags), and -h prints about, then the flags, to out.
func NewFlagSet(name, about string, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "%s\nFlags:\n", about)
		fs.PrintDefaults()
	}
	return fs
}

// Main parses args (without the program name), trains the example with grad (named
// gradName), and prints to out. With -compare it also trains with ref (Gorgonia's Grad) from
// the same initial parameters and prints both step times and the largest gradient difference.
func Main(ex Example, grad GradFunc, gradName string, ref GradFunc, args []string, out io.Writer) error {
	fs := NewFlagSet(ex.Name, "Trains "+ex.Name+" with bulkad gradients and reports step times and held-out accuracy.", out)
	d := ex.Defaults
	dataDir := new(string)
	if !ex.BuiltInOnly {
		fs.StringVar(dataDir, "data", "", "directory with the real data set (default: the built-in data)")
	}
	compare := fs.Bool("compare", false, "also train with gorgonia.Grad; compare step times and gradients")
	plotTo := fs.String("plot", "", "write the loss/accuracy curve to this PNG file")
	steps := fs.Int("steps", 0, "train this many steps (0: -epochs epochs; more steps than the default epochs hold train more epochs)")
	epochs := fs.Int("epochs", d.Epochs, "training epochs")
	bs := fs.Int("batch", d.Batch, "batch size")
	n := new(int)
	if ex.DefaultN > 0 {
		fs.IntVar(n, "n", ex.DefaultN, "training examples drawn for the built-in data")
	}
	lr := fs.Float64("lr", d.LearnRate, "Adam learning rate")
	dtype := fs.String("dtype", "float64", "float64 or float32")
	seed := fs.Int64("seed", d.Seed, "random seed (data order and initial weights)")
	gonumBLAS := fs.Bool("gonum", false, "keep gonum's GEMM for Gorgonia's own matrix products (default: accel.UseBLAS, bulkad's GEMM)")
	stdEngine := fs.Bool("std-engine", false, "run the machines on Gorgonia's own tensor engine (default: accel.Engine, kernel's transpose, softmax and ReLU mask)")
	if ex.ExtraFlags != nil {
		ex.ExtraFlags(fs)
	}
	if help, err := ParseFlags(fs, args); help || err != nil {
		return err
	}
	explicit := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { explicit[f.Name] = true })
	cfg := d
	cfg.Name = ex.Name
	cfg.Epochs, cfg.Batch, cfg.Steps, cfg.LearnRate, cfg.Seed = *epochs, *bs, *steps, *lr, *seed
	cfg.Engine = !*stdEngine
	var err error
	if cfg.Dtype, err = ParseDtype(ex.Name, *dtype); err != nil {
		return err
	}
	// Every flag is checked now, not after training.
	if cfg.Batch <= 0 || cfg.Epochs <= 0 || cfg.Steps < 0 {
		return errors.Errorf("%s: -batch and -epochs must be positive, -steps non-negative", ex.Name)
	}
	if err := CheckLearnRate(ex.Name, cfg.LearnRate); err != nil {
		return err
	}
	if ex.CheckFlags != nil {
		if err := ex.CheckFlags(); err != nil {
			return err
		}
	}
	if *plotTo != "" {
		if err := CheckPlotPath(*plotTo); err != nil {
			return errors.Wrapf(err, "%s: -plot", ex.Name)
		}
	}
	if !*gonumBLAS {
		fmt.Fprintf(out, "Gorgonia's matrix products: %s (accel.UseBLAS)\n", accel.UseBLAS())
	}
	if cfg.Engine {
		fmt.Fprintln(out, "tensor engine: accel.Engine (-std-engine: Gorgonia's)")
	}
	if err := describeKernels(out); err != nil {
		return err
	}
	if f, ok := out.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			cfg.TTY = true
		}
	}
	trainSet, testSet, desc, err := ex.Load(*dataDir, *n, cfg.Seed)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "data: %d training and %d test examples (%s)\n", trainSet.N, testSet.N, desc)
	if trainSet.N < cfg.Batch {
		return errors.Errorf("%s: -batch %d: the %d training examples are fewer than one batch", ex.Name, cfg.Batch, trainSet.N)
	}
	if perEpoch := trainSet.N / cfg.Batch; cfg.Steps > 0 && perEpoch > 0 && cfg.Steps > cfg.Epochs*perEpoch {
		need := (cfg.Steps + perEpoch - 1) / perEpoch
		if explicit["epochs"] {
			fmt.Fprintf(out, "note: -epochs %d holds %d steps of batch %d; stopping there, not at -steps %d\n", cfg.Epochs, cfg.Epochs*perEpoch, cfg.Batch, cfg.Steps)
		} else {
			cfg.Epochs = need
			fmt.Fprintf(out, "training %d epochs of %d steps to reach -steps %d\n", need, perEpoch, cfg.Steps)
		}
	}
	init := ex.Init(cfg.Dtype, cfg.Seed)
	xs := ex.XShape(cfg.Batch)
	res, err := Run(cfg, ex.Build, init, grad, gradName, trainSet, testSet, xs, out)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s: %d steps, median %s/step, held-out accuracy %.2f%% (%d test examples)\n", gradName, res.Steps, FormatDuration(res.StepTime), 100*res.TestAcc, testSet.N)
	if *plotTo != "" {
		if err := res.Curve.Plot(*plotTo, fmt.Sprintf("%s training with %s", ex.Name, gradName)); err != nil {
			return err
		}
		fmt.Fprintf(out, "wrote %s\n", *plotTo)
	}
	if !*compare {
		return nil
	}
	gres, err := Run(cfg, ex.Build, init, ref, "gorgonia.Grad", trainSet, testSet, xs, out)
	if err != nil {
		return errors.Wrap(err, "with gorgonia.Grad")
	}
	fmt.Fprintf(out, "gorgonia.Grad: %d steps, median %s/step, held-out accuracy %.2f%% (%d test examples)\n", gres.Steps, FormatDuration(gres.StepTime), 100*gres.TestAcc, testSet.N)
	fmt.Fprintf(out, "step time %s / gorgonia.Grad: %.2f\n", gradName, float64(res.StepTime)/float64(gres.StepTime))
	idx := make([]int, cfg.Batch)
	for i := range idx {
		idx[i] = i % trainSet.N
	}
	x, y, _ := Batch(cfg.Dtype, trainSet, idx, xs, cfg.Classes)
	diff, err := GradientDifference(cfg, ex.Build, init, grad, ref, x, y)
	if err != nil {
		return errors.Wrap(err, "comparing gradients")
	}
	fmt.Fprintf(out, "largest gradient difference on one batch from the same weights: %.3g\n", diff)
	verdict, err := FDVerdict(cfg, ex.Build, init, x, y, comparedProbes)
	if err != nil {
		return errors.Wrap(err, "checking the gradients against finite differences")
	}
	fmt.Fprint(out, verdict)
	if ex.CompareNote != "" {
		fmt.Fprintf(out, "note: %s\n", ex.CompareNote)
	}
	return nil
}

// comparedProbes is the number of entries per parameter that -compare checks against finite
// differences.
const comparedProbes = 8

// ParseCommandLine parses the process's arguments with parse, the usage of -h going to
// standard output: it exits with status 0 after -h and with status 2 after an error, which
// it prints to standard error. It is for a main function, before anything is deferred.
func ParseCommandLine[C any](parse func(args []string, out io.Writer) (c C, help bool, err error)) C {
	c, help, err := parse(os.Args[1:], os.Stdout)
	if help {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(2)
	}
	return c
}

// ParseFlags parses a command's arguments: help is set after -h (the usage was printed), and
// an argument that is not a flag is an error naming fs.
func ParseFlags(fs *flag.FlagSet, args []string) (help bool, err error) {
	if err := fs.Parse(args); err == flag.ErrHelp {
		return true, nil
	} else if err != nil {
		return false, err
	}
	if fs.NArg() > 0 {
		return false, errors.Errorf("%s: unexpected argument %q (flags start with -; -h lists them)", fs.Name(), fs.Arg(0))
	}
	return false, nil
}

// ParseDtype reads a -dtype flag: float64 or float32.
func ParseDtype(cmd, s string) (tensor.Dtype, error) {
	switch s {
	case "float64":
		return tensor.Float64, nil
	case "float32":
		return tensor.Float32, nil
	}
	return tensor.Float64, errors.Errorf("%s: -dtype %q: want float64 or float32", cmd, s)
}

// Must is gorgonia.Must that records the first error in *err instead of panicking.
func Must(err *error) func(n *G.Node, e error) *G.Node {
	return func(n *G.Node, e error) *G.Node {
		if e != nil && *err == nil {
			*err = e
		}
		return n
	}
}

// CheckLearnRate refuses a learning rate that is not a finite number above 0 (NaN or +Inf
// would fail only after the first steps), naming the command cmd.
func CheckLearnRate(cmd string, lr float64) error {
	if !(lr > 0) || math.IsInf(lr, 1) {
		return errors.Errorf("%s: -lr %v: want a finite learning rate above 0", cmd, lr)
	}
	return nil
}

// CheckPlotPath finds a bad -plot path before training: the format its extension names must
// be one Curve.Plot writes, and the file must be writable (see CheckWritable).
func CheckPlotPath(path string) error {
	if err := checkPlotFormat(path); err != nil {
		return err
	}
	return CheckWritable(path)
}

// CheckWritable creates path (and removes it again) to find a bad output path before training.
func CheckWritable(path string) error {
	if _, err := os.Stat(path); err == nil {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		return f.Close()
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(path)
}

// describeKernels prints where bulkad's gradient kernels run when BULKAD_VULKAN is set.
func describeKernels(out io.Writer) error {
	mode, ok := os.LookupEnv(bulkad.VulkanEnv)
	if !ok {
		return nil
	}
	v, err := bulkad.CurrentVulkan()
	if err != nil {
		return err
	}
	switch {
	case v == nil && (mode == "" || mode == "0"):
		fmt.Fprintf(out, "kernels: CPU (%s=%s)\n", bulkad.VulkanEnv, mode)
	case v == nil || v.Device == nil:
		_, derr := bulkad.VulkanDevice()
		fmt.Fprintf(out, "kernels: CPU (%s=%s, but no Vulkan device: %v)\n", bulkad.VulkanEnv, mode, derr)
	case v.Force:
		fmt.Fprintf(out, "kernels: Vulkan device %q, every supported kernel (%s=force)\n", v.Device.Name(), bulkad.VulkanEnv)
	default:
		fmt.Fprintf(out, "kernels: Vulkan device %q where it is expected to be faster, CPU elsewhere (%s=%s)\n", v.Device.Name(), bulkad.VulkanEnv, mode)
	}
	return nil
}
