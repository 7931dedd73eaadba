// float32 sin, cos and tan over the whole float range, without the builtins (whose Vulkan
// precision is absolute and only bounded on [-pi, pi]; lavapipe returns ±1 at 1e30).
//
// |x| <= pi/4 is evaluated directly; larger arguments are reduced exactly (Payne-Hanek):
// x·2/pi = q + f is formed from the 24-bit significand times 256 bits of 2/pi in 32-bit
// integer arithmetic, which gives the quadrant q mod 4 and 64 bits of the fraction f; then
// r = f·pi/2 (|r| <= pi/4, as 24+ significant bits) and Taylor polynomials of sin and cos on r.

// TWO_OVER_PI holds the first 256 bits of the fraction of 2/pi, most significant word first
// (checked against a 600-bit pi by TestTwoOverPiTable).
const uint TWO_OVER_PI[8] = uint[8](0xa2f9836eu, 0x4e441529u, 0xfc2757d1u, 0xf534ddc0u, 0xdb629599u,
	0x3c439041u, 0xfe5163abu, 0xdebbc561u);

// word32 is the 32-bit word of the product p (p[0] least significant, 9 words) whose lowest
// bit is bit b of p.
uint word32(uint p[9], int b) {
	int j = b >> 5;
	int s = b & 31;
	uint lo = j < 9 ? p[j] : 0u;
	uint hi = j + 1 < 9 ? p[j + 1] : 0u;
	return s == 0 ? lo : ((lo >> uint(s)) | (hi << uint(32 - s)));
}

// reduceTrig returns r, |r| <= pi/4, and sets q (mod 4) with a = q·pi/2 + r, for finite
// a >= pi/4.
float reduceTrig(float a, out uint q) {
	uint bits = floatBitsToUint(a);
	uint m = (bits & 0x7fffffu) | 0x800000u;     // a = m · 2^e
	int e = int(bits >> 23) - 150;
	uint p[9];                                   // m · TWO_OVER_PI as a 280-bit integer
	uint carry = 0u;
	for (int i = 7; i >= 0; i--) {
		uint hi, lo;
		umulExtended(TWO_OVER_PI[i], m, hi, lo);
		uint c;
		lo = uaddCarry(lo, carry, c);
		p[7 - i] = lo;
		carry = hi + c;
	}
	p[8] = carry;
	// a·2/pi = p · 2^(e-256): the units bit of the product is bit 256-e of p.
	int unit = 256 - e;
	q = word32(p, unit) & 3u;
	uint fhi = word32(p, unit - 32);
	uint flo = word32(p, unit - 64);
	bool neg = (fhi & 0x80000000u) != 0u; // f >= 1/2: round the quadrant up, r = (f-1)·pi/2
	if (neg) {
		q = (q + 1u) & 3u;
		fhi = ~fhi;
		flo = ~flo;
		uint c;
		flo = uaddCarry(flo, 1u, c);
		fhi += c;
	}
	int shift = 0;                               // normalise the 64-bit fraction
	if (fhi == 0u) {
		fhi = flo;
		flo = 0u;
		shift = 32;
	}
	if (fhi == 0u) {
		return 0.0;
	}
	int s = 31 - findMSB(fhi);
	if (s > 0) {
		fhi = (fhi << uint(s)) | (flo >> uint(32 - s));
		flo <<= uint(s);
	}
	shift += s;
	// f = (fhi + flo/2^32) · 2^-(32+shift); r = f · pi/2 with pi/2 = P1 + P2
	const float P1 = 1.57079637;
	const float P2 = -4.37113883e-08;
	float fa = float(fhi & 0xffffff00u);
	float fb = float(fhi & 0xffu) + float(flo >> 8) * (1.0 / 16777216.0);
	precise float r = fa * P1 + (fa * P2 + fb * P1);
	r = ldexp(r, -(32 + shift));
	return neg ? -r : r;
}

// sinPoly and cosPoly are the Taylor polynomials on |r| <= pi/4 (truncation below 1e-11).
float sinPoly(float r) {
	float r2 = r * r;
	return r + r * r2 * (-1.0 / 6.0 + r2 * (1.0 / 120.0 + r2 * (-1.0 / 5040.0 + r2 * (1.0 / 362880.0 +
		r2 * (-1.0 / 39916800.0)))));
}

float cosPoly(float r) {
	float r2 = r * r;
	float h = 0.5 * r2;
	float w = 1.0 - h;
	return w + (((1.0 - w) - h) + r2 * r2 * (1.0 / 24.0 + r2 * (-1.0 / 720.0 + r2 * (1.0 / 40320.0 +
		r2 * (-1.0 / 3628800.0 + r2 * (1.0 / 479001600.0))))));
}

// trigG is sin (which = 0), cos (1) or tan (2) of x. Below 2^-12, sin x and tan x round to x
// (which keeps -0 and subnormals) and cos x to 1.
float trigG(float x, uint which) {
	float a = abs(x);
	if (isnan(x) || isinf(x)) {
		return uintBitsToFloat(0x7fc00000u);
	}
	if (a < 0.000244140625) {
		return which == 1u ? 1.0 : x;
	}
	uint q = 0u;
	float r = a;
	if (a > 0.785398163) {
		r = reduceTrig(a, q);
	}
	float s = sinPoly(r);
	float c = cosPoly(r);
	float v;
	if (which == 0u) {
		v = (q & 1u) == 0u ? s : c;
		v = q >= 2u ? -v : v;
		return x < 0.0 ? -v : v;
	}
	if (which == 1u) {
		v = (q & 1u) == 0u ? c : s;
		return (q == 1u || q == 2u) ? -v : v;
	}
	v = (q & 1u) == 0u ? s / c : -c / s;
	return x < 0.0 ? -v : v;
}
