package vulkan

import (
	"fmt"
	"math/big"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestTwoOverPiTable checks the 2/pi bits of shaders/trig.glsl (float32 sin, cos and tan
// range reduction) against 2/pi computed here from Machin's formula,
// pi = 16 atan(1/5) - 4 atan(1/239), in 600-bit arithmetic.
func TestTwoOverPiTable(t *testing.T) {
	src, err := os.ReadFile("shaders/trig.glsl")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)TWO_OVER_PI\[8\] = uint\[8\]\((.*?)\);`).FindSubmatch(src)
	if m == nil {
		t.Fatal("trig.glsl: no TWO_OVER_PI table")
	}
	var got strings.Builder
	for _, w := range regexp.MustCompile(`0x([0-9a-f]{8})u`).FindAllSubmatch(m[1], -1) {
		got.Write(w[1])
	}
	const prec = 600
	atanInv := func(n int64) *big.Float {
		x := new(big.Float).SetPrec(prec).Quo(big.NewFloat(1).SetPrec(prec), new(big.Float).SetPrec(prec).SetInt64(n))
		x2 := new(big.Float).SetPrec(prec).Mul(x, x)
		sum, term := new(big.Float).SetPrec(prec), new(big.Float).SetPrec(prec).Set(x)
		for k := int64(0); k < 500; k++ {
			s := new(big.Float).SetPrec(prec).Quo(term, new(big.Float).SetPrec(prec).SetInt64(2*k+1))
			if k%2 == 1 {
				s.Neg(s)
			}
			sum.Add(sum, s)
			term.Mul(term, x2)
		}
		return sum
	}
	pi := new(big.Float).SetPrec(prec).Mul(big.NewFloat(16).SetPrec(prec), atanInv(5))
	pi.Sub(pi, new(big.Float).SetPrec(prec).Mul(big.NewFloat(4).SetPrec(prec), atanInv(239)))
	twoOverPi := new(big.Float).SetPrec(prec).Quo(big.NewFloat(2).SetPrec(prec), pi)
	bits, _ := new(big.Float).SetPrec(prec).SetMantExp(twoOverPi, 256).Int(nil)
	if want := fmt.Sprintf("%064x", bits); got.String() != want {
		t.Errorf("trig.glsl's 2/pi bits are\n%s, want\n%s", got.String(), want)
	}
}
