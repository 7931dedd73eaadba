package vmath

// pick1 calls f64 or f32 on x by its dtype.
func pick1[T Float](x T, f64 func(float64) float64, f32 func(float32) float32) T {
	switch v := any(x).(type) {
	case float32:
		return T(f32(v))
	default:
		return T(f64(any(x).(float64)))
	}
}

// pickSlice calls f64 or f32 on dst and x by their dtype.
func pickSlice[T Float](dst, x []T, f64 func(d, x []float64) error, f32 func(d, x []float32) error) error {
	if d, ok := any(dst).([]float32); ok {
		return f32(d, any(x).([]float32))
	}
	return f64(any(dst).([]float64), any(x).([]float64))
}

// Exp is Exp64 or Exp32 by T.
func Exp[T Float](x T) T { return pick1(x, Exp64, Exp32) }

// Log is Log64 or Log32 by T.
func Log[T Float](x T) T { return pick1(x, Log64, Log32) }

// Tanh is Tanh64 or Tanh32 by T.
func Tanh[T Float](x T) T { return pick1(x, Tanh64, Tanh32) }

// Sigmoid is Sigmoid64 or Sigmoid32 by T.
func Sigmoid[T Float](x T) T { return pick1(x, Sigmoid64, Sigmoid32) }

// Erf is Erf64 or Erf32 by T.
func Erf[T Float](x T) T { return pick1(x, Erf64, Erf32) }

// ExpSlice is Exp64Slice or Exp32Slice by T.
func ExpSlice[T Float](dst, x []T) error { return pickSlice(dst, x, Exp64Slice, Exp32Slice) }

// LogSlice is Log64Slice or Log32Slice by T.
func LogSlice[T Float](dst, x []T) error { return pickSlice(dst, x, Log64Slice, Log32Slice) }

// TanhSlice is Tanh64Slice or Tanh32Slice by T.
func TanhSlice[T Float](dst, x []T) error { return pickSlice(dst, x, Tanh64Slice, Tanh32Slice) }

// SigmoidSlice is Sigmoid64Slice or Sigmoid32Slice by T.
func SigmoidSlice[T Float](dst, x []T) error {
	return pickSlice(dst, x, Sigmoid64Slice, Sigmoid32Slice)
}

// ErfSlice is Erf64Slice or Erf32Slice by T.
func ErfSlice[T Float](dst, x []T) error { return pickSlice(dst, x, Erf64Slice, Erf32Slice) }
