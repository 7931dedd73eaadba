// Command asmgen writes package vmath's kernels from one description of each algorithm (an
// IR of IEEE operations, algs.go): the AVX2+FMA and AVX-512F assembly with avo
// (vmath_amd64.s and its stubs) and the scalar Go functions that compute the same operations in the same order
// (scalar_gen.go), so the two agree bit for bit. It is a separate module so that building
// bulkad needs neither avo nor this generator: run `go generate ./internal/vmath/` after
// changing it and commit the generated files.
package main

import (
	"flag"
	"os"
	"path/filepath"

	. "github.com/mmcloughlin/avo/build"
)

var goDir = flag.String("godir", "", "directory for the generated Go files")

func main() {
	flag.Parse()
	checkConsts()
	ConstraintExpr("amd64,!purego")
	var fns []*fn
	for _, alg := range []func(bool) *fn{algExp, algLog, algTanh, algSigmoid, algErf} {
		for _, f32 := range []bool{false, true} {
			fns = append(fns, alg(f32))
		}
	}
	for _, f := range fns {
		emitAsm(f, false)
		emitAsm(f, true)
	}
	if *goDir != "" {
		write := func(name string, b []byte) {
			if err := os.WriteFile(filepath.Join(*goDir, name), b, 0o644); err != nil {
				panic(err)
			}
		}
		write("scalar_gen.go", goFile(fns))
		write("slice_gen.go", sliceFile(fns))
		a, o := vecFiles(fns)
		write("vec_amd64_gen.go", a)
		write("vec_other_gen.go", o)
	}
	Generate()
}
