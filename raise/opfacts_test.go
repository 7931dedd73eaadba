package raise

import (
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/bulkad/bulkad/core"
)

// funcName is the name of a Gorgonia function without its package path (Tanh for
// gorgonia.org/gorgonia.Tanh).
func funcName(f any) string {
	n := runtime.FuncForPC(reflect.ValueOf(f).Pointer()).Name()
	return n[strings.LastIndexByte(n, '.')+1:]
}

// TestNativeOpsInTable checks raise's native-op maps against core's op-facts table, both
// ways: an operation is mapped to a native Gorgonia op exactly when the table names that op
// as its Native.
func TestNativeOpsInTable(t *testing.T) {
	for _, op := range core.UnOps() {
		if _, ok := nativeUnary[op]; !ok && op.Facts().Native != core.NoNative {
			t.Errorf("unary %v: the op-facts table's Native is %q, raise has no native for it", op, op.Facts().Native)
		}
	}
	for _, op := range core.BinOps() {
		if _, ok := nativeBinary[op]; !ok && op.Facts().Native != core.NoNative {
			t.Errorf("binary %v: the op-facts table's Native is %q, raise has no native for it", op.Word(), op.Facts().Native)
		}
	}
	for op, f := range nativeUnary {
		if got, want := funcName(f.fn), op.Facts().Native; got != want {
			t.Errorf("unary %v: raise maps it to gorgonia.%s, the op-facts table's Native is %q", op, got, want)
		}
	}
	for op, f := range nativeBinary {
		if got, want := funcName(f.fn), op.Facts().Native; got != want {
			t.Errorf("binary %v: raise maps it to gorgonia.%s, the op-facts table's Native is %q", op.Word(), got, want)
		}
	}
	if core.NoNative == "" {
		t.Fatal("NoNative is empty")
	}
}
