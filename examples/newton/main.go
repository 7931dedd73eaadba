// Command newton trains with second-order information: softmax regression on Fisher's iris
// data (shipped) on the raw, unstandardised features — an ill-conditioned problem, the feature
// scales differ by a factor of 30 — once with gradient descent and once with Newton-CG, from the
// same start, both with gradients from bulkad.Grad; Newton-CG also uses Hessian-vector products
// from bulkad.HessianVector (one forward-over-reverse program, no Hessian is ever formed).
//
//	go run ./examples/newton
//	go run ./examples/newton -steps 20 -plot newton.png
//
// Gradient descent uses the step 1/L, the best fixed step for a convex problem, with L the
// largest Hessian eigenvalue at the start, estimated by power iteration with HessianVector.
// Newton-CG solves (H + μI) d = −g by conjugate gradients (at most -cg iterations, each one
// H·v) and backtracks on the loss. Work is counted in machine runs (one run evaluates the loss,
// the gradient and one H·v): gradient descent is given as many runs as Newton-CG used, so the
// comparison is at equal work. The output gives both losses and the held-out accuracy; -plot
// draws the loss against machine runs for both methods.
package main

import (
	"fmt"
	"io"
	"math"
	"math/rand"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/examples/data"
	"github.com/bulkad/bulkad/examples/internal/train"
)

func main() {
	train.RunCommand(run)
}

// config holds the flags.
type config struct {
	steps   int     // Newton-CG steps
	cg      int     // CG iterations per step
	damping float64 // μ
	l2      float64 // weight decay in the loss
	dtype   tensor.Dtype
	plot    string
	seed    int64
}

func run(args []string, out io.Writer) error {
	fs := train.NewFlagSet("newton", "Compares gradient descent and Newton-CG (bulkad.HessianVector) on iris softmax regression.", out)
	cfg := config{}
	fs.IntVar(&cfg.steps, "steps", 15, "Newton-CG steps")
	fs.IntVar(&cfg.cg, "cg", 10, "conjugate-gradient iterations per Newton step (each one Hessian-vector product)")
	fs.Float64Var(&cfg.damping, "damping", 1e-4, "damping μ added to the Hessian's diagonal")
	fs.Float64Var(&cfg.l2, "l2", 1e-3, "L2 penalty on the weights, part of the loss")
	dtype := fs.String("dtype", "float64", "float64 or float32")
	fs.StringVar(&cfg.plot, "plot", "", "write the loss curves (loss against machine runs) to this PNG file")
	fs.Int64Var(&cfg.seed, "seed", 1, "random seed (train/test split and initial weights)")
	if help, err := train.ParseFlags(fs, args); help || err != nil {
		return err
	}
	var err error
	if cfg.dtype, err = train.ParseDtype("newton", *dtype); err != nil {
		return err
	}
	if cfg.steps <= 0 || cfg.cg <= 0 || !(cfg.damping >= 0) || !(cfg.l2 >= 0) || math.IsInf(cfg.damping, 1) || math.IsInf(cfg.l2, 1) {
		return errors.New("newton: -steps and -cg must be positive, -damping and -l2 finite and non-negative")
	}
	if cfg.plot != "" {
		if err := train.CheckPlotPath(cfg.plot); err != nil {
			return errors.Wrap(err, "newton: -plot")
		}
	}
	res, err := compare(cfg)
	if err != nil {
		return err
	}
	res.print(out, cfg)
	if cfg.plot != "" {
		if err := plotCurves(cfg.plot, res); err != nil {
			return err
		}
		fmt.Fprintf(out, "loss curves written to %s\n", cfg.plot)
	}
	return nil
}

// result is what compare measured.
type result struct {
	lipschitz      float64   // L, the largest Hessian eigenvalue at the start
	newton, gd     []float64 // training loss after each machine run (index 0: the start)
	newtonSteps    []int     // machine runs after each Newton step
	accNewton      float64   // held-out accuracy
	accGD          float64
	gdRunsToNewton int // gradient-descent runs to reach Newton-CG's final loss (−1: not reached)
	gdRunsLimit    int
}

func (r *result) print(out io.Writer, cfg config) {
	runs := len(r.newton) - 1
	fmt.Fprintf(out, "softmax regression on raw iris features (120 train, 30 held out), L2 %g, %s\n", cfg.l2, cfg.dtype)
	fmt.Fprintf(out, "start: training loss %.6f\n", r.newton[0])
	fmt.Fprintf(out, "Newton-CG  (%d steps, ≤%d CG iterations each): training loss %.6f after %d machine runs, held-out accuracy %.2f%%\n",
		cfg.steps, cfg.cg, r.newton[runs], runs, 100*r.accNewton)
	fmt.Fprintf(out, "gradient descent (step 1/L, L = %.4g): training loss %.6f after the same %d runs, held-out accuracy %.2f%%\n",
		r.lipschitz, r.gd[runs], runs, 100*r.accGD)
	if r.gdRunsToNewton >= 0 {
		fmt.Fprintf(out, "gradient descent needs %d runs (%.1f× Newton-CG's) to reach Newton-CG's final loss\n",
			r.gdRunsToNewton, float64(r.gdRunsToNewton)/float64(runs))
	} else {
		fmt.Fprintf(out, "gradient descent does not reach Newton-CG's final loss within %d runs (%.0f× Newton-CG's)\n",
			r.gdRunsLimit, float64(r.gdRunsLimit)/float64(runs))
	}
}

// problem is the graph: loss, gradient and Hessian-vector nodes of softmax regression.
type problem struct {
	g        *G.ExprGraph
	vm       G.VM
	w, b     *G.Node // parameters [4,3], [3]
	vw, vb   *G.Node // direction of the Hessian-vector product
	cost     *G.Node
	grads    G.Nodes
	hv       G.Nodes
	xt       [][4]float64
	yt       []int
	dt       tensor.Dtype
	nparam   int
	nw       int
	testX    [][4]float64
	testY    []int
	machineN int // machine runs so far
}

func newProblem(cfg config) (*problem, error) {
	feats, labels, err := data.Iris()
	if err != nil {
		return nil, err
	}
	order := rand.New(rand.NewSource(cfg.seed)).Perm(len(feats))
	const nTrain = 120
	p := &problem{dt: cfg.dtype, nw: 12, nparam: 15}
	for i, k := range order {
		if i < nTrain {
			p.xt, p.yt = append(p.xt, feats[k]), append(p.yt, labels[k])
		} else {
			p.testX, p.testY = append(p.testX, feats[k]), append(p.testY, labels[k])
		}
	}
	xs := make([]float64, 0, 4*nTrain)
	ys := make([]float64, 3*nTrain)
	for i, f := range p.xt {
		xs = append(xs, f[:]...)
		ys[3*i+p.yt[i]] = 1
	}
	g := G.NewGraph()
	p.g = g
	dt := cfg.dtype
	x := G.NewMatrix(g, dt, G.WithShape(nTrain, 4), G.WithName("x"), G.WithValue(train.Dense(dt, []int{nTrain, 4}, xs)))
	y := G.NewMatrix(g, dt, G.WithShape(nTrain, 3), G.WithName("y"), G.WithValue(train.Dense(dt, []int{nTrain, 3}, ys)))
	p.w = G.NewMatrix(g, dt, G.WithShape(4, 3), G.WithName("w"), G.WithValue(train.Dense(dt, []int{4, 3}, make([]float64, 12))))
	p.b = G.NewVector(g, dt, G.WithShape(3), G.WithName("b"), G.WithValue(train.Dense(dt, []int{3}, make([]float64, 3))))
	p.vw = G.NewMatrix(g, dt, G.WithShape(4, 3), G.WithName("vw"), G.WithValue(train.Dense(dt, []int{4, 3}, make([]float64, 12))))
	p.vb = G.NewVector(g, dt, G.WithShape(3), G.WithName("vb"), G.WithValue(train.Dense(dt, []int{3}, make([]float64, 3))))
	var berr error
	must := train.Must(&berr)
	logits := must(G.BroadcastAdd(must(G.Mul(x, p.w)), p.b, nil, []byte{0}))
	xent := must(G.Neg(must(G.Mean(must(G.Sum(must(G.HadamardProd(must(G.LogSoftMax(logits)), y)), 1))))))
	var l2 *G.Node
	if dt == tensor.Float32 {
		l2 = G.NewConstant(float32(cfg.l2 / 2))
	} else {
		l2 = G.NewConstant(cfg.l2 / 2)
	}
	p.cost = must(G.Add(xent, must(G.Mul(l2, must(G.Sum(must(G.Square(p.w))))))))
	if berr != nil {
		return nil, errors.Wrap(berr, "newton: building the graph")
	}
	if p.grads, err = bulkad.Grad(p.cost, p.w, p.b); err != nil {
		return nil, errors.Wrap(err, "newton: gradient")
	}
	if p.hv, err = bulkad.HessianVector(p.cost, G.Nodes{p.w, p.b}, G.Nodes{p.vw, p.vb}); err != nil {
		return nil, errors.Wrap(err, "newton: Hessian-vector product")
	}
	p.vm = G.NewTapeMachine(g)
	return p, nil
}

// eval sets the parameters θ = (w, b) (flat, 15 entries) and the direction v, runs the
// machine once and returns the loss, the gradient and H·v (flat).
func (p *problem) eval(theta, v []float64) (float64, []float64, []float64, error) {
	lets := []struct {
		n     *G.Node
		shape []int
		vals  []float64
	}{{p.w, []int{4, 3}, theta[:12]}, {p.b, []int{3}, theta[12:]}, {p.vw, []int{4, 3}, v[:12]}, {p.vb, []int{3}, v[12:]}}
	for _, l := range lets {
		if err := G.Let(l.n, train.Dense(p.dt, l.shape, l.vals)); err != nil {
			return 0, nil, nil, err
		}
	}
	p.vm.Reset()
	if err := p.vm.RunAll(); err != nil {
		return 0, nil, nil, errors.Wrap(err, "newton: running the graph")
	}
	p.machineN++
	loss := train.Floats(p.cost.Value())[0]
	grad := append(append([]float64{}, train.Floats(p.grads[0].Value())...), train.Floats(p.grads[1].Value())...)
	hv := append(append([]float64{}, train.Floats(p.hv[0].Value())...), train.Floats(p.hv[1].Value())...)
	return loss, grad, hv, nil
}

// accuracy is the held-out accuracy of θ (computed in Go: argmax of x·w + b).
func (p *problem) accuracy(theta []float64) float64 {
	right := 0
	for i, f := range p.testX {
		best, arg := math.Inf(-1), 0
		for c := 0; c < 3; c++ {
			z := theta[12+c]
			for j := 0; j < 4; j++ {
				z += f[j] * theta[3*j+c]
			}
			if z > best {
				best, arg = z, c
			}
		}
		if arg == p.testY[i] {
			right++
		}
	}
	return float64(right) / float64(len(p.testX))
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func axpy(alpha float64, x, y []float64) []float64 { // alpha·x + y, new slice
	out := make([]float64, len(y))
	for i := range y {
		out[i] = alpha*x[i] + y[i]
	}
	return out
}

// lipschitz estimates the largest eigenvalue of the Hessian at θ by power iteration.
func (p *problem) lipschitz(theta []float64, iters int) (float64, error) {
	// A random start: the all-ones direction lies in the null space of the softmax (adding
	// the same number to every class's logit changes nothing).
	rng := rand.New(rand.NewSource(7))
	v := make([]float64, p.nparam)
	for i := range v {
		v[i] = rng.Float64() - 0.5
	}
	lambda := 0.0
	for k := 0; k < iters; k++ {
		n := math.Sqrt(dot(v, v))
		for i := range v {
			v[i] /= n
		}
		_, _, hv, err := p.eval(theta, v)
		if err != nil {
			return 0, err
		}
		lambda = dot(v, hv)
		v = hv
	}
	return lambda, nil
}

// newtonStep solves (H + μI) d = −g by conjugate gradients from d = 0 and returns d.
func (p *problem) newtonStep(theta, g []float64, cfg config) ([]float64, error) {
	d := make([]float64, len(g))
	r := axpy(-1, g, make([]float64, len(g))) // r = −g − (H+μI)·0
	q := append([]float64(nil), r...)
	rr := dot(r, r)
	tol := 1e-10 * rr
	for k := 0; k < cfg.cg && rr > tol; k++ {
		_, _, hq, err := p.eval(theta, q)
		if err != nil {
			return nil, err
		}
		hq = axpy(cfg.damping, q, hq)
		curv := dot(q, hq)
		if !(curv > 0) {
			break // not positive definite along q: keep what we have
		}
		alpha := rr / curv
		d = axpy(alpha, q, d)
		r = axpy(-alpha, hq, r)
		rr2 := dot(r, r)
		q = axpy(rr2/rr, q, r)
		rr = rr2
	}
	if dot(d, d) == 0 {
		d = axpy(-1, g, d) // no curvature information: a gradient step
	}
	return d, nil
}

func compare(cfg config) (*result, error) {
	p, err := newProblem(cfg)
	if err != nil {
		return nil, err
	}
	defer p.vm.Close()
	res := &result{}
	zero := make([]float64, p.nparam)
	start := make([]float64, p.nparam) // the same start for both methods: all weights zero
	if res.lipschitz, err = p.lipschitz(start, 30); err != nil {
		return nil, err
	}

	// Newton-CG with backtracking (Armijo) on the loss.
	theta := append([]float64(nil), start...)
	p.machineN = 0
	loss, g, _, err := p.eval(theta, zero)
	if err != nil {
		return nil, err
	}
	res.newton = append(res.newton, loss)
	record := func(l float64) {
		for len(res.newton) < p.machineN+1 {
			res.newton = append(res.newton, l)
		}
	}
	for s := 0; s < cfg.steps; s++ {
		d, err := p.newtonStep(theta, g, cfg)
		if err != nil {
			return nil, err
		}
		record(loss)
		slope := dot(g, d)
		t := 1.0
		for {
			cand := axpy(t, d, theta)
			l2, g2, _, err := p.eval(cand, zero)
			if err != nil {
				return nil, err
			}
			if l2 <= loss+1e-4*t*slope || t < 1e-8 {
				theta, loss, g = cand, l2, g2
				break
			}
			record(loss)
			t /= 2
		}
		record(loss)
		res.newtonSteps = append(res.newtonSteps, p.machineN)
	}
	res.accNewton = p.accuracy(theta)
	runs := len(res.newton) - 1

	// Gradient descent with step 1/L: as many runs as Newton-CG, then on until it reaches
	// Newton-CG's final loss or 50 times the runs.
	res.gdRunsLimit = 50 * runs
	res.gdRunsToNewton = -1
	theta = append([]float64(nil), start...)
	target := res.newton[runs]
	for k := 0; k <= res.gdRunsLimit; k++ {
		l, gk, _, err := p.eval(theta, zero)
		if err != nil {
			return nil, err
		}
		if k <= runs {
			res.gd = append(res.gd, l)
			if k == runs {
				res.accGD = p.accuracy(theta)
			}
		}
		if l <= target*(1+1e-9) && res.gdRunsToNewton < 0 {
			res.gdRunsToNewton = k
			if k >= runs {
				break
			}
		}
		theta = axpy(-1/res.lipschitz, gk, theta)
	}
	return res, nil
}
