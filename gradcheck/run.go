package gradcheck

import (
	"math"
	"math/rand"

	"github.com/pkg/errors"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/bulkad/bulkad/ad"
	"github.com/bulkad/bulkad/adapter"
	"github.com/bulkad/bulkad/kernel"
)

// checkRun is the state of one Check: the graph and its node indices, the translation (or
// why there is none), the point of evaluation, and the gradients of each method as they are
// computed (nil where a method failed; the failure is in the report).
type checkRun struct {
	g    *gorgonia.ExprGraph
	cost *gorgonia.Node
	wrt  gorgonia.Nodes
	idx  map[*gorgonia.Node]int
	need []int // indices of the nodes whose values fix the point
	cfg  config
	f32  bool
	rep  *Report

	tr     *adapter.Translation
	terr   error
	vals   map[int]gorgonia.Value   // the point: forward values of the needed nodes
	args   map[string]*tensor.Dense // the point as the translation's arguments
	art    *ad.Artifact             // bulkad's gradient artifact
	random bool                     // the graph has random operations

	ggrads []*tensor.Dense          // Gorgonia's Grad
	bgrads map[string]*tensor.Dense // bulkad's artifact, by wrt parameter name
	rgrads [][]float64              // the raised nodes on a TapeMachine
	rart   map[string]*tensor.Dense // with random operations: the artifact at the raised run's values
}

// artArgs is args less the perturbations of interior wrt nodes, which the artifact binds to
// zeros itself.
func (c *checkRun) artArgs(args map[string]*tensor.Dense) map[string]*tensor.Dense {
	out := make(map[string]*tensor.Dense, len(args))
	for k, v := range args {
		if c.tr.Zero[k] == nil {
			out[k] = v
		}
	}
	return out
}

// runBulkad differentiates the translation and runs the artifact at the point, setting
// bgrads and the report's ForwardMismatch against Gorgonia's cost gcost, or BulkadError.
func (c *checkRun) runBulkad(gcost float64) {
	err := c.terr
	if err == nil {
		c.args, err = pointArgs(c.tr, c.vals, c.idx)
	}
	if err == nil {
		if c.art, err = ad.GradWith(c.tr.Program, ad.Options{Wrt: c.tr.Wrt, AtZero: c.tr.ZeroNames()}); err == nil {
			var value *tensor.Dense
			if value, c.bgrads, err = c.art.RunWith(kernel.EvalTuple, c.artArgs(c.args)); err == nil {
				v := toFloats(value)[0]
				c.rep.ForwardMismatch = math.Abs(v-gcost) / math.Max(1, math.Abs(gcost))
			}
		}
	}
	if err != nil {
		c.rep.BulkadError = err.Error()
		c.bgrads = nil
	}
}

// runRaised runs the nodes Grad adds, on a clone, by a TapeMachine, setting rgrads or
// RaisedError. With random operations their run draws its own values: rart is then the
// artifact at that run's values.
func (c *checkRun) runRaised() {
	c.random = hasRandom(c.g)
	if c.terr != nil {
		return
	}
	rgrads, rvals, err := raisedGrads(c.g, c.cost, c.wrt, c.idx, c.need, c.random)
	if err == nil && c.random {
		if c.art == nil {
			err = errors.New("no artifact to compare with (see the bulkad error)")
		} else {
			var rargs map[string]*tensor.Dense
			if rargs, err = pointArgs(c.tr, rvals, c.idx); err == nil {
				_, c.rart, err = c.art.RunWith(kernel.EvalTuple, c.artArgs(rargs))
			}
		}
	}
	if err != nil {
		c.rep.RaisedError = err.Error()
		return
	}
	c.rgrads = rgrads
}

// compareAll computes the finite differences on a random subset of each wrt node's entries
// and adds a NodeReport per wrt node.
func (c *checkRun) compareAll() error {
	fd, mode, err := newFD(c.g, c.cost, c.wrt, c.idx, c.vals, c.tr, c.args, c.f32)
	if err != nil {
		return errors.Wrap(err, "gradcheck: finite differences")
	}
	c.rep.FDMode = mode
	rng := rand.New(rand.NewSource(c.cfg.seed))
	for k, n := range c.wrt {
		size := n.Shape().TotalSize()
		if n.IsScalar() {
			size = 1
		}
		probes := chooseProbes(rng, size, c.cfg.maxProbes)
		ref := make([]float64, len(probes))
		for j, e := range probes {
			if ref[j], err = fd.derivative(k, e, c.cfg.step); err != nil {
				return errors.Wrapf(err, "gradcheck: finite differences for %s", n.Name())
			}
		}
		c.rep.Nodes = append(c.rep.Nodes, c.nodeReport(k, n, probes, ref))
	}
	return nil
}

// probed is vals[e] for each probe e (0 past vals' end).
func probed(vals []float64, probes []int) []float64 {
	out := make([]float64, len(probes))
	for j, e := range probes {
		if e < len(vals) {
			out[j] = vals[e]
		}
	}
	return out
}

// nodeReport compares the gradients of wrt node k (n) with the finite differences ref at
// probes.
func (c *checkRun) nodeReport(k int, n *gorgonia.Node, probes []int, ref []float64) NodeReport {
	cfg := c.cfg
	nr := NodeReport{Name: n.Name(), Shape: append([]int{}, n.Shape()...), Probed: len(probes), Gorgonia: "not run", Verdict: "ok"}
	if c.rep.GorgoniaError != "" {
		nr.Gorgonia = "failed"
	}
	if c.bgrads != nil {
		nr.BulkadVsFD = compare(toFloats(c.bgrads[c.tr.Wrt[k]]), ref, probes, cfg)
	} else {
		nr.BulkadVsFD = ErrStat{MaxAbs: math.Inf(1), MaxRel: math.Inf(1)}
	}
	switch {
	case c.rgrads != nil && c.random:
		s := compare(c.rgrads[k], probed(toFloats(c.rart[c.tr.Wrt[k]]), probes), probes, cfg)
		nr.RaisedVsArtifact = &s
	case c.rgrads != nil:
		s := compare(c.rgrads[k], ref, probes, cfg)
		nr.RaisedVsFD = &s
	}
	raisedOK := (nr.RaisedVsFD != nil && nr.RaisedVsFD.OK) || (nr.RaisedVsArtifact != nil && nr.RaisedVsArtifact.OK)
	if !nr.BulkadVsFD.OK || !raisedOK {
		nr.Verdict = "WRONG"
		if c.bgrads == nil || c.rgrads == nil {
			nr.Verdict = "FAILED"
		}
	}
	if c.ggrads != nil {
		gg := toFloats(c.ggrads[k])
		s1 := compare(gg, ref, probes, cfg)
		nr.GorgoniaVsFD = &s1
		nr.Gorgonia = "ok"
		if !s1.OK {
			nr.Gorgonia = "wrong"
		}
		if c.bgrads != nil {
			s2 := compare(toFloats(c.bgrads[c.tr.Wrt[k]]), probed(gg, probes), probes, cfg)
			nr.BulkadVsGorgonia = &s2
		}
	}
	return nr
}
