package core

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/pkg/errors"
)

// Resource limits. Every shape in a program is static, so the bytes of every array an
// evaluator or a raiser would allocate are known before anything runs: CheckArrayLimit walks a
// program once and refuses it, naming the term and its size, when one of its arrays is larger
// than the limit. The limit protects the process: Go cannot recover from running out of
// memory, so a program whose shapes are wrong by a few orders of magnitude must fail with an
// error before its first allocation, not kill the process.

// ArrayLimitEnv is the environment variable that sets the array limit in bytes (a plain
// integer, or with a suffix K, M, G or T for powers of 1024; 0 or "off" disables the check).
const ArrayLimitEnv = "BULKAD_MAX_ARRAY_BYTES"

// MaxAddressableBytes is the largest array the parser accepts: Go's runtime cannot allocate
// more than 2^48 bytes (256 TiB) on 64-bit platforms, so a type whose byte size is larger
// cannot denote an array at all.
const MaxAddressableBytes = int64(1) << 48

// fallbackArrayLimit is the limit when physical memory cannot be read (4 GiB).
const fallbackArrayLimit = int64(4) << 30

// ArrayLimit returns the array limit in bytes that Compile, Eval and the raiser apply: the
// value of BULKAD_MAX_ARRAY_BYTES when set (0 or "off": no limit, reported as -1), otherwise
// a quarter of the physical memory (MemTotal in /proc/meminfo; 4 GiB when that cannot be
// read). A malformed value of the variable gives an error.
func ArrayLimit() (int64, error) {
	if s, ok := os.LookupEnv(ArrayLimitEnv); ok && strings.TrimSpace(s) != "" {
		n, err := parseBytes(s)
		if err != nil {
			return 0, errors.Wrapf(err, "core: limits: %s=%q", ArrayLimitEnv, s)
		}
		if n == 0 {
			return -1, nil
		}
		return n, nil
	}
	if m, ok := physicalMemory(); ok {
		return m / 4, nil
	}
	return fallbackArrayLimit, nil
}

// parseBytes reads "123", "64M", "2G", "off".
func parseBytes(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if strings.EqualFold(s, "off") {
		return 0, nil
	}
	mult := int64(1)
	if k := len(s); k > 0 {
		switch s[k-1] {
		case 'k', 'K':
			mult = 1 << 10
		case 'm', 'M':
			mult = 1 << 20
		case 'g', 'G':
			mult = 1 << 30
		case 't', 'T':
			mult = 1 << 40
		}
		if mult != 1 {
			s = s[:k-1]
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, errors.New("want a non-negative number of bytes, optionally with suffix K, M, G or T")
	}
	if n > (1<<62)/mult {
		return 0, errors.New("number of bytes out of range")
	}
	return n * mult, nil
}

// physicalMemory reads MemTotal from /proc/meminfo (Linux); ok is false elsewhere.
func physicalMemory() (int64, bool) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) >= 2 && fs[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fs[1], 10, 64)
			if err != nil || kb <= 0 {
				return 0, false
			}
			return kb << 10, true
		}
	}
	return 0, false
}

// elemBytes is the storage size of one element of d.
func elemBytes(d Dtype) int64 {
	switch d {
	case Float32:
		return 4
	case Bool:
		return 1
	}
	return 8
}

// TypeBytes returns the bytes of an array of type t, saturating at math.MaxInt64.
func TypeBytes(t Type) int64 {
	const max = int64(^uint64(0) >> 1)
	n := elemBytes(t.Dtype)
	for _, k := range t.Shape {
		if k == 0 {
			return 0
		}
		if n > max/int64(k) {
			n = max
			continue
		}
		n *= int64(k)
	}
	return n
}

// FormatBytes renders a byte count with a binary unit (e.g. "7.3 TiB").
func FormatBytes(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	f, u := float64(n), 0
	for f >= 1024 && u < len(units)-1 {
		f /= 1024
		u++
	}
	if u == 0 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.1f %s", f, units[u])
}

// CheckArrayLimit returns an error naming the first term of p (in post-order) whose array
// is larger than limit bytes; a negative limit disables the check. Parameters are not
// checked (their arrays exist already). what names the operation
// for the error prefix (e.g. "core: eval").
func CheckArrayLimit(p *Program, limit int64, what string) error {
	if p == nil || limit < 0 {
		return nil
	}
	var bad Term
	var badBytes int64
	PostOrder(p.Body, func(t Term) {
		if bad != nil {
			return
		}
		switch t.(type) {
		case *Tuple, *Var: // a variable denotes an array allocated by its binder or the caller
			return
		}
		if b := TypeBytes(t.Type()); b > limit {
			bad, badBytes = t, b
		}
	})
	if bad != nil {
		return limitError(what, "term "+abbrev(termString(bad), 120), bad.Type(), badBytes, limit)
	}
	return nil
}

func limitError(what, name string, t Type, b, limit int64) error {
	return errors.Errorf("%s: %s : %v needs %s, above the array limit of %s (set %s to raise it)",
		what, name, t, FormatBytes(b), FormatBytes(limit), ArrayLimitEnv)
}

// abbrev shortens s to at most n bytes (on a rune boundary), marking the cut with "…".
func abbrev(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// checkLimit applies the environment's array limit (ArrayLimit) to p.
func checkLimit(p *Program, what string) error {
	limit, err := ArrayLimit()
	if err != nil {
		return err
	}
	return CheckArrayLimit(p, limit, what)
}
