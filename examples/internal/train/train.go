// Package train holds what bulkad's example programs share: mini-batch filling, a terminal
// progress bar, step timing, accuracy, and the loss/accuracy plot.
package train

import (
	"fmt"
	"image/color"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/pkg/errors"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Progress draws a one-line progress bar per epoch: [#####.....] 12/40 loss 0.4213 acc 0.873 12.3ms/step.
type Progress struct {
	w      io.Writer
	prefix string
	total  int
	width  int
	tty    bool
}

// NewProgress starts a bar of total steps on w. With tty false (output not a terminal) the bar
// prints one line at the end instead of redrawing.
func NewProgress(w io.Writer, prefix string, total int, tty bool) *Progress {
	return &Progress{w: w, prefix: prefix, total: total, width: 30, tty: tty}
}

// Update redraws the bar after done steps with the running loss and accuracy.
func (p *Progress) Update(done int, loss, acc float64, perStep time.Duration) {
	if !p.tty && done < p.total {
		return
	}
	filled := 0
	if p.total > 0 {
		filled = p.width * done / p.total
	}
	bar := strings.Repeat("#", filled) + strings.Repeat(".", p.width-filled)
	end := ""
	if done >= p.total {
		end = "\n"
	}
	cr := ""
	if p.tty {
		cr = "\r"
	}
	fmt.Fprintf(p.w, "%s%s [%s] %d/%d loss %.4f acc %.3f %s/step%s", cr, p.prefix, bar, done, p.total, loss, acc, FormatDuration(perStep), end)
}

// FormatDuration prints a step time with three significant digits and a unit.
func FormatDuration(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.0fµs", float64(d)/float64(time.Microsecond))
	}
}

// Median returns the median of ds (0 for none).
func Median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration{}, ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// Argmax returns, for each row of an n×k row-major matrix, the column of its largest value.
func Argmax(vals []float64, n, k int) []int {
	out := make([]int, n)
	for i := 0; i < n; i++ {
		row := vals[i*k : (i+1)*k]
		best := 0
		for j, v := range row {
			if v > row[best] {
				best = j
			}
		}
		out[i] = best
	}
	return out
}

// Accuracy is the fraction of predictions equal to labels.
func Accuracy(pred, labels []int) float64 {
	if len(pred) == 0 {
		return 0
	}
	ok := 0
	for i := range pred {
		if pred[i] == labels[i] {
			ok++
		}
	}
	return float64(ok) / float64(len(pred))
}

// OneHot writes one-hot rows of width k for labels into dst (len(labels)*k).
func OneHot(dst []float64, labels []int, k int) {
	for i := range dst {
		dst[i] = 0
	}
	for i, l := range labels {
		dst[i*k+l] = 1
	}
}

// Curve is a training history: one point per step.
type Curve struct {
	Loss, Acc []float64
}

// Add appends one step.
func (c *Curve) Add(loss, acc float64) {
	c.Loss = append(c.Loss, loss)
	c.Acc = append(c.Acc, acc)
}

// Plot writes the loss and accuracy curves as a PNG (or SVG/PDF by extension) to path.
func (c *Curve) Plot(path, title string) error {
	if len(c.Loss) == 0 {
		return errors.New("train: plot: no steps recorded")
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "training step"
	p.Y.Label.Text = "loss (cross-entropy) / accuracy (batch)"
	loss := make(plotter.XYs, len(c.Loss))
	acc := make(plotter.XYs, len(c.Acc))
	for i := range c.Loss {
		loss[i] = plotter.XY{X: float64(i + 1), Y: c.Loss[i]}
		acc[i] = plotter.XY{X: float64(i + 1), Y: c.Acc[i]}
	}
	ll, err := plotter.NewLine(loss)
	if err != nil {
		return errors.Wrap(err, "train: plot")
	}
	ll.Color = color.RGBA{R: 31, G: 119, B: 180, A: 255}
	ll.Width = vg.Points(1.5)
	al, err := plotter.NewLine(acc)
	if err != nil {
		return errors.Wrap(err, "train: plot")
	}
	al.Color = color.RGBA{R: 214, G: 39, B: 40, A: 255}
	al.Width = vg.Points(1.5)
	al.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
	p.Add(plotter.NewGrid(), ll, al)
	p.Legend.Add("loss", ll)
	p.Legend.Add("accuracy", al)
	p.Legend.Top = true
	if err := p.Save(8*vg.Inch, 5*vg.Inch, path); err != nil {
		return errors.Wrapf(err, "train: plot: saving %s", path)
	}
	return nil
}
