//go:build (linux || darwin || freebsd) && (amd64 || arm64) && !novulkan

package vulkan

import (
	"reflect"
	"strings"
	"testing"
)

func TestFloatModes(t *testing.T) {
	sz := func(w uint32) execMode { return execMode{spvModeSignedZeroInfNanKeep, w} }
	dp := func(w uint32) execMode { return execMode{spvModeDenormPreserve, w} }
	both := map[uint32]bool{32: true, 64: true}
	only32 := map[uint32]bool{32: true}
	only64 := map[uint32]bool{64: true}
	none := map[uint32]bool{}
	for _, c := range []struct {
		name       string
		widths     []uint32
		denorm, sz map[uint32]bool
		indep      uint32
		want       []execMode
	}{
		{"float32, everything allowed", []uint32{32}, both, both, fcIndependenceAll, []execMode{sz(32), dp(32)}},
		{"no float types", nil, both, both, fcIndependenceAll, nil},
		{"nothing allowed", []uint32{32, 64}, none, none, fcIndependenceAll, nil},
		{"signed zeros only", []uint32{32, 64}, none, both, fcIndependenceAll, []execMode{sz(32), sz(64)}},
		{"independent widths, 32 preserves", []uint32{32, 64}, only32, none, fcIndependenceAll, []execMode{dp(32)}},
		{"no independence, 64 cannot preserve", []uint32{32, 64}, only32, none, fcIndependenceNone, nil},
		{"no independence, both preserve", []uint32{32, 64}, both, none, fcIndependenceNone, []execMode{dp(32), dp(64)}},
		{"no independence, float32 alone", []uint32{32}, only32, none, fcIndependenceNone, []execMode{dp(32)}},
		{"32-bit only, 64 cannot", []uint32{32, 64}, only32, none, fcIndependence32Only, []execMode{dp(32)}},
		{"32-bit only, 64 alone", []uint32{32, 64}, only64, none, fcIndependence32Only, []execMode{dp(64)}},
		{"32-bit only, both", []uint32{32, 64}, both, only64, fcIndependence32Only, []execMode{sz(64), dp(32), dp(64)}},
	} {
		got := floatModes(c.widths, floatControls{denorm: c.denorm, signedZero: c.sz, independence: c.indep})
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: floatModes = %v, want %v", c.name, got, c.want)
		}
	}
}

// instr builds one instruction's words.
func instr(op uint32, operands ...uint32) []uint32 {
	return append([]uint32{uint32(1+len(operands))<<16 | op}, operands...)
}

func module(instrs ...[]uint32) []uint32 {
	w := []uint32{spvMagic, 0x00010000, 0, 100, 0}
	for _, in := range instrs {
		w = append(w, in...)
	}
	return w
}

// TestWithFloatControls patches a hand-written module and compares it with the module
// written by hand with the modes in place.
func TestWithFloatControls(t *testing.T) {
	const (
		opExtInstImport = 11
		opMemoryModel   = 14
		opName          = 5
		capShader       = 1
		capFloat64      = 10
		glCompute       = 5
		localSize       = 17
		main            = 4
	)
	ext := instr(spvOpExtension, spvString("SPV_KHR_float_controls")...)
	head := [][]uint32{instr(spvOpCapability, capShader), instr(spvOpCapability, capFloat64)}
	imp := instr(opExtInstImport, append([]uint32{1}, spvString("GLSL.std.450")...)...)
	rest := [][]uint32{
		imp,
		instr(opMemoryModel, 0, 1),
		instr(spvOpEntryPoint, append([]uint32{glCompute, main}, spvString("main")...)...),
		instr(spvOpExecutionMode, main, localSize, 64, 1, 1),
		instr(opName, append([]uint32{main}, spvString("main")...)...),
		instr(spvOpTypeFloat, 7, 32),
		instr(spvOpTypeFloat, 8, 64),
	}
	in := module(append(head, rest...)...)
	ins, err := spvInstructions(in)
	if err != nil {
		t.Fatal(err)
	}
	if w := floatWidths(ins); !reflect.DeepEqual(w, []uint32{32, 64}) {
		t.Fatalf("floatWidths = %v, want [32 64]", w)
	}
	modes := []execMode{{spvModeSignedZeroInfNanKeep, 32}, {spvModeDenormPreserve, 32}, {spvModeDenormPreserve, 64}}
	got, err := withFloatControls(in, modes)
	if err != nil {
		t.Fatal(err)
	}
	want := module(append(append(head,
		instr(spvOpCapability, spvCapSignedZeroInfNanKeep),
		instr(spvOpCapability, spvCapDenormPreserve),
		ext), append(rest[:4],
		instr(spvOpExecutionMode, main, spvModeSignedZeroInfNanKeep, 32),
		instr(spvOpExecutionMode, main, spvModeDenormPreserve, 32),
		instr(spvOpExecutionMode, main, spvModeDenormPreserve, 64),
		rest[4], rest[5], rest[6])...)...)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("patched module:\n got %v\nwant %v", got, want)
	}
	if same, err := withFloatControls(in, nil); err != nil || !reflect.DeepEqual(same, in) {
		t.Errorf("no modes: module changed (err %v)", err)
	}
	// a module that already has an extension: the new one follows it
	withExt := module(append(append(head, instr(spvOpExtension, spvString("SPV_KHR_storage_buffer_storage_class")...)), rest...)...)
	got, err = withFloatControls(withExt, modes[:1])
	if err != nil {
		t.Fatal(err)
	}
	gi, _ := spvInstructions(got)
	var ops []uint32
	for _, in := range gi[:6] {
		ops = append(ops, in.op)
	}
	if want := []uint32{spvOpCapability, spvOpCapability, spvOpCapability, spvOpExtension, spvOpExtension, opExtInstImport}; !reflect.DeepEqual(ops, want) {
		t.Errorf("with an extension: opcodes %v, want %v", ops, want)
	}
	for _, bad := range []struct {
		name  string
		words []uint32
	}{
		{"bad magic", []uint32{1, 2, 3, 4, 5}},
		{"truncated instruction", append(module(head...), 5<<16|spvOpCapability)},
		{"zero-length instruction", append(module(head...), 0)},
		{"no entry point", module(head...)},
		{"two entry points", module(append(head, rest[2], rest[2])...)},
	} {
		if _, err := withFloatControls(bad.words, modes); err == nil {
			t.Errorf("%s: no error", bad.name)
		}
	}
}

// layoutSection is an instruction's place in SPIR-V's logical layout (§2.4) up to the
// execution modes; everything after them is 6.
func layoutSection(op uint32) int {
	switch op {
	case spvOpCapability:
		return 0
	case spvOpExtension:
		return 1
	case 11: // OpExtInstImport
		return 2
	case 14: // OpMemoryModel
		return 3
	case spvOpEntryPoint:
		return 4
	case spvOpExecutionMode, 331: // OpExecutionModeId
		return 5
	}
	return 6
}

// TestEmbeddedFloatControls patches every embedded shader with every mode for its float
// widths: the result keeps the original instructions in order, adds each capability once,
// the extension and one mode per width and kind, and follows the logical layout.
func TestEmbeddedFloatControls(t *testing.T) {
	ents, err := spirv.ReadDir("shaders")
	if err != nil {
		t.Fatal(err)
	}
	all := floatControls{denorm: map[uint32]bool{32: true, 64: true}, signedZero: map[uint32]bool{32: true, 64: true}, independence: fcIndependenceAll}
	for _, e := range ents {
		name := strings.TrimSuffix(e.Name(), ".spv")
		w, err := shaderWords(name)
		if err != nil {
			t.Fatal(err)
		}
		orig, err := spvInstructions(w)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		widths := floatWidths(orig)
		p, err := withFloatControls(w, floatModes(widths, all))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := spvInstructions(p)
		if err != nil {
			t.Fatalf("%s: patched: %v", name, err)
		}
		added := 0
		if len(widths) > 0 {
			added = 2 + 1 + 2*len(widths) // two capabilities, the extension, two modes a width
		}
		if len(got) != len(orig)+added {
			t.Errorf("%s: %d instructions, want %d + %d", name, len(got), len(orig), added)
		}
		k := 0
		for _, in := range got {
			if k < len(orig) && reflect.DeepEqual(in.words, orig[k].words) {
				k++
			}
		}
		if k != len(orig) {
			t.Errorf("%s: only %d of %d original instructions kept in order", name, k, len(orig))
		}
		sec := 0
		for i, in := range got {
			s := layoutSection(in.op)
			if s < sec {
				t.Errorf("%s: instruction %d (opcode %d) out of the logical layout", name, i, in.op)
				break
			}
			sec = s
		}
	}
}
