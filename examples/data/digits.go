package data

import (
	"math"
	"math/rand"

	"github.com/pkg/errors"
)

// Side is the width and height of a digit image in pixels (as MNIST).
const Side = 28

// Pixels is the number of pixels of a digit image.
const Pixels = Side * Side

// Set is a labelled image dataset: Images holds N rows of Pixels values in [0, 1], row-major;
// Labels holds N digits 0–9.
type Set struct {
	Images []float64
	Labels []int
	N      int
}

// Image returns the pixels of example i.
func (s *Set) Image(i int) []float64 { return s.Images[i*Pixels : (i+1)*Pixels] }

// seg is a stroke segment in glyph coordinates (x right, y down, both in [0, 1]).
type seg struct{ x0, y0, x1, y1 float64 }

// arc approximates an elliptical arc by segments: centre (cx, cy), radii (rx, ry), angles
// in degrees measured clockwise from the positive x axis (y grows downwards).
func arc(cx, cy, rx, ry, from, to float64) []seg {
	const steps = 10
	var out []seg
	for k := 0; k < steps; k++ {
		a0 := (from + (to-from)*float64(k)/steps) * math.Pi / 180
		a1 := (from + (to-from)*float64(k+1)/steps) * math.Pi / 180
		out = append(out, seg{cx + rx*math.Cos(a0), cy + ry*math.Sin(a0), cx + rx*math.Cos(a1), cy + ry*math.Sin(a1)})
	}
	return out
}

func cat(parts ...[]seg) []seg {
	var out []seg
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// glyphs are stroke skeletons of the ten digits.
var glyphs = [10][]seg{
	0: arc(0.5, 0.5, 0.28, 0.38, 0, 360),
	1: {{0.35, 0.25, 0.55, 0.1}, {0.55, 0.1, 0.55, 0.9}, {0.38, 0.9, 0.72, 0.9}},
	2: cat(arc(0.5, 0.33, 0.26, 0.22, 180, 360), arc(0.5, 0.33, 0.26, 0.22, 0, 60), []seg{{0.63, 0.52, 0.24, 0.9}, {0.24, 0.9, 0.78, 0.9}}),
	3: cat(arc(0.48, 0.3, 0.24, 0.2, 200, 450), arc(0.48, 0.7, 0.27, 0.2, 270, 520)),
	4: {{0.62, 0.1, 0.2, 0.65}, {0.2, 0.65, 0.8, 0.65}, {0.62, 0.1, 0.62, 0.9}},
	5: cat([]seg{{0.75, 0.1, 0.3, 0.1}, {0.3, 0.1, 0.27, 0.45}}, arc(0.5, 0.64, 0.27, 0.25, 220, 500)),
	6: cat(arc(0.55, 0.45, 0.3, 0.4, 200, 290), arc(0.5, 0.66, 0.25, 0.23, 0, 360)),
	7: {{0.22, 0.1, 0.78, 0.1}, {0.78, 0.1, 0.4, 0.9}, {0.35, 0.5, 0.7, 0.5}},
	8: cat(arc(0.5, 0.3, 0.21, 0.19, 0, 360), arc(0.5, 0.7, 0.26, 0.21, 0, 360)),
	9: cat(arc(0.5, 0.34, 0.25, 0.23, 0, 360), arc(0.45, 0.55, 0.3, 0.4, 0, 110)),
}

// Digits draws n labelled digit images deterministically from seed. Labels cycle through a
// seeded shuffle so every class has n/10 (±1) examples. Each glyph gets a random rotation
// (±15°), scale (0.8–1.1 per axis), shear, translation (±3 px), stroke width (1.2–2.6 px) and
// Gaussian pixel noise (σ = 0.08), then is clipped to [0, 1].
func Digits(n int, seed int64) (*Set, error) {
	if n < 0 {
		return nil, errors.Errorf("data: digits: negative count %d", n)
	}
	rng := rand.New(rand.NewSource(seed))
	s := &Set{Images: make([]float64, n*Pixels), Labels: make([]int, n), N: n}
	for i := 0; i < n; i++ {
		d := i % 10
		s.Labels[i] = d
		draw(s.Image(i), glyphs[d], rng)
	}
	rng.Shuffle(n, func(i, j int) {
		s.Labels[i], s.Labels[j] = s.Labels[j], s.Labels[i]
		a, b := s.Image(i), s.Image(j)
		for k := range a {
			a[k], b[k] = b[k], a[k]
		}
	})
	return s, nil
}

// draw renders the strokes into img with a random distortion.
func draw(img []float64, strokes []seg, rng *rand.Rand) {
	rot := (rng.Float64()*2 - 1) * 15 * math.Pi / 180
	sx := 0.8 + 0.3*rng.Float64()
	sy := 0.8 + 0.3*rng.Float64()
	shear := (rng.Float64()*2 - 1) * 0.25
	tx := (rng.Float64()*2 - 1) * 3
	ty := (rng.Float64()*2 - 1) * 3
	width := 1.2 + 1.4*rng.Float64()
	cos, sin := math.Cos(rot), math.Sin(rot)
	// Map glyph coordinates ([0,1]², centre 0.5) to pixel coordinates.
	const box = 20.0 // glyph box size in pixels, as MNIST's 20×20 digit box
	tf := func(x, y float64) (float64, float64) {
		x, y = (x-0.5)*sx, (y-0.5)*sy
		x += shear * y
		x, y = cos*x-sin*y, sin*x+cos*y
		return Side/2 + box*x + tx, Side/2 + box*y + ty
	}
	pts := make([]seg, len(strokes))
	for k, s := range strokes {
		x0, y0 := tf(s.x0, s.y0)
		x1, y1 := tf(s.x1, s.y1)
		pts[k] = seg{x0, y0, x1, y1}
	}
	for py := 0; py < Side; py++ {
		for px := 0; px < Side; px++ {
			cx, cy := float64(px)+0.5, float64(py)+0.5
			dmin := math.Inf(1)
			for _, s := range pts {
				if d := segDist(cx, cy, s); d < dmin {
					dmin = d
				}
			}
			// Anti-aliased stroke: full ink inside width/2, linear fall-off over one pixel.
			v := clamp01(width/2 + 0.5 - dmin)
			v += rng.NormFloat64() * 0.08
			img[py*Side+px] = clamp01(v)
		}
	}
}

func segDist(px, py float64, s seg) float64 {
	dx, dy := s.x1-s.x0, s.y1-s.y0
	l2 := dx*dx + dy*dy
	t := 0.0
	if l2 > 0 {
		t = ((px-s.x0)*dx + (py-s.y0)*dy) / l2
		t = math.Max(0, math.Min(1, t))
	}
	ex, ey := s.x0+t*dx-px, s.y0+t*dy-py
	return math.Sqrt(ex*ex + ey*ey)
}

func clamp01(v float64) float64 { return math.Max(0, math.Min(1, v)) }
