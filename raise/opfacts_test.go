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

// TestNativeOpsInTable checks raise's native-op maps against core's op-facts table: an
// operation is mapped to a native Gorgonia op only if the table names that op as its Native
// (the table lists what an operation may map to; raise may map fewer).
func TestNativeOpsInTable(t *testing.T) {
	for op, f := range nativeUnary {
		if got, want := funcName(f), op.Facts().Native; got != want {
			t.Errorf("unary %v: raise maps it to gorgonia.%s, the op-facts table's Native is %q", op, got, want)
		}
	}
	for op, f := range nativeBinary {
		if got, want := funcName(f), op.Facts().Native; got != want {
			t.Errorf("binary %v: raise maps it to gorgonia.%s, the op-facts table's Native is %q", op.Word(), got, want)
		}
	}
	if core.NoNative == "" {
		t.Fatal("NoNative is empty")
	}
}
