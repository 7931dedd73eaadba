package main

import (
	"image/color"

	"github.com/pkg/errors"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// plotCurves draws the training loss of both methods against machine runs (log-scaled loss
// above its minimum would hide the start; the loss itself is drawn from 0).
func plotCurves(path string, r *result) error {
	p := plot.New()
	p.Title.Text = "iris softmax regression (raw features): Newton-CG vs gradient descent"
	p.X.Label.Text = "machine runs (each: loss, gradient and one Hessian-vector product)"
	p.Y.Label.Text = "training loss"
	p.Y.Min = 0
	line := func(ys []float64, col color.RGBA) (*plotter.Line, error) {
		xy := make(plotter.XYs, len(ys))
		for i, y := range ys {
			xy[i] = plotter.XY{X: float64(i), Y: y}
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return nil, errors.Wrap(err, "newton: plot")
		}
		l.Color, l.Width = col, vg.Points(1.5)
		return l, nil
	}
	ln, err := line(r.newton, color.RGBA{R: 31, G: 119, B: 180, A: 255})
	if err != nil {
		return err
	}
	lg, err := line(r.gd, color.RGBA{R: 214, G: 39, B: 40, A: 255})
	if err != nil {
		return err
	}
	p.Add(plotter.NewGrid(), ln, lg)
	p.Legend.Add("Newton-CG (bulkad.HessianVector)", ln)
	p.Legend.Add("gradient descent, step 1/L", lg)
	p.Legend.Top = true
	p.Legend.YOffs = -vg.Points(14)
	return errors.Wrapf(p.Save(9*vg.Inch, 5*vg.Inch, path), "newton: plot: saving %s", path)
}
