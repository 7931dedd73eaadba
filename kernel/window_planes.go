package kernel

// Depthwise planes. A depthwise convolution of stride 1 (MobileNetV2's and EfficientNet's
// 3×3 layers) and its two gradient products are WindowDot loops over [kh, kw, b, c, y, x]
// whose windows WindowDot walks with bounds arithmetic at every level: ≈ 0.8 ns a product
// on 16×16 maps. Each image plane (b, c) copied into a zero-padded plane P (rows PW wide)
// makes every read and write of the plane in bounds, and a dense plane (the output, or the
// cotangent δ) laid out with the same row stride PW (columns W … PW−1 left over) makes each
// tap (kh, kw) one contiguous run of the plane at a fixed offset o(kh, kw) of P:
//
//	forward  out[i]      += P[i + o]·w        for i < H·PW, then the W columns copied out
//	∂x       P[i + o]    += δ[i]·w            (δ's extra columns 0), P's interior copied out
//	∂w       w[kh, kw]   += δ[i]·P[i + o]     summed over b and i in order
//
// the first two as vector axpys (product rounded, then the sum) over the whole plane, the
// last with one addition chain per tap interleaved. Order of summation: every destination
// receives its products in the reference's order (the taps in the domain's order for the
// first two, the points (b, y, x) in order for the last), so the results are the
// reference's bit for bit, with two kinds of extra terms: P's padding (zeros the reference
// reads too: its gather gives 0 outside the image) and the products of the extra columns
// (0·w or δ-column 0·P). Those are ±0, and adding ±0 to a sum started at +0 changes nothing
// (such a sum is never −0), unless the other factor is an infinity or a NaN: ∂x needs a
// finite filter and ∂w a finite image, else WindowDot's own loops run.

// planeMin is the smallest map (points of the dense plane) run plane by plane.
const planeMin = 16

// Plane modes (which access is the destination).
const (
	planeForward = iota + 1 // out is dense: out[b, c, y, x]
	planeInput              // out is the image: the scatter into x
	planeFilter             // out is the filter: the scatter into w
)

// planePlan is a WindowDot that runs plane by plane (see above).
type planePlan struct {
	mode             int
	img, dense, filt int   // which access (0 out, 1 A, 2 B) plays each part
	nb, nc           int   // batch and channels (1 when the domain does not vary them)
	h, w             int   // the dense plane
	ih, iw           int   // the image plane
	ph, pw           int   // the padded plane
	r0, c0           int   // padded row and column of the image's (0, 0)
	sh, sw           int   // the strides: P is kept as sh·sw phase planes of qh × qw
	qh, qw           int   // (phase (a, b) holds P[sh·u + a, sw·v + b]; 1 × 1 for stride 1)
	tapOff           []int // per tap, in the domain's order: P's offset for dense (0, 0)
	plen             int   // elements of P, its slack for the extra columns included
	// element strides of b and c in each access (0 when it does not vary with them), the
	// filter's strides of the taps, and each access's base offset
	stB, stC [3]int
	stTap    []int // the filter's offset per tap
	base     [3]int
}

// planes returns k's plane plan, or nil when k is not a depthwise loop of stride 1: an image
// access [b, c, y + dh·kh − p, x + dw·kw − q] (rows of the batch and channel one variable
// each), a dense access of rows W elements apart over (b, c, y, x), a filter access over (c,
// kh, kw), no other variable of more than one value, and the taps before y and x (and, for
// ∂w, b before y before x) in the domain's order.
func (k *WindowDot) planes() *planePlan {
	n := len(k.dom)
	live := func(j int) bool { return k.dom[j] > 1 }
	// coefficient of live variable j in row d of access a; the live variables of the row
	vars := func(a, d int) []int {
		var vs []int
		for j := range n {
			if live(j) && k.spec[a].Coef[d][j] != 0 {
				vs = append(vs, j)
			}
		}
		return vs
	}
	dependsOn := func(a, j int) bool {
		for _, row := range k.spec[a].Coef {
			if row[j] != 0 {
				return true
			}
		}
		return false
	}
	pp := &planePlan{img: -1}
	for a := range 3 {
		acc := k.spec[a]
		if len(acc.Shape) != 4 || acc.C0[0] != 0 || acc.C0[1] != 0 || len(vars(a, 0)) > 1 || len(vars(a, 1)) > 1 {
			continue
		}
		if len(vars(a, 2)) == 2 || len(vars(a, 3)) == 2 {
			if pp.img >= 0 {
				return nil // two candidates
			}
			pp.img = a
		}
	}
	if pp.img < 0 {
		return nil
	}
	others := []int{}
	for a := range 3 {
		if a != pp.img {
			others = append(others, a)
		}
	}
	vb, vc := -1, -1
	if vs := vars(pp.img, 0); len(vs) == 1 {
		vb = vs[0]
	}
	if vs := vars(pp.img, 1); len(vs) == 1 {
		vc = vs[0]
	}
	for _, v := range []int{vb, vc} {
		if v >= 0 && k.spec[pp.img].Coef[0][v]+k.spec[pp.img].Coef[1][v] != 1 {
			return nil
		}
	}
	// the filter and the dense access: the other two, in the order that fits
	if q := k.planesWith(pp.img, others[0], others[1], vb, vc, vars, dependsOn); q != nil {
		return q
	}
	return k.planesWith(pp.img, others[1], others[0], vb, vc, vars, dependsOn)
}

// planesWith is planes with the image, filter and dense accesses chosen, and the batch and
// channel variables vb, vc (−1: the domain does not vary them).
func (k *WindowDot) planesWith(imgA, filtA, denseA, vb, vc int, vars func(a, d int) []int, dependsOn func(a, j int) bool) *planePlan {
	n := len(k.dom)
	live := func(j int) bool { return k.dom[j] > 1 }
	img := k.spec[imgA]
	pp := &planePlan{img: imgA, filt: filtA, dense: denseA}
	if vb >= 0 && dependsOn(pp.filt, vb) {
		return nil
	}
	// rows 2 and 3 of the image: a map variable (in the dense access, coefficient 1) and a
	// tap variable (in the filter, coefficient the dilation)
	var vy, vx, vkh, vkw, dh, dw int = -1, -1, -1, -1, 1, 1
	for d := 2; d < 4; d++ {
		vm, vt := -1, -1
		for _, j := range vars(pp.img, d) {
			inF, inD := dependsOn(pp.filt, j), dependsOn(pp.dense, j)
			switch {
			case inF && !inD && vt < 0:
				vt = j
			case inD && !inF && vm < 0:
				vm = j
			default:
				return nil
			}
		}
		if vm >= 0 && img.Coef[d][vm] <= 0 || vt >= 0 && img.Coef[d][vt] <= 0 {
			return nil
		}
		st := 1
		if vm >= 0 {
			st = int(img.Coef[d][vm])
		}
		if d == 2 {
			vy, vkh, pp.sh = vm, vt, st
			if vt >= 0 {
				dh = int(img.Coef[d][vt])
			}
		} else {
			vx, vkw, pp.sw = vm, vt, st
			if vt >= 0 {
				dw = int(img.Coef[d][vt])
			}
		}
	}
	ext := func(v int) int {
		if v < 0 {
			return 1
		}
		return k.dom[v]
	}
	roles := []int{vb, vc, vy, vx, vkh, vkw}
	for j := range n {
		if live(j) && !containsInt(roles, j) {
			return nil
		}
	}
	// the reference's order: taps before the map (forward, ∂x); b, y, x in order (∂w)
	for _, t := range []int{vkh, vkw} {
		for _, m := range []int{vy, vx} {
			if t >= 0 && m >= 0 && t > m {
				return nil
			}
		}
	}
	switch {
	case pp.dense == 0:
		pp.mode = planeForward
	case pp.img == 0:
		pp.mode = planeInput
	default:
		pp.mode = planeFilter
		if vb >= 0 && (vy >= 0 && vb > vy || vx >= 0 && vb > vx) || vy >= 0 && vx >= 0 && vy > vx {
			return nil
		}
	}
	if k.clipped[pp.dense] || k.clipped[pp.filt] {
		return nil
	}
	pp.nb, pp.nc, pp.h, pp.w = ext(vb), ext(vc), ext(vy), ext(vx)
	pp.ih, pp.iw = img.Shape[2], img.Shape[3]
	// flat strides of every access per role variable
	flat := func(a, j int) int {
		if j < 0 {
			return 0
		}
		s := 0
		for d, row := range k.spec[a].Coef {
			s += int(row[j]) * k.bst[a][d]
		}
		return s
	}
	for a := range 3 {
		pp.stB[a], pp.stC[a] = flat(a, vb), flat(a, vc)
		for d, c0 := range k.spec[a].C0 {
			pp.base[a] += int(c0) * k.bst[a][d]
		}
	}
	if pp.w > 1 && flat(pp.dense, vx) != 1 || pp.h > 1 && flat(pp.dense, vy) != pp.w {
		return nil
	}
	// the padded plane: rows −p … H−1+dh·(KH−1)−p of the image (and all of its own rows)
	p, q := -int(img.C0[2]), -int(img.C0[3])
	kh, kw := ext(vkh), ext(vkw)
	pp.r0, pp.c0 = max(0, p), max(0, q)
	pp.ph = max(pp.r0+pp.ih, pp.r0+pp.sh*(pp.h-1)+dh*(kh-1)-p+1)
	pp.pw = max(pp.c0+pp.iw, pp.c0+pp.sw*(pp.w-1)+dw*(kw-1)-q+1)
	pp.qh, pp.qw = (pp.ph+pp.sh-1)/pp.sh, (pp.pw+pp.sw-1)/pp.sw
	// the taps in the domain's order: tap (i, j) reads P[sh·y + e, sw·x + f], phase
	// (e mod sh, f mod sw) at (y + e div sh, x + f div sw)
	first, s1, s2 := vkh, flat(pp.filt, vkh), flat(pp.filt, vkw)
	if vkh >= 0 && vkw >= 0 && vkw < vkh {
		first = vkw
	}
	for i := range kh {
		for j := range kw {
			e, f := pp.r0-p+dh*i, pp.c0-q+dw*j
			pp.tapOff = append(pp.tapOff, ((e%pp.sh)*pp.sw+f%pp.sw)*pp.qh*pp.qw+(e/pp.sh)*pp.qw+f/pp.sw)
			pp.stTap = append(pp.stTap, i*s1+j*s2)
		}
	}
	if first == vkw && kh > 1 && kw > 1 { // kw before kh in the domain: taps kw-major
		to, ts := make([]int, 0, kh*kw), make([]int, 0, kh*kw)
		for j := range kw {
			for i := range kh {
				to, ts = append(to, pp.tapOff[i*kw+j]), append(ts, pp.stTap[i*kw+j])
			}
		}
		pp.tapOff, pp.stTap = to, ts
	}
	pp.plen = pp.sh * pp.sw * pp.qh * pp.qw
	for _, o := range pp.tapOff {
		pp.plen = max(pp.plen, o+pp.h*pp.qw)
	}
	if pp.h*pp.w < planeMin {
		return nil // a map too small for the copies to pay
	}
	return pp
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// runPlanes runs k on its plane plan; false (nothing written) when the plan needs finite
// values it does not have.
func runPlanes[T floatT](k *WindowDot, pp *planePlan, out []T, ins [3][]T) bool {
	switch pp.mode {
	case planeInput:
		if !allFinite(ins[pp.filt]) {
			return false
		}
	case planeFilter:
		if !allFinite(ins[pp.img]) {
			return false
		}
	}
	ins[0] = out
	per := pp.plen + pp.h*pp.qw + len(pp.tapOff) // P, the wide dense plane, the tap sums
	parts := pp.nb * pp.nc                       // planes (forward, ∂x); channels (∂w)
	if pp.mode == planeFilter {
		parts = pp.nc
	}
	work := costOf(k.points, wStrided)
	w := workers(parts, work)
	buf, kept := scratchOf[T](&k.scratch, w*per)
	if kept {
		defer k.scratch.release()
	}
	inParallel(w, work, func(lo, hi int) {
		for wi := lo; wi < hi; wi++ {
			b := buf[wi*per : (wi+1)*per]
			L := pp.h * pp.qw
			planeRange(pp, ins, b[:pp.plen], b[pp.plen:pp.plen+L], b[pp.plen+L:], parts*wi/w, parts*(wi+1)/w)
		}
	})
	return true
}

// planeRange runs the planes (or, for ∂w, the channels) [from, to) with the buffers P, D
// and the tap sums.
func planeRange[T floatT](pp *planePlan, acc [3][]T, P, D, sums []T, from, to int) {
	img, dense, filt := acc[pp.img], acc[pp.dense], acc[pp.filt]
	L := pp.h * pp.qw
	if pp.mode == planeFilter {
		for c := from; c < to; c++ {
			clear(sums)
			for b := range pp.nb {
				loadImage(pp, P, img, b, c)
				loadDense(pp, D, dense, b, c)
				dotTaps(sums, D[:L], P, pp.tapOff)
			}
			fb := pp.base[pp.filt] + c*pp.stC[pp.filt]
			for t, s := range sums {
				filt[fb+pp.stTap[t]] = s // the output was cleared: its sums start at +0
			}
		}
		return
	}
	for bc := from; bc < to; bc++ {
		b, c := bc/pp.nc, bc%pp.nc
		fb := pp.base[pp.filt] + c*pp.stC[pp.filt]
		if pp.mode == planeForward {
			loadImage(pp, P, img, b, c)
			clear(D[:L])
			for t, o := range pp.tapOff {
				axpyPlane(D[:L], P[o:o+L], filt[fb+pp.stTap[t]])
			}
			db := pp.base[pp.dense] + b*pp.stB[pp.dense] + c*pp.stC[pp.dense]
			for y := range pp.h {
				copy(dense[db+y*pp.w:db+(y+1)*pp.w], D[y*pp.qw:y*pp.qw+pp.w])
			}
			continue
		}
		loadDense(pp, D, dense, b, c)
		clear(P)
		for t, o := range pp.tapOff {
			axpyPlane(P[o:o+L], D[:L], filt[fb+pp.stTap[t]])
		}
		movePlane(pp, P, img, b, c, true)
	}
}

// loadImage copies image plane (b, c) into the zero-padded plane P.
func loadImage[T floatT](pp *planePlan, P, img []T, b, c int) {
	clear(P)
	movePlane(pp, P, img, b, c, false)
}

// movePlane copies image plane (b, c) into its place in P (back into the image when out):
// whole rows for stride 1, else each element into its phase plane.
func movePlane[T floatT](pp *planePlan, P, img []T, b, c int, out bool) {
	ib := b*pp.stB[pp.img] + c*pp.stC[pp.img]
	if pp.sh == 1 && pp.sw == 1 {
		for r := range pp.ih {
			o := (r+pp.r0)*pp.qw + pp.c0
			if out {
				copy(img[ib+r*pp.iw:ib+(r+1)*pp.iw], P[o:o+pp.iw])
			} else {
				copy(P[o:o+pp.iw], img[ib+r*pp.iw:ib+(r+1)*pp.iw])
			}
		}
		return
	}
	plane := pp.qh * pp.qw
	for r := range pp.ih {
		pr := r + pp.r0
		rowBase := (pr%pp.sh)*pp.sw*plane + (pr/pp.sh)*pp.qw
		row := img[ib+r*pp.iw : ib+(r+1)*pp.iw]
		if pp.sw == 2 && len(row) >= 2 { // both phases in one pass, a pair of columns at a time
			pa := pp.c0 % 2 // the phase of column 0; column 1 has the other
			qa := P[rowBase+pa*plane+pp.c0/2:]
			qb := P[rowBase+(1-pa)*plane+(1+pp.c0)/2:]
			n := len(row) / 2
			qa, qb = qa[:n+len(row)%2], qb[:n]
			if out {
				for i := range n {
					row[2*i], row[2*i+1] = qa[i], qb[i]
				}
				if len(row)%2 == 1 {
					row[2*n] = qa[n]
				}
			} else {
				for i := range n {
					qa[i], qb[i] = row[2*i], row[2*i+1]
				}
				if len(row)%2 == 1 {
					qa[n] = row[2*n]
				}
			}
			continue
		}
		for ph := range pp.sw { // the columns of phase ph: j ≡ ph − c0 (mod sw)
			j0 := ((ph-pp.c0)%pp.sw + pp.sw) % pp.sw
			if j0 >= len(row) {
				continue
			}
			q := P[rowBase+ph*plane+(j0+pp.c0)/pp.sw:]
			if out {
				for i, j := 0, j0; j < len(row); i, j = i+1, j+pp.sw {
					row[j] = q[i]
				}
			} else {
				for i, j := 0, j0; j < len(row); i, j = i+1, j+pp.sw {
					q[i] = row[j]
				}
			}
		}
	}
}

// loadDense copies dense plane (b, c) into D, rows qw apart, the extra columns 0.
func loadDense[T floatT](pp *planePlan, D, dense []T, b, c int) {
	db := pp.base[pp.dense] + b*pp.stB[pp.dense] + c*pp.stC[pp.dense]
	for y := range pp.h {
		row := D[y*pp.qw : (y+1)*pp.qw]
		copy(row, dense[db+y*pp.w:db+(y+1)*pp.w])
		clear(row[pp.w:])
	}
}

// dotTaps adds, for each tap t, Σ_i D[i]·P[i + off[t]] to sums[t], i in order (one chain per
// tap; nine taps run interleaved).
func dotTaps[T floatT](sums, D, P []T, off []int) {
	if len(off) == 9 {
		s := (*[9]T)(sums)
		o := (*[9]int)(off)
		p0, p1, p2, p3, p4, p5, p6, p7, p8 := P[o[0]:o[0]+len(D)], P[o[1]:o[1]+len(D)], P[o[2]:o[2]+len(D)],
			P[o[3]:o[3]+len(D)], P[o[4]:o[4]+len(D)], P[o[5]:o[5]+len(D)], P[o[6]:o[6]+len(D)], P[o[7]:o[7]+len(D)], P[o[8]:o[8]+len(D)]
		a0, a1, a2, a3, a4, a5, a6, a7, a8 := s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8]
		for i, d := range D {
			a0 += T(d * p0[i])
			a1 += T(d * p1[i])
			a2 += T(d * p2[i])
			a3 += T(d * p3[i])
			a4 += T(d * p4[i])
			a5 += T(d * p5[i])
			a6 += T(d * p6[i])
			a7 += T(d * p7[i])
			a8 += T(d * p8[i])
		}
		s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8] = a0, a1, a2, a3, a4, a5, a6, a7, a8
		return
	}
	t := 0
	for ; t+4 <= len(off); t += 4 { // four chains at a time
		p0, p1, p2, p3 := P[off[t]:off[t]+len(D)], P[off[t+1]:off[t+1]+len(D)], P[off[t+2]:off[t+2]+len(D)], P[off[t+3]:off[t+3]+len(D)]
		a0, a1, a2, a3 := sums[t], sums[t+1], sums[t+2], sums[t+3]
		for i, d := range D {
			a0 += T(d * p0[i])
			a1 += T(d * p1[i])
			a2 += T(d * p2[i])
			a3 += T(d * p3[i])
		}
		sums[t], sums[t+1], sums[t+2], sums[t+3] = a0, a1, a2, a3
	}
	for ; t < len(off); t++ {
		a, p := sums[t], P[off[t]:off[t]+len(D)]
		for i, d := range D {
			a += T(d * p[i])
		}
		sums[t] = a
	}
}
