package vmath

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
)

// benchInputs are n values in the range where each function is not saturated.
func benchInputs(name string, n int) []float64 {
	r := rand.New(rand.NewSource(3))
	xs := make([]float64, n)
	for i := range xs {
		switch name {
		case "Log":
			xs[i] = math.Exp(r.Float64()*40 - 20)
		case "Exp":
			xs[i] = r.Float64()*160 - 80
		default:
			xs[i] = r.Float64()*8 - 4
		}
	}
	return xs
}

var benchMath = map[string]func(float64) float64{
	"Exp": math.Exp, "Log": math.Log, "Tanh": math.Tanh, "Erf": math.Erf,
	"Sigmoid": func(x float64) float64 { return 1 / (1 + math.Exp(-x)) },
}

// BenchmarkVmath reports ns/element of the slice functions against math (float64) and
// float32(math.F(float64(x))) (float32) for n = 1024 and 65536.
func BenchmarkVmath(b *testing.B) {
	for _, n := range []int{1024, 1 << 16} {
		for _, f := range funcs64() {
			name := f.name[:len(f.name)-2]
			xs := benchInputs(name, n)
			x32 := make([]float32, n)
			for i, v := range xs {
				x32[i] = float32(v)
			}
			d64, d32 := make([]float64, n), make([]float32, n)
			ref := benchMath[name]
			var f32 fn32
			for _, g := range funcs32() {
				if g.name == name+"32" {
					f32 = g
				}
			}
			run := func(label string, body func()) {
				b.Run(fmt.Sprintf("%s/n=%d/%s", name, n, label), func(b *testing.B) {
					for i := 0; i < b.N; i++ {
						body()
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/elem")
				})
			}
			run("vmath64", func() { _ = f.slice(d64, xs) })
			run("math64", func() {
				for i, v := range xs {
					d64[i] = ref(v)
				}
			})
			run("vmath32", func() { _ = f32.slice(d32, x32) })
			run("math32via64", func() {
				for i, v := range x32 {
					d32[i] = float32(ref(float64(v)))
				}
			})
			run("scalar64", func() {
				for i, v := range xs {
					d64[i] = f.scalar(v)
				}
			})
		}
	}
}
