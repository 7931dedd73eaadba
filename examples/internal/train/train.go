// Package train holds what bulkad's example programs share: mini-batch filling, a terminal
// progress bar, step timing, accuracy, and the loss/accuracy plot.
package train

import (
	"fmt"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/pkg/errors"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Progress draws a one-line progress bar per epoch: [#####.....] 12/40 train loss 0.4213 train acc 0.873 12.3ms/step
// (running means over this epoch's training batches; the held-out accuracy is printed at the end).
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
	fmt.Fprintf(p.w, "%s%s [%s] %d/%d train loss %.4f train acc %.3f %s/step%s", cr, p.prefix, bar, done, p.total, loss, acc, FormatDuration(perStep), end)
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

// Plot writes the loss and accuracy curves as two panels sharing the step axis — loss above
// (from 0), training-batch accuracy below (0 to 1) — as a PNG (or SVG/PDF by extension).
func (c *Curve) Plot(path, title string) error {
	if len(c.Loss) == 0 {
		return errors.New("train: plot: no steps recorded")
	}
	panel := func(ys []float64, label string, col color.RGBA) (*plot.Plot, error) {
		p := plot.New()
		p.X.Label.Text = "training step"
		p.Y.Label.Text = label
		xy := make(plotter.XYs, len(ys))
		for i, y := range ys {
			xy[i] = plotter.XY{X: float64(i + 1), Y: y}
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return nil, errors.Wrap(err, "train: plot")
		}
		l.Color = col
		l.Width = vg.Points(1.5)
		p.Add(plotter.NewGrid(), l)
		p.Y.Min = 0
		return p, nil
	}
	lp, err := panel(c.Loss, "loss (cross-entropy, training batch)", color.RGBA{R: 31, G: 119, B: 180, A: 255})
	if err != nil {
		return err
	}
	lp.Title.Text = title
	ap, err := panel(c.Acc, "accuracy (training batch)", color.RGBA{R: 214, G: 39, B: 40, A: 255})
	if err != nil {
		return err
	}
	ap.Y.Max = 1
	if err := checkPlotFormat(path); err != nil {
		return err
	}
	cv, err := draw.NewFormattedCanvas(8*vg.Inch, 7*vg.Inch, plotFormat(path))
	if err != nil {
		return errors.Wrapf(err, "train: plot: %s", path)
	}
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadX: vg.Millimeter * 2, PadY: vg.Millimeter * 4, PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 4}
	cs := plot.Align([][]*plot.Plot{{lp}, {ap}}, tiles, draw.New(cv))
	lp.Draw(cs[0][0])
	ap.Draw(cs[1][0])
	f, err := os.Create(path)
	if err != nil {
		return errors.Wrapf(err, "train: plot: saving %s", path)
	}
	if _, err := cv.WriteTo(f); err != nil {
		f.Close()
		return errors.Wrapf(err, "train: plot: saving %s", path)
	}
	return errors.Wrapf(f.Close(), "train: plot: saving %s", path)
}

// plotFormat is the image format of a plot path: its extension, lower case; png without one.
func plotFormat(path string) string {
	format := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))
	if format == "" {
		format = "png"
	}
	return format
}

// checkPlotFormat refuses a plot path whose extension names no format Curve.Plot writes
// (those registered with gonum's draw package).
func checkPlotFormat(path string) error {
	format := plotFormat(path)
	known := draw.Formats()
	sort.Strings(known)
	for _, f := range known {
		if f == format {
			return nil
		}
	}
	return errors.Errorf("%s: %q is no image format Plot writes (%s)", path, format, strings.Join(known, ", "))
}
