package dist_test

import (
	"fmt"
	"math"
	"math/rand"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/dist"
	"github.com/bulkad/bulkad/examples/opgraphs"
)

// The tests' model: an MLP 6-8-3 (ReLU, softmax cross-entropy averaged over the batch) on a
// fixed random data set of 60 rows; step s trains on the batch of 12 rows starting at row
// 12·s (mod 60). A distributed run splits each batch into contiguous shards, one per rank.
const (
	features = 6
	hidden   = 8
	classes  = 3
	batch    = 12
	rows     = 60
)

// runConfig is one training run of the test model.
type runConfig struct {
	Dtype  tensor.Dtype
	Grad   string // "bulkad" or "gorgonia"
	Dual   bool   // the machine binds dual values (BindDualValues); else gradient nodes' values
	Solver string
	Steps  int
}

func (c runConfig) String() string {
	bind := "nodes"
	if c.Dual {
		bind = "dual"
	}
	return fmt.Sprintf("%s/%s/%s/%v", c.Grad, bind, c.Solver, c.Dtype)
}

// solverNames are Gorgonia's solvers (v0.9.18).
func solverNames() []string {
	return []string{"vanilla", "momentum", "adagrad", "rmsprop", "adam", "adamw", "barzilai-borwein"}
}

func (c runConfig) solver() (G.Solver, error) {
	switch c.Solver {
	case "vanilla":
		return G.NewVanillaSolver(G.WithLearnRate(0.1)), nil
	case "momentum":
		return G.NewMomentum(G.WithLearnRate(0.05), G.WithMomentum(0.9)), nil
	case "adagrad":
		return G.NewAdaGradSolver(G.WithLearnRate(0.05)), nil
	case "rmsprop":
		return G.NewRMSPropSolver(G.WithLearnRate(0.01)), nil
	case "adam":
		return G.NewAdamSolver(G.WithLearnRate(0.01)), nil
	case "adamw":
		return G.NewAdamW(G.WithLearnRate(0.01)), nil
	case "barzilai-borwein":
		return G.NewBarzilaiBorweinSolver(G.WithLearnRate(0.01)), nil
	}
	return nil, errors.Errorf("unknown solver %q", c.Solver)
}

func (c runConfig) gradFunc() func(*G.Node, ...*G.Node) (G.Nodes, error) {
	if c.Grad == "gorgonia" {
		return G.Grad
	}
	return bulkad.Grad
}

// testConfigs is every solver with bulkad.Grad and dual values, every solver with the other
// three combinations of autodiff and binding in turn, and a float32 run.
func testConfigs(steps int) []runConfig {
	var out []runConfig
	others := []runConfig{{Grad: "gorgonia", Dual: true}, {Grad: "bulkad", Dual: false}, {Grad: "gorgonia", Dual: false}}
	for i, s := range solverNames() {
		out = append(out, runConfig{Dtype: tensor.Float64, Grad: "bulkad", Dual: true, Solver: s, Steps: steps})
		o := others[i%len(others)]
		out = append(out, runConfig{Dtype: tensor.Float64, Grad: o.Grad, Dual: o.Dual, Solver: s, Steps: steps})
	}
	return append(out, runConfig{Dtype: tensor.Float32, Grad: "bulkad", Dual: true, Solver: "adam", Steps: steps})
}

// dataset is the fixed data: rows×features inputs and a label per row (a noisy linear rule).
func dataset() ([]float64, []int) {
	rng := rand.New(rand.NewSource(7))
	x := make([]float64, rows*features)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	labels := make([]int, rows)
	for i := range labels {
		best, bestV := 0, math.Inf(-1)
		for k := 0; k < classes; k++ {
			v := x[i*features+k] - x[i*features+k+3] + 0.5*rng.NormFloat64()
			if v > bestV {
				best, bestV = k, v
			}
		}
		labels[i] = best
	}
	return x, labels
}

// shardOf returns rows [lo, lo+n) of step's batch as x : [n, features] and one-hot y : [n, classes].
func shardOf(dt tensor.Dtype, step, lo, n int) (*tensor.Dense, *tensor.Dense) {
	x, labels := dataset()
	xv := make([]float64, n*features)
	yv := make([]float64, n*classes)
	for i := 0; i < n; i++ {
		r := (step*batch + lo + i) % rows
		copy(xv[i*features:], x[r*features:(r+1)*features])
		yv[i*classes+labels[r]] = 1
	}
	return opgraphs.Dense(dt, []int{n, features}, xv), opgraphs.Dense(dt, []int{n, classes}, yv)
}

// initParams draws the parameters w0, b0, w1, b1 from seed.
func initParams(dt tensor.Dtype, seed int64) []*tensor.Dense {
	rng := rand.New(rand.NewSource(seed))
	draw := func(n int, scale float64) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = scale * rng.NormFloat64()
		}
		return v
	}
	return []*tensor.Dense{
		opgraphs.Dense(dt, []int{features, hidden}, draw(features*hidden, 0.4)),
		opgraphs.Dense(dt, []int{hidden}, draw(hidden, 0.1)),
		opgraphs.Dense(dt, []int{hidden, classes}, draw(hidden*classes, 0.4)),
		opgraphs.Dense(dt, []int{classes}, draw(classes, 0.1)),
	}
}

// replica is the compiled training graph of one process for batches (or shards) of n rows.
type replica struct {
	cfg    runConfig
	x, y   *G.Node
	cost   *G.Node
	learn  G.Nodes
	vm     G.VM
	solver G.Solver
	model  []G.ValueGrad
}

func newReplica(cfg runConfig, n int, params []*tensor.Dense) (*replica, error) {
	g := G.NewGraph()
	dt := cfg.Dtype
	r := &replica{cfg: cfg}
	r.x = G.NewMatrix(g, dt, G.WithShape(n, features), G.WithName("x"))
	r.y = G.NewMatrix(g, dt, G.WithShape(n, classes), G.WithName("y"))
	w0 := G.NewMatrix(g, dt, G.WithShape(features, hidden), G.WithName("w0"), G.WithValue(params[0].Clone()))
	b0 := G.NewVector(g, dt, G.WithShape(hidden), G.WithName("b0"), G.WithValue(params[1].Clone()))
	w1 := G.NewMatrix(g, dt, G.WithShape(hidden, classes), G.WithName("w1"), G.WithValue(params[2].Clone()))
	b1 := G.NewVector(g, dt, G.WithShape(classes), G.WithName("b1"), G.WithValue(params[3].Clone()))
	var err error
	must := func(n *G.Node, e error) *G.Node {
		if e != nil && err == nil {
			err = e
		}
		return n
	}
	h := must(G.Rectify(must(G.BroadcastAdd(must(G.Mul(r.x, w0)), b0, nil, []byte{0}))))
	logits := must(G.BroadcastAdd(must(G.Mul(h, w1)), b1, nil, []byte{0}))
	r.cost = must(G.Neg(must(G.Mean(must(G.Sum(must(G.HadamardProd(must(G.LogSoftMax(logits)), r.y)), 1))))))
	if err != nil {
		return nil, errors.Wrap(err, "building the graph")
	}
	r.learn = G.Nodes{w0, b0, w1, b1}
	if _, err := cfg.gradFunc()(r.cost, r.learn...); err != nil {
		return nil, errors.Wrapf(err, "%s.Grad", cfg.Grad)
	}
	if cfg.Dual {
		r.vm = G.NewTapeMachine(g, G.BindDualValues(r.learn...))
	} else {
		r.vm = G.NewTapeMachine(g)
	}
	if r.solver, err = cfg.solver(); err != nil {
		return nil, err
	}
	r.model = G.NodesToValueGrads(r.learn)
	return r, nil
}

// forward runs the forward and backward pass on one batch and returns the loss.
func (r *replica) forward(x, y *tensor.Dense) (float64, error) {
	if err := G.Let(r.x, x); err != nil {
		return 0, err
	}
	if err := G.Let(r.y, y); err != nil {
		return 0, err
	}
	if err := r.vm.RunAll(); err != nil {
		return 0, errors.Wrap(err, "running the tape")
	}
	return scalar(r.cost.Value())
}

// update takes the solver step and readies the machine for the next batch.
func (r *replica) update() error {
	err := r.solver.Step(r.model)
	r.vm.Reset()
	return errors.Wrap(err, "solver step")
}

// params returns copies of the parameter values as float64s.
func (r *replica) params() [][]float64 {
	out := make([][]float64, len(r.learn))
	for i, n := range r.learn {
		switch d := n.Value().Data().(type) {
		case []float64:
			out[i] = append([]float64{}, d...)
		case []float32:
			for _, v := range d {
				out[i] = append(out[i], float64(v))
			}
		}
	}
	return out
}

func scalar(v G.Value) (float64, error) {
	switch d := v.Data().(type) {
	case float64:
		return d, nil
	case float32:
		return float64(d), nil
	}
	return 0, errors.Errorf("loss is a %T", v)
}

// curve is a run's outcome: the loss of the whole batch at every step and the final parameters.
type curve struct {
	Loss   []float64
	Params [][]float64
}

// trainSingle is the reference: one process, whole batches, no package dist at all.
func trainSingle(cfg runConfig) (*curve, error) {
	r, err := newReplica(cfg, batch, initParams(cfg.Dtype, 1))
	if err != nil {
		return nil, err
	}
	defer r.vm.Close()
	out := &curve{}
	for s := 0; s < cfg.Steps; s++ {
		x, y := shardOf(cfg.Dtype, s, 0, batch)
		loss, err := r.forward(x, y)
		if err != nil {
			return nil, err
		}
		out.Loss = append(out.Loss, loss)
		if err := r.update(); err != nil {
			return nil, err
		}
	}
	out.Params = r.params()
	return out, nil
}

// shardSizes splits a batch of 12 unevenly among n ranks (7+5, 5+4+3, else as evenly as possible).
func shardSizes(n int) []int {
	switch n {
	case 1:
		return []int{batch}
	case 2:
		return []int{7, 5}
	case 3:
		return []int{5, 4, 3}
	}
	out := make([]int, n)
	for i := range out {
		out[i] = batch / n
		if i < batch%n {
			out[i]++
		}
	}
	return out
}

// trainDistributed trains cfg data-parallel on world: every rank draws its own initial
// parameters (seed 1 + rank), rank 0's are broadcast, and each step averages the shards'
// gradients and losses by shard size. hook, when not nil, runs before every step (counted
// from 1) and an error it returns ends the run.
func trainDistributed(world *dist.Comm, cfg runConfig, hook func(step int) error) (*curve, error) {
	sizes := shardSizes(world.Size())
	lo := 0
	for r := 0; r < world.Rank(); r++ {
		lo += sizes[r]
	}
	n := sizes[world.Rank()]
	r, err := newReplica(cfg, n, initParams(cfg.Dtype, 1+int64(world.Rank())))
	if err != nil {
		return nil, err
	}
	defer r.vm.Close()
	var dp *dist.DataParallel
	if cfg.Dual {
		dp, err = dist.NewDataParallelModel(world, r.model)
	} else {
		dp, err = dist.NewDataParallel(world, r.learn)
	}
	if err != nil {
		return nil, err
	}
	if err := dp.BroadcastParams(); err != nil {
		return nil, err
	}
	out := &curve{}
	for s := 0; s < cfg.Steps; s++ {
		if hook != nil {
			if err := hook(s + 1); err != nil {
				return nil, errors.Wrapf(err, "%v", cfg)
			}
		}
		x, y := shardOf(cfg.Dtype, s, lo, n)
		loss, err := r.forward(x, y)
		if err != nil {
			return nil, err
		}
		m, err := dp.AverageGradients(float64(n), loss)
		if err != nil {
			return nil, err
		}
		out.Loss = append(out.Loss, m[0])
		if err := r.update(); err != nil {
			return nil, err
		}
	}
	if err := dp.CheckParams(); err != nil {
		return nil, err
	}
	out.Params = r.params()
	return out, nil
}
