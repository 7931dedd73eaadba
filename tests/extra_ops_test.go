package tests

import (
	"math/rand"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

type extraMk func(g *G.ExprGraph, in func(name string, lo, hi float64, shape ...int) *G.Node) (*G.Node, G.Nodes, error)

// extraCase is one op of the adapter's table that examples/opgraphs does not cover.
type extraCase struct {
	name          string
	gorgoniaWrong bool
	mk            extraMk
}

// The adapter's table ops that examples/opgraphs does not cover (Sparsemax, ByIndices,
// GroupNorm, BatchNorm, Dropout with probability 0), through the same acceptance checks.
// Each cost is Σ op(inputs) ⊙ r with a fixed random weight r.
func TestExtraOps(t *testing.T) {
	for _, c := range extraCases() {
		c := c
		t.Run(c.name, func(t *testing.T) { checkAll(t, extraCtor(c), c.gorgoniaWrong) })
	}
}

// Gorgonia's Dropout with probability 0 is the identity, but gorgonia.Grad returns a zero
// gradient through it; bulkad matches finite differences.
func TestDropoutZeroGorgoniaWrongBulkadMatchesFD(t *testing.T) {
	for _, c := range extraCases() {
		if c.name == "dropout(0)" {
			checkAll(t, extraCtor(c), true)
			return
		}
	}
	t.Fatal("no dropout case")
}

func extraCases() []extraCase {
	return []extraCase{
		{"sparsemax", false, func(g *G.ExprGraph, in func(string, float64, float64, ...int) *G.Node) (*G.Node, G.Nodes, error) {
			x := in("x", -2, 2, 3, 5)
			y, err := G.Sparsemax(x)
			return y, G.Nodes{x}, err
		}},
		{"byIndices", false, func(g *G.ExprGraph, in func(string, float64, float64, ...int) *G.Node) (*G.Node, G.Nodes, error) {
			x := in("x", -2, 2, 4, 3)
			ix := G.NewVector(g, tensor.Int, G.WithShape(3), G.WithName("ix"),
				G.WithValue(tensor.New(tensor.WithShape(3), tensor.WithBacking([]int{3, 0, 3}))))
			y, err := G.ByIndices(x, ix, 0)
			return y, G.Nodes{x}, err
		}},
		// Gorgonia's forward kernel is right for these (see TestByIndicesForwardByHand), its
		// gradient kernel is not for three of them; an index ≥ the axis length reads as 0.
		byIdx("byIndices axis 1 of (3,4), 3 indices", true, []int{3, 4}, []int{3, 0, 3}, 1),
		byIdx("byIndices axis 1, index ≥ length reads 0", false, []int{3, 4}, []int{4, 1, 7}, 1),
		byIdx("byIndices axis 0, index ≥ length reads 0", false, []int{4, 3}, []int{5, 2}, 0),
		byIdx("byIndices middle axis of length 2", true, []int{3, 2, 2}, []int{1, 1, 0}, 1),
		byIdx("byIndices last axis of rank 3", true, []int{2, 3, 4}, []int{2, 3}, 2),
		{"groupNorm", false, func(g *G.ExprGraph, in func(string, float64, float64, ...int) *G.Node) (*G.Node, G.Nodes, error) {
			x := in("x", -2, 2, 2, 4, 3, 3)
			sc := in("scale", 0.5, 1.5, 2, 4, 3, 3)
			bi := in("bias", -1, 1, 2, 4, 3, 3)
			y, err := G.GroupNorm(x, sc, bi, 2, 4, 1e-5)
			return y, G.Nodes{x, sc, bi}, err
		}},
		{"batchNorm", false, func(g *G.ExprGraph, in func(string, float64, float64, ...int) *G.Node) (*G.Node, G.Nodes, error) {
			// Explicit scale and bias: BatchNorm's own are randomly initialised (not reproducible).
			x := in("x", -2, 2, 4, 2, 3, 3)
			sc := in("scale", 0.5, 1.5, 4, 2, 3, 3)
			bi := in("bias", -1, 1, 4, 2, 3, 3)
			y, _, _, _, err := G.BatchNorm(x, sc, bi, 0.9, 1e-5)
			return y, G.Nodes{x, sc, bi}, err
		}},
		// Gorgonia rewrites log(1 − σ(a)) inside BinaryXent to −softplus(a) and removes the
		// 1 − σ(a) node from the graph, which leaves g.From stale for later nodes: the
		// translation must read each node's own operands.
		{"binaryXent(sigmoid)", false, func(g *G.ExprGraph, in func(string, float64, float64, ...int) *G.Node) (*G.Node, G.Nodes, error) {
			a := in("a", -3, 3, 2, 3)
			b := in("b", 0, 1, 2, 3)
			s, err := G.Sigmoid(a)
			if err != nil {
				return nil, nil, err
			}
			y, err := G.BinaryXent(s, b)
			return y, G.Nodes{a, b}, err
		}},
		{"dropout(0)", true, func(g *G.ExprGraph, in func(string, float64, float64, ...int) *G.Node) (*G.Node, G.Nodes, error) {
			x := in("x", -2, 2, 4, 5)
			y, err := G.Dropout(x, 0)
			return y, G.Nodes{x}, err
		}},
	}
}

func extraCtor(c extraCase) ctor { return extraCtorThen(c, nil) }

// extraCtorThen is extraCtor with then applied to the op's result before the weighting.
func extraCtorThen(c extraCase, then func(*G.Node) (*G.Node, error)) ctor {
	return func() (built, error) {
		g := G.NewGraph()
		rng := rand.New(rand.NewSource(seed))
		in := func(name string, lo, hi float64, shape ...int) *G.Node {
			return randInput(g, rng, name, lo, hi, shape...)
		}
		out, wrt, err := c.mk(g, in)
		if err != nil {
			return built{}, err
		}
		if then != nil {
			if out, err = then(out); err != nil {
				return built{}, err
			}
		}
		r := in("r", -1, 1, out.Shape()...)
		prod, err := G.HadamardProd(out, r)
		if err != nil {
			return built{}, err
		}
		cost, err := G.Sum(prod)
		if err != nil {
			return built{}, err
		}
		return built{g: g, cost: cost, wrt: wrt}, nil
	}
}

// byIdx is Gorgonia's ByIndices of an input of the given shape at fixed Int indices.
func byIdx(name string, gorgoniaWrong bool, shape, ix []int, axis int) extraCase {
	return extraCase{name, gorgoniaWrong, func(g *G.ExprGraph, in func(string, float64, float64, ...int) *G.Node) (*G.Node, G.Nodes, error) {
		x := in("x", -2, 2, shape...)
		n := G.NewVector(g, tensor.Int, G.WithShape(len(ix)), G.WithName("ix"),
			G.WithValue(tensor.New(tensor.WithShape(len(ix)), tensor.WithBacking(append([]int(nil), ix...)))))
		y, err := G.ByIndices(x, n, axis)
		return y, G.Nodes{x}, err
	}}
}
