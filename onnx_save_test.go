package bulkad

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/bulkad/bulkad/examples/opgraphs"
)

// savedRoundTrip imports a fixture, gives every parameter new values (2·w + 0.25, computed
// here), encodes it and imports the bytes again.
func savedRoundTrip(t *testing.T, name string) (*ONNXModel, *ONNXModel, map[string][]float64) {
	t.Helper()
	m, err := ImportONNXFile(filepath.Join("onnx", "testdata", name+".onnx"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]float64{}
	for i, p := range m.Params {
		d := p.Value().(*tensor.Dense)
		nd := d.Clone().(*tensor.Dense)
		var vals []float64
		switch x := nd.Data().(type) {
		case []float64:
			for j := range x {
				x[j] = 2*x[j] + 0.25
			}
			vals = append(vals, x...)
		case []float32:
			for j := range x {
				x[j] = 2*x[j] + 0.25
				vals = append(vals, float64(x[j]))
			}
		}
		if err := gorgonia.Let(p, nd); err != nil {
			t.Fatal(err)
		}
		want[m.ParamNames[i]] = vals
	}
	b, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	m2, err := ImportONNX(b)
	if err != nil {
		t.Fatalf("importing the encoded model: %v", err)
	}
	return m, m2, want
}

// TestONNXSaveRoundTrip: a model whose parameters were changed in Go encodes to an ONNX file
// that imports again with exactly those values and computes the same outputs (float64 and
// float32).
func TestONNXSaveRoundTrip(t *testing.T) {
	for _, name := range []string{"lenet_f64", "lenet_f32", "mlp_f32"} {
		t.Run(name, func(t *testing.T) {
			m, m2, want := savedRoundTrip(t, name)
			if len(m2.Params) != len(m.Params) {
				t.Fatalf("%d parameters after the round trip, want %d", len(m2.Params), len(m.Params))
			}
			for i, p := range m2.Params {
				got := opgraphs.Floats(p.Value())
				w := want[m2.ParamNames[i]]
				if len(got) != len(w) {
					t.Fatalf("%s: %d values, want %d", m2.ParamNames[i], len(got), len(w))
				}
				for j := range w {
					if got[j] != w[j] {
						t.Fatalf("%s[%d] = %v, want %v", m2.ParamNames[i], j, got[j], w[j])
					}
				}
			}
			in := m.Inputs[0].Value().(*tensor.Dense).Clone().(*tensor.Dense)
			switch x := in.Data().(type) {
			case []float64:
				for j := range x {
					x[j] = float64(j%7) - 3
				}
			case []float32:
				for j := range x {
					x[j] = float32(j%7) - 3
				}
			}
			var outs [2][]float64
			for k, mm := range []*ONNXModel{m, m2} {
				if err := gorgonia.Let(mm.Inputs[0], in.Clone()); err != nil {
					t.Fatal(err)
				}
				vm := gorgonia.NewTapeMachine(mm.Graph)
				if err := vm.RunAll(); err != nil {
					t.Fatal(err)
				}
				outs[k] = opgraphs.Floats(mm.Outputs[0].Value())
				vm.Close()
			}
			for j := range outs[0] {
				if outs[0][j] != outs[1][j] {
					t.Fatalf("output %d: %v before saving, %v after", j, outs[0][j], outs[1][j])
				}
			}
		})
	}
}

// TestONNXSaveReadByONNX: the saved file passes the onnx package's checker, and onnx's own
// reader finds the new parameter values in it (skipped without Debian's python3-onnx).
func TestONNXSaveReadByONNX(t *testing.T) {
	py := "/usr/bin/python3"
	if exec.Command(py, "-c", "import onnx, numpy").Run() != nil {
		t.Skip("no python3 with onnx and numpy (Debian: apt-get install python3-onnx)")
	}
	m, _, want := savedRoundTrip(t, "lenet_f32")
	path := filepath.Join(t.TempDir(), "saved.onnx")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	script := `import json, sys, onnx
from onnx import numpy_helper
m = onnx.load(sys.argv[1])
onnx.checker.check_model(m)
print(json.dumps({t.name: numpy_helper.to_array(t).astype("float64").ravel().tolist() for t in m.graph.initializer}))`
	out, err := exec.Command(py, "-c", script, path).CombinedOutput()
	if err != nil {
		t.Fatalf("onnx: %v\n%s", err, out)
	}
	var got map[string][]float64
	if err := json.Unmarshal([]byte(strings.TrimSpace(string(out))), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for name, w := range want {
		g := got[name]
		if len(g) != len(w) {
			t.Fatalf("%s: onnx reads %d values, want %d", name, len(g), len(w))
		}
		for j := range w {
			if g[j] != w[j] {
				t.Fatalf("%s[%d]: onnx reads %v, want %v", name, j, g[j], w[j])
			}
		}
	}
}

// TestONNXEncodeErrors: a model not made by ImportONNX cannot be encoded.
func TestONNXEncodeErrors(t *testing.T) {
	if _, err := (&ONNXModel{}).Encode(); err == nil {
		t.Error("a model without a source encoded")
	}
	if err := (&ONNXModel{}).Save(filepath.Join(t.TempDir(), "x.onnx")); err == nil {
		t.Error("a model without a source saved")
	}
}
