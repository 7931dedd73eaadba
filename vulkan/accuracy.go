package vulkan

// ulpBounds are the documented float32 error bounds of the element-wise ops that are not
// bitwise (see ULPBound).
var ulpBounds = map[string]int{
	"exp": 4, "log": 4, "sin": 4, "cos": 4, "tan": 4, "tanh": 8, "sigmoid": 8, "log1p": 4, "expm1": 8,
	"pow": 8,
}

// ULPBound is the largest distance, in units in the last place, between the float32 result
// of Unary or Binary (and BinaryStrided) with op and that of package core's evaluator
// (core.Eval, which computes in float64 and rounds once) on the same operands, anywhere in
// the float32 range including subnormals; 0 means bitwise equal. In either case the special
// results are exact: where core gives ±0, ±Inf or NaN the device gives the same (any NaN for
// NaN), and it gives ±Inf only where core does. The float64 shaders have only the bitwise
// ops, so every float64 result is bitwise. The bounds are checked by the package's tests on
// lavapipe; other drivers' builtin exp, exp2, log and log2 may be less precise (Vulkan
// allows 3 ulp), which these bounds absorb only in part.
func ULPBound(op string) int {
	if c, _, ok := binaryCode(op); ok {
		op = binaryOps[c].word
	}
	return ulpBounds[op]
}
