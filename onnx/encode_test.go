package onnx

import (
	"strings"
	"testing"
)

// TestSetInitializers: the named float initializer gets the new values (read back by Decode),
// the others and the rest of the model are kept (the model lowers and computes with them),
// and misuse is an error naming the initializer.
func TestSetInitializers(t *testing.T) {
	ins := []tIn{
		{name: "x", shape: []int64{2}, data: []float64{1, 2}},
		{name: "w", shape: []int64{2}, data: []float64{3, 4}, init: true},
		{name: "b", shape: []int64{2}, data: []float64{5, 6}, init: true},
		{name: "k", shape: []int64{1}, ints: []int64{1}},
	}
	nodes := []tNode{{op: "Mul", ins: []string{"x", "w"}, outs: []string{"m"}}, {op: "Add", ins: []string{"m", "b"}, outs: []string{"y"}}}
	data := encModel(13, ins, nodes, []int64{2})
	out, err := SetInitializers(data, map[string]any{"w": []float64{-1, 0.5}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := Decode(out)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]float64{}
	for _, in := range m.Graph.Initializer {
		got[in.Name] = in.Floats
	}
	if w := got["w"]; len(w) != 2 || w[0] != -1 || w[1] != 0.5 {
		t.Errorf("w = %v, want [-1 0.5]", w)
	}
	if b := got["b"]; len(b) != 2 || b[0] != 5 || b[1] != 6 {
		t.Errorf("b = %v, want [5 6] (untouched)", b)
	}
	if len(m.Graph.Nodes) != 2 || m.Opsets[""] != 13 {
		t.Errorf("nodes %d, opset %d: the rest of the model changed", len(m.Graph.Nodes), m.Opsets[""])
	}
	cases := []struct {
		name   string
		values map[string]any
		want   string
	}{
		{"unknown", map[string]any{"nope": []float64{1}}, "nope: no initializer"},
		{"float32 into double", map[string]any{"w": []float32{1, 2}}, "DOUBLE"},
		{"length", map[string]any{"w": []float64{1, 2, 3}}, "given 3"},
		{"integer initializer", map[string]any{"k": []float64{1}}, "not a float initializer"},
		{"go type", map[string]any{"w": []int{1, 2}}, "want []float32 or []float64"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := SetInitializers(data, c.values); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one mentioning %q", err, c.want)
			}
		})
	}
	if _, err := SetInitializers(data[:len(data)-3], nil); err == nil {
		t.Error("a truncated model was rewritten without an error")
	}
}
