package kernel

import (
	"errors"
	"testing"

	"github.com/bulkad/bulkad/core"
	"github.com/bulkad/bulkad/vulkan"
	pkgerrors "github.com/pkg/errors"
)

// TestVulkanDoneReports checks the fallback bookkeeping without a device: ErrUnsupported is
// silent, any other error is recorded and reported once.
func TestVulkanDoneReports(t *testing.T) {
	var reported []error
	v := &Vulkan{Report: func(err error) { reported = append(reported, err) }}
	if v.done("unary exp", pkgerrors.Wrap(vulkan.ErrUnsupported, "no shader")) {
		t.Fatal("an unsupported call counted as done")
	}
	if v.Err() != nil || len(reported) != 0 || v.Fallbacks() != 0 {
		t.Fatalf("ErrUnsupported was reported: err %v, reports %v", v.Err(), reported)
	}
	boom := errors.New("boom")
	for i := 0; i < 3; i++ {
		if v.done("matmul", boom) {
			t.Fatal("a failed call counted as done")
		}
	}
	if len(reported) != 1 || !errors.Is(v.Err(), boom) || v.Fallbacks() != 3 {
		t.Fatalf("reports %v, err %v, fallbacks %d; want one report of boom and 3 fallbacks", reported, v.Err(), v.Fallbacks())
	}
	if !v.done("matmul", nil) || v.Calls() != 1 {
		t.Fatalf("a successful call: calls %d", v.Calls())
	}
	var nilV *Vulkan
	if nilV.On() || nilV.Err() != nil || nilV.Calls() != 0 || nilV.Wants(core.Float32, "unary", "exp", 1<<30) {
		t.Fatal("a nil Vulkan is not off")
	}
}
