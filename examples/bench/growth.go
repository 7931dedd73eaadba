package main

import (
	"fmt"
	"io"
	"time"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/bulkad/bulkad"
	"github.com/bulkad/bulkad/examples/models"
	"github.com/bulkad/bulkad/raise"
)

// family is a kind of graph that grows with one size parameter.
type family struct {
	Name  string
	Size  string // what the size counts
	Sizes []int
	// build returns a fresh graph of the given size: its cost and wrt nodes.
	build func(size int) (cost *G.Node, wrt G.Nodes, err error)
}

// families are the growth families: deep MLPs (size = layers, width 16, batch 4), the chain
// h ← tanh(h + w) on a 4-vector w reused at every step (size = graph nodes; the gradient of
// w sums one term per step), and the tanh RNN of the zoo reusing its weights at every step
// (size = steps T; batch 2, 4 inputs, 8 hidden).
func families(small bool) []family {
	mlp := family{Name: "mlp", Size: "layers", Sizes: []int{10, 100, 1000}, build: func(L int) (*G.Node, G.Nodes, error) {
		sizes := make([]int, L+1)
		for i := range sizes {
			sizes[i] = 16
		}
		m, err := models.MLP(tensor.Float64, 4, sizes, 1)
		if err != nil {
			return nil, nil, err
		}
		return m.Cost, m.Wrt, nil
	}}
	ch := family{Name: "tanh/add chain", Size: "nodes", Sizes: []int{5000, 10000, 20000}, build: tanhChain}
	rnn := family{Name: "rnn", Size: "steps", Sizes: []int{500, 1000, 2000}, build: func(T int) (*G.Node, G.Nodes, error) {
		m, err := models.RNN(tensor.Float64, 2, 4, 8, T, 1)
		if err != nil {
			return nil, nil, err
		}
		return m.Cost, m.Wrt, nil
	}}
	if small {
		mlp.Sizes, ch.Sizes, rnn.Sizes = []int{5, 20, 80}, []int{200, 400, 800}, []int{20, 40, 80}
	}
	return []family{mlp, ch, rnn}
}

// tanhChain builds cost = Σ h_K with h_0 = w, h_{k+1} = tanh(h_k + w), K = nodes/2 steps.
func tanhChain(nodes int) (cost *G.Node, wrt G.Nodes, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errors.Errorf("tanh chain: %v", r)
		}
	}()
	g := G.NewGraph()
	w := G.NewVector(g, tensor.Float64, G.WithShape(4), G.WithName("w"), G.WithValue(tensor.New(tensor.WithBacking([]float64{0.1, -0.2, 0.3, -0.4}))))
	h := w
	for k := 0; k < nodes/2; k++ {
		h = G.Must(G.Tanh(G.Must(G.Add(h, w))))
	}
	return G.Must(G.Sum(h)), G.Nodes{w}, nil
}

// GrowthRow is one graph of a growth family; times are the best of the repetitions.
type GrowthRow struct {
	Size           int     `json:"size"`
	Nodes          int     `json:"nodes"`             // graph nodes before Grad
	BuildMS        float64 `json:"build_ms"`          // building the forward graph (Gorgonia)
	DiffMS         float64 `json:"differentiate_ms"`  // bulkad.Differentiate: translate, BOT, AD, simplify
	RaiseMS        float64 `json:"raise_ms"`          // Gradient.Raise
	RaiseGorgMS    float64 `json:"raise_gorgonia_ms"` // of which in Gorgonia's node constructors
	GradMS         float64 `json:"grad_ms"`           // Differentiate + Raise
	OursMS         float64 `json:"ours_ms"`           // GradMS − RaiseGorgMS
	GorgoniaGradMS float64 `json:"gorgonia_grad_ms"`  // gorgonia.Grad on the same graph
}

// Growth is differentiation time against graph size for one family, with the least-squares
// exponents of each time over the graph's node count (1.0 = linear).
type Growth struct {
	Family       string      `json:"family"`
	Size         string      `json:"size"`
	Rows         []GrowthRow `json:"rows"`
	ExpBuild     float64     `json:"exponent_build"`
	ExpDiff      float64     `json:"exponent_differentiate"`
	ExpRaise     float64     `json:"exponent_raise"`
	ExpRaiseOurs float64     `json:"exponent_raise_without_gorgonia"`
	ExpGrad      float64     `json:"exponent_grad"`
	ExpOurs      float64     `json:"exponent_ours"`
	ExpGorgonia  float64     `json:"exponent_gorgonia_grad"`
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// growth times one family: Differentiate and Raise of bulkad.Grad separately (best of reps
// runs, each on a fresh graph), and gorgonia.Grad once per size.
func growth(f family, reps int) (*Growth, error) {
	gr := &Growth{Family: f.Name, Size: f.Size}
	for _, size := range f.Sizes {
		row := GrowthRow{Size: size}
		for rep := 0; rep < reps; rep++ {
			t0 := time.Now()
			cost, wrt, err := f.build(size)
			if err != nil {
				return nil, errors.Wrapf(err, "%s %d", f.Name, size)
			}
			build := time.Since(t0)
			row.Nodes = len(cost.Graph().AllNodes())
			t1 := time.Now()
			d, err := bulkad.Differentiate(cost, wrt...)
			if err != nil {
				return nil, errors.Wrapf(err, "%s %d", f.Name, size)
			}
			t2 := time.Now()
			var st raise.Stats
			d.RaiseStats = &st
			if _, err := d.Raise(); err != nil {
				return nil, errors.Wrapf(err, "%s %d", f.Name, size)
			}
			diff, rs := t2.Sub(t1), time.Since(t2)
			if rep == 0 || ms(diff+rs) < row.GradMS {
				row.BuildMS, row.DiffMS, row.RaiseMS, row.RaiseGorgMS = ms(build), ms(diff), ms(rs), ms(st.Gorgonia)
				row.GradMS = ms(diff + rs)
				row.OursMS = row.GradMS - row.RaiseGorgMS
			}
		}
		cost, wrt, err := f.build(size)
		if err != nil {
			return nil, errors.Wrapf(err, "%s %d", f.Name, size)
		}
		t0 := time.Now()
		if _, err := G.Grad(cost, wrt...); err != nil {
			return nil, errors.Wrapf(err, "%s %d: gorgonia.Grad", f.Name, size)
		}
		row.GorgoniaGradMS = ms(time.Since(t0))
		gr.Rows = append(gr.Rows, row)
	}
	fit := func(get func(GrowthRow) float64) float64 {
		xs := make([]int, len(gr.Rows))
		ys := make([]float64, len(gr.Rows))
		for i, r := range gr.Rows {
			xs[i], ys[i] = r.Nodes, get(r)
		}
		return slope(xs, ys)
	}
	gr.ExpBuild = fit(func(r GrowthRow) float64 { return r.BuildMS })
	gr.ExpDiff = fit(func(r GrowthRow) float64 { return r.DiffMS })
	gr.ExpRaise = fit(func(r GrowthRow) float64 { return r.RaiseMS })
	gr.ExpRaiseOurs = fit(func(r GrowthRow) float64 { return r.RaiseMS - r.RaiseGorgMS })
	gr.ExpGrad = fit(func(r GrowthRow) float64 { return r.GradMS })
	gr.ExpOurs = fit(func(r GrowthRow) float64 { return r.OursMS })
	gr.ExpGorgonia = fit(func(r GrowthRow) float64 { return r.GorgoniaGradMS })
	return gr, nil
}

const growthHeader = "| family | size | graph nodes | build graph ms | Differentiate ms | Raise ms | of which Gorgonia's constructors ms | bulkad.Grad ms | bulkad's own ms | gorgonia.Grad ms |\n|---|---|---|---|---|---|---|---|---|---|"

// printGrowth writes the growth table and the exponents.
func printGrowth(w io.Writer, gs []*Growth) {
	fmt.Fprintln(w, growthHeader)
	for _, g := range gs {
		for _, r := range g.Rows {
			fmt.Fprintf(w, "| %s | %d %s | %d | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f |\n",
				g.Family, r.Size, g.Size, r.Nodes, r.BuildMS, r.DiffMS, r.RaiseMS, r.RaiseGorgMS, r.GradMS, r.OursMS, r.GorgoniaGradMS)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "growth exponents over graph nodes (least squares of log time; 1.0 = linear):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| family | build graph | Differentiate | Raise | Raise without Gorgonia's constructors | bulkad.Grad | bulkad's own | gorgonia.Grad |\n|---|---|---|---|---|---|---|---|")
	for _, g := range gs {
		fmt.Fprintf(w, "| %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n",
			g.Family, g.ExpBuild, g.ExpDiff, g.ExpRaise, g.ExpRaiseOurs, g.ExpGrad, g.ExpOurs, g.ExpGorgonia)
	}
}

// blockFamily is a model of the zoo that grows by stacking blocks (layers).
type blockFamily struct {
	Name  string
	Unit  string // what a size counts
	Sizes []int
	build func(dt tensor.Dtype, k int) (*models.Model, error)
}

// blockFamilies are the stacked-block models at small tensor sizes (so that set-up, not the
// arithmetic, dominates): ResNet basic blocks (batch 4, 8×8 images, 8 channels), MobileNet
// depthwise-separable blocks (the same), transformer encoder layers (2 sequences of 16
// tokens, d 32, 4 heads, ff 64); 1, 2, 4, … blocks.
func blockFamilies(small bool) []blockFamily {
	sizes := []int{1, 2, 4, 8, 16, 32}
	if small {
		sizes = []int{1, 2, 4}
	}
	return []blockFamily{
		{"resnet", "blocks", sizes, func(dt tensor.Dtype, k int) (*models.Model, error) { return models.ResNet(dt, 4, 8, 8, k, 10, 1) }},
		{"mobilenet", "blocks", sizes, func(dt tensor.Dtype, k int) (*models.Model, error) { return models.MobileNet(dt, 4, 8, 8, k, 10, 1) }},
		{"transformer", "layers", sizes, func(dt tensor.Dtype, k int) (*models.Model, error) {
			return models.Transformer(dt, 2, 16, 32, 4, 64, k, 1)
		}},
	}
}

// SetupGrowthRow is one size of a stacked-block family: the set-up stages of bulkad.Grad's
// graph and of gorgonia.Grad's (float64), and the node counts before and after each Grad.
type SetupGrowthRow struct {
	Blocks   int   `json:"blocks"`
	Bulkad   Setup `json:"bulkad"`
	Gorgonia Setup `json:"gorgonia"`
}

// SetupGrowth is set-up time against the number of blocks for one family, with the
// least-squares exponents of each stage over the graph's node count before Grad (1.0 =
// linear, 2.0 = quadratic), fitted over the four largest sizes (where the blocks, not the
// stem and the loss, make the graph).
type SetupGrowth struct {
	Family string           `json:"family"`
	Unit   string           `json:"unit"`
	Rows   []SetupGrowthRow `json:"rows"`
	// Exponents of Grad, NewTapeMachine, first run and the whole set-up (build included).
	ExpBulkad   [4]float64 `json:"exponents_bulkad"`
	ExpGorgonia [4]float64 `json:"exponents_gorgonia"`
}

// setupGrowth prepares each size of f with bulkad.Grad and with gorgonia.Grad (the bench's
// prepare: build, Grad, NewTapeMachine, first run) and keeps, per stage, the best of reps.
func setupGrowth(f blockFamily, reps int, vm ...G.VMOpt) (*SetupGrowth, error) {
	sg := &SetupGrowth{Family: f.Name, Unit: f.Unit}
	best := func(a, b Setup, first bool) Setup {
		if first {
			return b
		}
		a.BuildMS = min(a.BuildMS, b.BuildMS)
		a.GradMS = min(a.GradMS, b.GradMS)
		a.CompileMS = min(a.CompileMS, b.CompileMS)
		a.FirstRunMS = min(a.FirstRunMS, b.FirstRunMS)
		a.TotalMS = min(a.TotalMS, b.TotalMS)
		return a
	}
	for _, k := range f.Sizes {
		k := k
		s := spec{Name: fmt.Sprintf("%s %d %s", f.Name, k, f.Unit), Build: func(dt tensor.Dtype) (*models.Model, error) { return f.build(dt, k) }}
		row := SetupGrowthRow{Blocks: k}
		for rep := 0; rep < reps; rep++ {
			for i, grad := range []gradFunc{bulkad.Grad, G.Grad} {
				p, err := prepare(s, tensor.Float64, grad, vm...)
				if err != nil {
					return nil, err
				}
				p.vm.Close()
				if i == 0 {
					row.Bulkad = best(row.Bulkad, p.setup, rep == 0)
				} else {
					row.Gorgonia = best(row.Gorgonia, p.setup, rep == 0)
				}
			}
		}
		sg.Rows = append(sg.Rows, row)
	}
	fitted := sg.Rows
	if len(fitted) > 4 {
		fitted = fitted[len(fitted)-4:]
	}
	xs := make([]int, len(fitted))
	for i, r := range fitted {
		xs[i] = r.Bulkad.Nodes
	}
	stages := []func(Setup) float64{
		func(s Setup) float64 { return s.GradMS },
		func(s Setup) float64 { return s.CompileMS },
		func(s Setup) float64 { return s.FirstRunMS },
		func(s Setup) float64 { return s.TotalMS },
	}
	for j, get := range stages {
		ya, yb := make([]float64, len(fitted)), make([]float64, len(fitted))
		for i, r := range fitted {
			ya[i], yb[i] = get(r.Bulkad), get(r.Gorgonia)
		}
		sg.ExpBulkad[j], sg.ExpGorgonia[j] = slope(xs, ya), slope(xs, yb)
	}
	return sg, nil
}

// printSetupGrowth writes the stacked-block set-up table and its exponents.
func printSetupGrowth(w io.Writer, gs []*SetupGrowth) {
	fmt.Fprintln(w, "set-up against stacked blocks (float64; best of the repetitions per stage; bulkad / gorgonia):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| family | size | nodes before Grad | nodes after Grad | build graph ms | Grad ms | NewTapeMachine ms | first run ms | set-up ms |\n|---|---|---|---|---|---|---|---|---|")
	for _, g := range gs {
		for _, r := range g.Rows {
			a, b := r.Bulkad, r.Gorgonia
			fmt.Fprintf(w, "| %s | %d %s | %d | %d / %d | %.1f / %.1f | %.1f / %.1f | %.1f / %.1f | %.1f / %.1f | %.0f / %.0f |\n",
				g.Family, r.Blocks, g.Unit, a.Nodes, a.NodesAfter, b.NodesAfter, a.BuildMS, b.BuildMS, a.GradMS, b.GradMS,
				a.CompileMS, b.CompileMS, a.FirstRunMS, b.FirstRunMS, a.TotalMS, b.TotalMS)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "growth exponents over the nodes before Grad (least squares of log time over the four largest sizes; 1.0 = linear, 2.0 = quadratic; bulkad / gorgonia):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| family | Grad | NewTapeMachine | first run | set-up |\n|---|---|---|---|---|")
	for _, g := range gs {
		fmt.Fprintf(w, "| %s | %.2f / %.2f | %.2f / %.2f | %.2f / %.2f | %.2f / %.2f |\n", g.Family,
			g.ExpBulkad[0], g.ExpGorgonia[0], g.ExpBulkad[1], g.ExpGorgonia[1], g.ExpBulkad[2], g.ExpGorgonia[2], g.ExpBulkad[3], g.ExpGorgonia[3])
	}
}
