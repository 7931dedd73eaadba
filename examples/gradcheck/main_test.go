package main

import (
	"bytes"
	"strings"
	"testing"

	"gorgonia.org/tensor"
)

// TestGradcheckTable: every graph passes for bulkad; the known Gorgonia bugs show up.
func TestGradcheckTable(t *testing.T) {
	rows, err := run(tensor.Float64, 4)
	if err != nil {
		t.Fatal(err)
	}
	wrong, second := map[string]bool{}, map[string]bool{}
	for _, r := range rows {
		if r.Bulkad != "ok" {
			t.Errorf("%s: bulkad %s (%s)", r.Graph, r.Bulkad, r.Error)
		}
		if r.Second != "ok" && !(r.Second == "skipped" && r.Graph == "convnet") {
			t.Errorf("%s: bulkad second order %s", r.Graph, r.Second)
		}
		if r.GorgSecond != "ok" {
			second[r.Graph] = true
		}
		if r.Gorgonia == "wrong" || r.Gorgonia == "failed" {
			wrong[r.Graph] = true
		}
	}
	for _, name := range []string{"log2", "inverseSqrt", "averagePool2D", "outerProd", "globalAveragePool2D"} {
		if !wrong[name] {
			t.Errorf("known Gorgonia bug in %s not reported", name)
		}
	}
	// Gorgonia's Grad applied twice: wrong on cube (3x for 6x), panics on softmax.
	for _, name := range []string{"cube", "softmax"} {
		if !second[name] {
			t.Errorf("known Gorgonia second-order bug in %s not reported", name)
		}
	}
	var b bytes.Buffer
	printTable(&b, rows)
	if !strings.Contains(b.String(), "bulkad matches finite differences on") {
		t.Errorf("table:\n%s", b.String())
	}
}

// TestParseFlags: -h opens with a line saying what the command does; bad values are refused
// before anything is checked.
func TestParseFlags(t *testing.T) {
	for _, c := range []struct {
		args     []string
		help     bool
		wantErr  string
		dt       tensor.Dtype
		probes   int
		wantJSON bool
	}{
		{args: []string{"-h"}, help: true},
		{args: nil, dt: tensor.Float64, probes: 12},
		{args: []string{"-dtype", "float32", "-probes", "3", "-json"}, dt: tensor.Float32, probes: 3, wantJSON: true},
		{args: []string{"-dtype", "int"}, wantErr: `-dtype "int"`},
		{args: []string{"-probes", "0"}, wantErr: "-probes 0"},
		{args: []string{"stray"}, wantErr: "stray"},
	} {
		var out bytes.Buffer
		got, help, err := parseFlags(c.args, &out)
		if help != c.help {
			t.Errorf("%v: help %v, want %v", c.args, help, c.help)
		}
		if c.help {
			if !strings.HasPrefix(out.String(), "Checks bulkad's gradients") || !strings.Contains(out.String(), "-probes") {
				t.Errorf("-h printed:\n%s", out.String())
			}
			continue
		}
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%v: error %v, want one containing %q", c.args, err, c.wantErr)
			}
			continue
		}
		if err != nil || got.dt != c.dt || got.probes != c.probes || got.asJSON != c.wantJSON {
			t.Errorf("%v: %+v, %v", c.args, got, err)
		}
	}
}
