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
	var usage bytes.Buffer
	if _, help, err := parseFlags([]string{"-h"}, &usage); !help || err != nil ||
		!strings.HasPrefix(usage.String(), "Checks bulkad's gradients") || !strings.Contains(usage.String(), "-probes") {
		t.Errorf("-h: help %v, error %v, usage:\n%s", help, err, usage.String())
	}
	for _, c := range []struct {
		args    []string
		want    command
		wantErr string // "" for success
	}{
		{nil, command{dt: tensor.Float64, probes: 12}, ""},
		{[]string{"-dtype", "float32", "-probes", "3", "-json"}, command{asJSON: true, dt: tensor.Float32, probes: 3}, ""},
		{[]string{"-dtype", "int"}, command{}, `-dtype "int"`},
		{[]string{"-probes", "0"}, command{}, "-probes 0"},
		{[]string{"stray"}, command{}, "stray"},
	} {
		got, _, err := parseFlags(c.args, &bytes.Buffer{})
		switch {
		case c.wantErr == "" && (err != nil || got != c.want):
			t.Errorf("%v: %+v, %v; want %+v", c.args, got, err, c.want)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%v: error %v, want one containing %q", c.args, err, c.wantErr)
		}
	}
}
