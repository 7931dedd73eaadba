//go:build !amd64 || purego

package kernel

// gemmMicro returns the tile width and the micro-kernel of gemmGo: the portable microGo.
func gemmMicro[T floatT]() (int, func(kc int, as, bs, tile []T)) {
	return gemmNR, microGo[T]
}
