package lower

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/bulkad/bulkad/core"
)

// loopResample is Resample's definition: y[…, j, …] = Σ_k weight[k][j]·x[…, index[k][j], …],
// 0 for an index outside the axis.
func loopResample(x arr, axis int, index [][]int, weight [][]float64) arr {
	n := len(index[0])
	sh := append([]int{}, x.sh...)
	sh[axis] = n
	y := zeros(sh...)
	forEach(sh, func(ix []int) {
		s := 0.0
		for k := range index {
			i := index[k][ix[axis]]
			if i < 0 || i >= x.sh[axis] {
				continue
			}
			xi := append([]int{}, ix...)
			xi[axis] = i
			w := 1.0
			if weight != nil {
				w = weight[k][ix[axis]]
			}
			s += w * x.at(xi...)
		}
		y.set(s, ix...)
	})
	return y
}

func TestResampleAgainstLoops(t *testing.T) {
	rng := rand.New(rand.NewSource(41))
	cases := []struct {
		name   string
		x      []int
		axis   int
		index  [][]int
		weight [][]float64
	}{
		{"nearest ×2 (repeat)", []int{2, 3, 4}, 2, [][]int{{0, 0, 1, 1, 2, 2, 3, 3}}, nil},
		{"nearest 5 → 7", []int{1, 2, 5, 3}, 2, [][]int{{0, 0, 1, 2, 2, 3, 4}}, nil},
		{"nearest downsample", []int{2, 6}, 1, [][]int{{0, 2, 4}}, nil},
		{"identity", []int{2, 3}, 1, [][]int{{0, 1, 2}}, nil},
		{"linear 3 → 5", []int{2, 3, 2}, 1, [][]int{{0, 0, 1, 1, 2}, {1, 1, 2, 2, 2}},
			[][]float64{{1, 0.25, 0.5, 0.75, 1}, {0, 0.75, 0.5, 0.25, 0}}},
		{"cubic taps, one outside", []int{1, 4}, 1, [][]int{{-1, 0, 1}, {0, 1, 2}, {1, 2, 3}, {2, 3, 4}},
			[][]float64{{-0.1, -0.07, 0.02}, {0.8, 0.9, 0.6}, {0.35, 0.2, 0.5}, {-0.05, -0.03, -0.12}}},
		{"a zero tap", []int{3, 2}, 0, [][]int{{0, 1, 2}, {1, 2, 0}}, [][]float64{{1, 1, 1}, {0, 0, 0}}},
	}
	for _, c := range cases {
		x := randArr(rng, c.x...)
		checkLayer(t, c.name, func(v ...core.Term) (core.Term, error) { return Resample(v[0], c.axis, c.index, c.weight) },
			func(a []arr) arr { return loopResample(a[0], c.axis, c.index, c.weight) }, []arr{x}, []bool{true}, 1e-3)
	}
}

func TestResampleErrors(t *testing.T) {
	x, _ := core.NewVar("x", core.Type{Shape: core.Shape{2, 3}, Dtype: core.Float64})
	for _, c := range []struct {
		name   string
		axis   int
		index  [][]int
		weight [][]float64
		want   string
	}{
		{"axis", 2, [][]int{{0}}, nil, "axis 2 out of range"},
		{"no taps", 1, nil, nil, "0 index taps"},
		{"two taps without weights", 1, [][]int{{0}, {1}}, nil, "2 index taps and 0 weight taps"},
		{"lengths", 1, [][]int{{0, 1}, {1}}, [][]float64{{1, 1}, {1}}, "different lengths"},
	} {
		_, err := Resample(x, c.axis, c.index, c.weight)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "lower: resample") {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
	}
}
