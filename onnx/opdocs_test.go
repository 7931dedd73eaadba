package onnx

import (
	"go/ast"
	"slices"
	"strings"
	"testing"

	"github.com/bulkad/bulkad/internal/testutil"
)

// TestOperatorDocs: every operator of SupportedOps has exactly one documentation entry and
// every entry documents a supported operator; the entries are well formed (versions, one
// line per table cell).
func TestOperatorDocs(t *testing.T) {
	supported := map[string]bool{}
	for _, op := range SupportedOps() {
		supported[op] = true
	}
	count := map[string]int{}
	for _, d := range opDocs() {
		count[d.op]++
		if !supported[d.op] {
			t.Errorf("%s is documented but not in SupportedOps", d.op)
		}
		if len(d.versions) == 0 || d.versions[0] > 18 {
			t.Errorf("%s: versions %v: want the operator's versions up to opset 18", d.op, d.versions)
		}
		for i, v := range d.versions {
			if v < 1 || v > 18 || i > 0 && v <= d.versions[i-1] {
				t.Errorf("%s: versions %v: want increasing opsets of 1 to 18", d.op, d.versions)
				break
			}
		}
		if d.deprecated != 0 && (d.deprecated <= d.versions[len(d.versions)-1] || d.deprecated <= 7) {
			t.Errorf("%s: deprecated at %d after versions %v", d.op, d.deprecated, d.versions)
		}
		if d.inputs == "" {
			t.Errorf("%s: no inputs documented", d.op)
		}
		cells := []string{d.inputs, d.notes}
		seen := map[string]bool{}
		for _, a := range d.attrs {
			if seen[a.name] {
				t.Errorf("%s: attribute %s documented twice", d.op, a.name)
			}
			seen[a.name] = true
			if a.values == "" {
				t.Errorf("%s: attribute %s without its values", d.op, a.name)
			}
			cells = append(cells, a.name, a.values)
		}
		for _, c := range cells {
			if strings.ContainsAny(c, "|\n`") || strings.Contains(c, "  ") || c != strings.TrimSpace(c) {
				t.Errorf("%s: %q: a table cell may hold no |, newline, backquote or stray space", d.op, c)
			}
		}
	}
	for _, op := range SupportedOps() {
		if count[op] != 1 {
			t.Errorf("%s is documented %d times, want once", op, count[op])
		}
	}
}

// TestOperatorTable: one row per supported operator, sorted, with the opsets worked out from
// the versions.
func TestOperatorTable(t *testing.T) {
	lines := strings.Split(strings.TrimSuffix(OperatorTable(), "\n"), "\n")
	ops := SupportedOps()
	if len(lines) != len(ops)+2 {
		t.Fatalf("%d lines for %d operators, want a header, a rule and one row each", len(lines), len(ops))
	}
	for i, op := range ops {
		row := lines[i+2]
		if !strings.HasPrefix(row, "| `"+op+"` | ") || strings.Count(row, " | ") != 4 {
			t.Errorf("row %d: %q, want operator %s and five cells", i, row, op)
		}
	}
	for op, want := range map[string]string{
		"Abs":                "7–18 (6, 13)",
		"LayerNormalization": "17–18 (17)",
		"Upsample":           "7–9 (7, 9); deprecated at 10",
		"Constant":           "7–18 (1, 9, 11, 12, 13)",
		"ReduceSum":          "7–18 (1, 11, 13)",
	} {
		i := slices.Index(ops, op)
		if cell := strings.Split(lines[i+2], " | ")[1]; cell != want {
			t.Errorf("%s: opsets %q, want %q", op, cell, want)
		}
	}
}

// undocumentedReads are the attributes a lowering function shared by several operators reads
// for an operator whose schema has no such attribute (its documentation leaves them out),
// each with the reason.
func undocumentedReads() map[string]map[string]string {
	const (
		resizeOnly = "opResize serves Resize and Upsample and reads it for Resize from opset 11 only"
		lstmOnly   = "opRecurrent serves RNN, GRU and LSTM; input_forget is LSTM's (an RNN or GRU node has none, so it reads the default)"
		gruOnly    = "opRecurrent serves RNN, GRU and LSTM; linear_before_reset is GRU's (an RNN or LSTM node has none, so it reads the default)"
		fmod       = "foldArith folds Add, Sub, Mul, Div, Mod and Pow and uses fmod for Mod only"
	)
	return map[string]map[string]string{
		"MaxPool":     {"count_include_pad": "opPool serves both pooling operators and uses it for AveragePool only"},
		"AveragePool": {"storage_order": "opPool serves both pooling operators and reads it for MaxPool only"},
		"Resize":      {"scales": "opResize serves Resize and Upsample and reads the scales attribute for Upsample before opset 9 only"},
		"Upsample": {
			"coordinate_transformation_mode": resizeOnly, "nearest_mode": resizeOnly, "cubic_coeff_a": resizeOnly,
			"exclude_outside": resizeOnly, "antialias": resizeOnly, "keep_aspect_ratio_policy": resizeOnly,
			"axes": "Resize-18's attribute, read at opset 18 whatever the operator (an Upsample node has none in its schema)",
		},
		"RNN":  {"input_forget": lstmOnly, "linear_before_reset": gruOnly},
		"GRU":  {"input_forget": lstmOnly},
		"LSTM": {"linear_before_reset": gruOnly},
		"Add":  {"fmod": fmod},
		"Sub":  {"fmod": fmod},
		"Mul":  {"fmod": fmod},
		"Div":  {"fmod": fmod},
		"Pow":  {"fmod": fmod},
	}
}

// TestOperatorDocsAttributes: the attributes documented for each operator are exactly those
// its lowering reads, as a scan of the package's source finds them (attrscan_test.go), less
// the exceptions of undocumentedReads.
func TestOperatorDocsAttributes(t *testing.T) {
	s := parseOwnSource(t)
	reads, problems := s.opReads(t)
	for _, op := range testutil.SortedKeys(problems) {
		for _, p := range problems[op] {
			t.Errorf("%s: %s", op, p)
		}
	}
	if got := testutil.SortedKeys(reads); !slices.Equal(got, SupportedOps()) {
		t.Fatalf("the scan found the operator tables' entries %v, want SupportedOps %v", got, SupportedOps())
	}
	for _, op := range testutil.SortedKeys(s.folds) {
		if _, ok := reads[op]; !ok {
			t.Errorf("foldFn folds %s, which no operator table holds", op)
		}
	}
	docs := map[string]opDoc{}
	for _, d := range opDocs() {
		docs[d.op] = d
	}
	exc := undocumentedReads()
	for _, op := range testutil.SortedKeys(exc) {
		if _, ok := reads[op]; !ok {
			t.Errorf("undocumentedReads names %s, which is not a supported operator", op)
		}
	}
	for _, op := range SupportedOps() {
		documented := map[string]bool{}
		for _, a := range docs[op].attrs {
			documented[a.name] = true
		}
		for _, a := range testutil.SortedKeys(reads[op]) {
			_, excused := exc[op][a]
			switch {
			case documented[a] && excused:
				t.Errorf("%s: attribute %q is both documented and in undocumentedReads", op, a)
			case !documented[a] && !excused:
				t.Errorf("%s: the lowering reads attribute %q, which its documentation (opdocs.go) does not list", op, a)
			}
		}
		for _, a := range testutil.SortedKeys(documented) {
			if !reads[op][a] {
				t.Errorf("%s: the documentation lists attribute %q, which the lowering does not read", op, a)
			}
		}
		for _, a := range testutil.SortedKeys(exc[op]) {
			if !reads[op][a] {
				t.Errorf("%s: undocumentedReads excuses attribute %q, which the lowering does not read", op, a)
			}
		}
	}
}

// TestAttrScanEarly: Lower's early pass reads no attribute itself, only through foldFn's
// functions and the extra roots (extraRoots), which the scan of each operator covers.
func TestAttrScanEarly(t *testing.T) {
	s := parseOwnSource(t)
	early := s.methods["early"]
	if len(early) != 1 {
		t.Fatalf("%d methods named early, want 1", len(early))
	}
	stop := map[string]bool{"foldFn": true}
	for _, op := range SupportedOps() {
		for _, f := range extraRoots(op) {
			stop[f] = true
		}
	}
	attrs, problems := s.reads([]ast.Node{early[0].Body}, stop)
	if len(attrs) > 0 || len(problems) > 0 {
		t.Errorf("early reads attributes %v outside foldFn and the extra roots (problems: %v): add its functions to extraRoots", testutil.SortedKeys(attrs), problems)
	}
}

// TestAttrScanForms: the scan on a small package of every form it recognises, and of the
// forms it must report.
func TestAttrScanForms(t *testing.T) {
	src := `package p

import "example.com/lower"

var opsA = map[string]opFn{
	"Lit":     opLit,
	"Call":    wrap(opInner),
	"Closure": func(c *ctx, n *Node, ins []value) ([]value, error) { return nil, helper(n) },
	"Index":   opIndex,
	"Range":   opRange,
	"Local":   opLocal,
	"Method":  opMethod,
	"Other":   opOther,
	"Folded":  opNone,
	"Bad":     opBad,
}

func opLit(c *ctx, n *Node, ins []value) ([]value, error) {
	_, _ = n.attrInt("a", 0), n.attrFloat("b", 0)
	_, _ = n.attrInts("c")
	return nil, nil
}

func wrap(f opFn) opFn { _ = n.attrInt("w", 0); return f }

func opInner(c *ctx, n *Node, ins []value) ([]value, error) { return nil, nil, n.attrInt("d", 0) }

func helper(n *Node) error { n.attrFloat("e", 0); return helper2(n) }

func helper2(n *Node) error { n.attrFloat("f", 0); return nil }

func opIndex(c *ctx, n *Node, ins []value) ([]value, error) {
	if a, ok := n.Attrs["g"]; ok {
		return nil, nil
	}
	return nil, nil
}

func opRange(c *ctx, n *Node, ins []value) ([]value, error) {
	for k, a := range n.Attrs {
		switch k {
		case "h", "i":
			return nil, nil
		}
	}
	return nil, nil
}

func opLocal(c *ctx, n *Node, ins []value) ([]value, error) {
	at := func(name string, def int) int {
		v, _ := n.attrInts(name)
		return len(v) + def
	}
	return nil, nil, at("j", 1) + at("k", 2)
}

func opMethod(c *ctx, n *Node, ins []value) ([]value, error) { return c.m(n) }

func (c *ctx) m(n *Node) ([]value, error) { return nil, nil, n.attrInt("l", 0) }

func opOther(c *ctx, n *Node, ins []value) ([]value, error) { return nil, nil, lower.Helper(), lower.m() }

func Helper() int { return n.attrInt("q", 0) }

func opNone(c *ctx, n *Node, ins []value) ([]value, error) { return nil, nil }

func foldFn(op string) foldFunc {
	switch op {
	case "Folded":
		return foldX
	}
	return nil
}

func foldX(c *ctx, n *Node, ins []value) ([]value, error) { return nil, nil, n.attrInt("z", 0) }

func opBad(c *ctx, n *Node, ins []value) ([]value, error) {
	name := "x"
	_ = n.attrInt(name, 0)
	_ = n.Attrs[name]
	all := n.Attrs
	return nil, nil
}
`
	s := parseSources(t, map[string][]byte{"p.go": []byte(src)})
	reads, problems := s.opReads(t)
	want := map[string][]string{
		"Lit": {"a", "b", "c"}, "Call": {"d", "w"}, "Closure": {"e", "f"}, "Index": {"g"}, "Range": {"h", "i"},
		"Local": {"j", "k"}, "Method": {"l"}, "Other": {}, "Folded": {"z"}, "Bad": {},
	}
	for op, w := range want {
		if got := testutil.SortedKeys(reads[op]); !slices.Equal(got, w) {
			t.Errorf("%s: read %v, want %v", op, got, w)
		}
	}
	if len(reads) != len(want) {
		t.Errorf("operators %v, want %d", testutil.SortedKeys(reads), len(want))
	}
	if len(problems) != 1 || len(problems["Bad"]) != 3 {
		t.Errorf("problems %v, want three for Bad", problems)
	}
}
