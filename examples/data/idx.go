package data

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"

	"github.com/pkg/errors"
)

// ReadIDX reads an IDX file (the format of the MNIST files: magic 0x00000800|type<<8|rank,
// big-endian dimension sizes, then the data). Only unsigned-byte data (type 0x08) is
// supported, which is what MNIST uses. Gzip-compressed input is detected by its magic bytes.
// It returns the dimensions and the raw bytes.
func ReadIDX(r io.Reader) (dims []int, vals []byte, err error) {
	br := bufio.NewReader(r)
	head, err := br.Peek(2)
	if err != nil {
		return nil, nil, errors.Wrap(err, "data: idx: reading header")
	}
	var src io.Reader = br
	if head[0] == 0x1f && head[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, errors.Wrap(err, "data: idx: gzip")
		}
		defer gz.Close()
		src = gz
	}
	var magic [4]byte
	if _, err := io.ReadFull(src, magic[:]); err != nil {
		return nil, nil, errors.Wrap(err, "data: idx: reading magic number")
	}
	if magic[0] != 0 || magic[1] != 0 {
		return nil, nil, errors.Errorf("data: idx: bad magic number % x (want 00 00 08 rank)", magic)
	}
	if magic[2] != 0x08 {
		return nil, nil, errors.Errorf("data: idx: element type 0x%02x not supported (only unsigned bytes, 0x08)", magic[2])
	}
	rank := int(magic[3])
	if rank == 0 || rank > 4 {
		return nil, nil, errors.Errorf("data: idx: rank %d not supported (1 to 4)", rank)
	}
	dims = make([]int, rank)
	n := 1
	for k := range dims {
		var d uint32
		if err := binary.Read(src, binary.BigEndian, &d); err != nil {
			return nil, nil, errors.Wrapf(err, "data: idx: reading dimension %d", k)
		}
		if d > 1<<26 {
			return nil, nil, errors.Errorf("data: idx: dimension %d is %d, too large", k, d)
		}
		dims[k] = int(d)
		n *= int(d)
	}
	if n > 1<<31 {
		return nil, nil, errors.Errorf("data: idx: %v elements, too large", dims)
	}
	vals = make([]byte, n)
	if _, err := io.ReadFull(src, vals); err != nil {
		return nil, nil, errors.Wrapf(err, "data: idx: reading %d data bytes for shape %v", n, dims)
	}
	return dims, vals, nil
}

// ReadIDXFile is ReadIDX on a file.
func ReadIDXFile(path string) ([]int, []byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, errors.Wrap(err, "data: idx")
	}
	defer f.Close()
	dims, vals, err := ReadIDX(f)
	return dims, vals, errors.Wrap(err, path)
}

// findIDX looks for base or base.gz in dir.
func findIDX(dir, base string) (string, error) {
	for _, name := range []string{base, base + ".gz"} {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", errors.Errorf("data: mnist: neither %s nor %s.gz in %s", base, base, dir)
}

// MNIST reads the MNIST training or test set ("train" or "t10k") from dir, which holds the
// usual files (train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-…), gzip-compressed or
// not. Pixel values are scaled to [0, 1].
func MNIST(dir, which string) (*Set, error) {
	if which != "train" && which != "t10k" {
		return nil, errors.Errorf("data: mnist: set %q unknown (train or t10k)", which)
	}
	ip, err := findIDX(dir, which+"-images-idx3-ubyte")
	if err != nil {
		return nil, err
	}
	lp, err := findIDX(dir, which+"-labels-idx1-ubyte")
	if err != nil {
		return nil, err
	}
	idims, ivals, err := ReadIDXFile(ip)
	if err != nil {
		return nil, err
	}
	ldims, lvals, err := ReadIDXFile(lp)
	if err != nil {
		return nil, err
	}
	if len(idims) != 3 || idims[1] != Side || idims[2] != Side {
		return nil, errors.Errorf("data: mnist: %s has shape %v, want [n 28 28]", ip, idims)
	}
	if len(ldims) != 1 || ldims[0] != idims[0] {
		return nil, errors.Errorf("data: mnist: %s has shape %v, want [%d]", lp, ldims, idims[0])
	}
	n := idims[0]
	s := &Set{Images: make([]float64, n*Pixels), Labels: make([]int, n), N: n}
	for i, b := range ivals {
		s.Images[i] = float64(b) / 255
	}
	for i, b := range lvals {
		if b > 9 {
			return nil, errors.Errorf("data: mnist: label %d of example %d out of range 0–9", b, i)
		}
		s.Labels[i] = int(b)
	}
	return s, nil
}
