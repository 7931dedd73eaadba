// Command ddp trains the main job's MLP (examples/mlp: 784-256-10, ReLU, softmax
// cross-entropy, Adam, gradients from bulkad.Grad) data-parallel over MPI with package dist:
// every rank computes the gradients of its shard of each batch, one all-reduce per step
// averages them (weighted by shard size) with the loss and accuracy, and every rank takes the
// same Adam step. Rank 0 prints the progress.
//
//	go run ./examples/ddp                                     # one process, no MPI needed
//	go build -o ddp ./examples/ddp && mpirun -np 4 ./ddp      # four ranks (Open MPI or MPICH)
//	mpirun -np 2 go run ./examples/ddp -steps 100             # builds on every rank, then trains
//
// As root, Open MPI's mpirun needs --allow-run-as-root, and --oversubscribe for more ranks
// than cores. The README shows Slurm (srun) and a Kubeflow MPIJob.
//
// Flags (-h lists them all): -batch is the global batch, split among the ranks (unevenly when
// it does not divide); -steps, -epochs, -lr, -n, -seed, -dtype, -hidden, -data as in
// examples/mlp; -check N checks every N steps that all ranks hold the same parameters (they
// are checked once at the end in any case); -fail-rank R -fail-step S makes rank R fail at step
// S, to see the whole job end with that rank's error.
package main

import (
	"fmt"
	"io"
	"math"
	"math/rand"
	"os"
	"time"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/accel"
	"github.com/bulkad/bulkad/dist"
	"github.com/bulkad/bulkad/examples/internal/train"
)

func main() {
	world, err := dist.Init()
	if err != nil {
		train.Fail(err)
	}
	if _, err := run(world, os.Args[1:], os.Stdout); err != nil {
		world.Abort(err) // every rank of the job ends, with this rank's error
	}
	if err := world.Finalize(); err != nil {
		train.Fail(err)
	}
}

// result is what a run reports (for the tests): the loss of every global batch, the
// held-out accuracy and the final parameters.
type result struct {
	Loss    []float64
	TestAcc float64
	Params  [][]float64
}

// shards splits a global batch among size ranks: the first batch%size ranks get one more.
func shards(batch, size int) []int {
	out := make([]int, size)
	for r := range out {
		out[r] = batch / size
		if r < batch%size {
			out[r]++
		}
	}
	return out
}

// run trains on world with the command's arguments; only rank 0 prints, to out.
func run(world *dist.Comm, args []string, out io.Writer) (*result, error) {
	rank, size := world.Rank(), world.Size()
	if rank != 0 {
		out = io.Discard
	}
	hidden := 256
	ex := train.MLP(&hidden)
	fs := train.NewFlagSet("ddp", "Trains the MLP data-parallel over MPI (mpirun -np N ddp); rank 0 prints the progress.", out)
	d := ex.Defaults
	dataDir := fs.String("data", "", "directory with the MNIST IDX files (default: the built-in digits)")
	steps := fs.Int("steps", 0, "train this many steps (0: -epochs epochs)")
	epochs := fs.Int("epochs", d.Epochs, "training epochs")
	bs := fs.Int("batch", d.Batch, "global batch size, split among the ranks")
	n := fs.Int("n", ex.DefaultN, "training examples drawn for the built-in data")
	lr := fs.Float64("lr", d.LearnRate, "Adam learning rate")
	dtype := fs.String("dtype", "float64", "float64 or float32")
	seed := fs.Int64("seed", d.Seed, "random seed (data order and initial weights)")
	check := fs.Int("check", 0, "check that the ranks' parameters agree every N steps (0: at the end only)")
	failRank := fs.Int("fail-rank", -1, "make this rank fail (with -fail-step)")
	failStep := fs.Int("fail-step", 0, "the step at which -fail-rank fails")
	ex.ExtraFlags(fs)
	if help, err := train.ParseFlags(fs, args); help || err != nil {
		return nil, err
	}
	cfg := d
	cfg.Name = ex.Name
	cfg.Epochs, cfg.Batch, cfg.Steps, cfg.LearnRate, cfg.Seed, cfg.Engine = *epochs, *bs, *steps, *lr, *seed, true
	var err error
	if cfg.Dtype, err = train.ParseDtype("ddp", *dtype); err != nil {
		return nil, err
	}
	if cfg.Batch < size || cfg.Epochs <= 0 || cfg.Steps < 0 {
		return nil, errors.Errorf("ddp: -batch %d must be at least the number of ranks (%d), -epochs positive, -steps non-negative", cfg.Batch, size)
	}
	if err := train.CheckLearnRate("ddp", cfg.LearnRate); err != nil {
		return nil, err
	}
	if err := ex.CheckFlags(); err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "world: %d rank(s), %s\n", size, world.Library())
	fmt.Fprintf(out, "Gorgonia's matrix products: %s (accel.UseBLAS)\n", accel.UseBLAS())
	trainSet, testSet, desc, err := ex.Load(*dataDir, *n, cfg.Seed)
	if err != nil {
		return nil, err
	}
	perEpoch := trainSet.N / cfg.Batch
	if perEpoch == 0 {
		return nil, errors.Errorf("ddp: %d training examples is fewer than one batch of %d", trainSet.N, cfg.Batch)
	}
	total := cfg.Epochs * perEpoch
	if cfg.Steps > 0 {
		total = cfg.Steps
	}
	sizes := shards(cfg.Batch, size)
	lo := 0
	for r := 0; r < rank; r++ {
		lo += sizes[r]
	}
	mine := sizes[rank]
	fmt.Fprintf(out, "data: %d training and %d test examples (%s); global batch %d = shards %v\n", trainSet.N, testSet.N, desc, cfg.Batch, sizes)

	// Every rank builds the graph for its shard; rank 0's initial parameters are broadcast.
	local := cfg
	local.Batch = mine
	tr, err := train.NewTrainer(local, ex.Build, ex.Init(cfg.Dtype, cfg.Seed+int64(rank)), bulkad.Grad)
	if err != nil {
		return nil, err
	}
	defer tr.VM.Close()
	dp, err := dist.NewDataParallel(world, tr.Net.Learn)
	if err != nil {
		return nil, err
	}
	if err := dp.BroadcastParams(); err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "training %s (%v) data-parallel with bulkad.Grad, %d steps\n", cfg.Name, cfg.Dtype, total)

	res := &result{}
	rng := rand.New(rand.NewSource(cfg.Seed + 1)) // the same order on every rank
	var times []time.Duration
	xShape := ex.XShape(mine)
	nEpochs := (total + perEpoch - 1) / perEpoch
	for epoch := 1; len(res.Loss) < total; epoch++ {
		order := rng.Perm(trainSet.N)
		todo := min(perEpoch, total-len(res.Loss))
		barOut := out
		if !train.EpochShown(epoch, nEpochs) { // the log of a job: about ten lines
			barOut = io.Discard
		}
		bar := train.NewProgress(barOut, fmt.Sprintf("epoch %d", epoch), todo, false)
		var sumLoss, sumAcc float64
		for b := 0; b < todo; b++ {
			step := len(res.Loss) + 1
			if rank == *failRank && step == *failStep {
				return nil, errors.Errorf("ddp: rank %d: failing at step %d as asked (-fail-rank, -fail-step)", rank, step)
			}
			t0 := time.Now()
			idx := order[b*cfg.Batch+lo : b*cfg.Batch+lo+mine]
			x, y, labels := train.Batch(cfg.Dtype, trainSet, idx, xShape, cfg.Classes)
			if err := tr.Forward(x, y); err != nil {
				return nil, errors.Wrapf(err, "ddp: step %d", step)
			}
			loss := train.Floats(tr.Net.Cost.Value())[0]
			acc := train.Accuracy(train.Argmax(train.Floats(tr.Net.Logits.Value()), mine, cfg.Classes), labels)
			m, err := dp.AverageGradients(float64(mine), loss, acc)
			if err != nil {
				return nil, errors.Wrapf(err, "ddp: step %d", step)
			}
			if err := tr.Solver.Step(G.NodesToValueGrads(tr.Net.Learn)); err != nil {
				return nil, errors.Wrapf(err, "ddp: step %d: solver", step)
			}
			tr.VM.Reset()
			times = append(times, time.Since(t0))
			if math.IsNaN(m[0]) {
				return nil, errors.Errorf("ddp: loss became NaN at step %d", step)
			}
			res.Loss = append(res.Loss, m[0])
			sumLoss += m[0]
			sumAcc += m[1]
			bar.Update(b+1, sumLoss/float64(b+1), sumAcc/float64(b+1), train.Median(times))
			if *check > 0 && step%*check == 0 {
				if err := dp.CheckParams(); err != nil {
					return nil, err
				}
			}
		}
	}
	if err := dp.CheckParams(); err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "parameters identical on all %d rank(s)\n", size)
	params := tr.Params()
	for _, p := range params {
		res.Params = append(res.Params, train.Floats(p))
	}
	if rank == 0 { // every rank holds the same parameters: one evaluates
		if res.TestAcc, err = train.Evaluate(cfg, ex.Build, params, testSet, ex.XShape(cfg.Batch)); err != nil {
			return nil, err
		}
		fmt.Fprintf(out, "%d steps on %d rank(s), median %s/step, held-out accuracy %.2f%% (%d test examples)\n",
			len(res.Loss), size, train.FormatDuration(train.Median(times)), 100*res.TestAcc, testSet.N)
	}
	return res, nil
}
