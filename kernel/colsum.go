package kernel

// colSums adds the column sums of rows rows of x (ldx elements apart) into dst: dst[j] +=
// x[j] + x[ldx+j] + … + x[(rows-1)·ldx+j] for j < len(dst), each column one addition chain
// in the order of the rows (the bits of the scalar loop). Whole vectors of float columns run
// in the AVX2 kernels (simdColSum), the rest eight columns at a time, each in a register.
func colSums[T numT](dst, x []T, ldx, rows int) {
	if rows <= 0 || len(dst) == 0 {
		return
	}
	j := simdColSum(dst, x, ldx, rows)
	for ; j+4 <= len(dst); j += 4 {
		a0, a1, a2, a3 := dst[j], dst[j+1], dst[j+2], dst[j+3]
		for r := range rows {
			row := x[r*ldx+j : r*ldx+j+4 : r*ldx+j+4]
			a0 += row[0]
			a1 += row[1]
			a2 += row[2]
			a3 += row[3]
		}
		dst[j], dst[j+1], dst[j+2], dst[j+3] = a0, a1, a2, a3
	}
	for ; j < len(dst); j++ {
		a := dst[j]
		for r := range rows {
			a += x[r*ldx+j]
		}
		dst[j] = a
	}
}
