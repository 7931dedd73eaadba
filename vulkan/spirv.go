//go:build (linux || darwin || freebsd) && (amd64 || arm64) && !novulkan

package vulkan

import (
	"github.com/pkg/errors"
)

// SPIR-V opcodes, capabilities and execution modes the float-controls patch reads or writes
// (SPIR-V 1.6 specification, §3; SPV_KHR_float_controls).
const (
	spvMagic                      = 0x07230203
	spvOpExtension                = 10
	spvOpEntryPoint               = 15
	spvOpExecutionMode            = 16
	spvOpCapability               = 17
	spvOpTypeFloat                = 22
	spvModeDenormPreserve         = 4459
	spvModeSignedZeroInfNanKeep   = 4461
	spvCapDenormPreserve          = 4464
	spvCapSignedZeroInfNanKeep    = 4466
	spvFloatControlsExtensionName = "SPV_KHR_float_controls"
)

// floatControls is what a device's VkPhysicalDeviceFloatControlsProperties allows: which
// float widths may keep subnormals (DenormPreserve) and the signs of zeros, infinities and
// NaNs (SignedZeroInfNanPreserve), and how independently the widths' denormal modes are set.
type floatControls struct {
	denorm, signedZero map[uint32]bool // by width in bits
	independence       uint32          // fcIndependence32Only, All or None
}

// execMode is one OpExecutionMode of the entry point with a single literal (a float width).
type execMode struct{ mode, width uint32 }

// floatModes chooses the execution modes a module whose float types have the given widths
// runs with on a device: SignedZeroInfNanPreserve for every width the device keeps those for,
// and DenormPreserve where the device allows it and the independence rule holds — with
// independence None every width of the module must get the same denormal mode (all preserve
// or none), with 32-bit-only the 32-bit mode is free and the other widths must agree.
func floatModes(widths []uint32, fc floatControls) []execMode {
	var modes []execMode
	for _, w := range widths {
		if fc.signedZero[w] {
			modes = append(modes, execMode{spvModeSignedZeroInfNanKeep, w})
		}
	}
	var others []uint32 // widths other than 32
	for _, w := range widths {
		if w != 32 {
			others = append(others, w)
		}
	}
	all := func(ws []uint32) bool {
		for _, w := range ws {
			if !fc.denorm[w] {
				return false
			}
		}
		return true
	}
	var keep []uint32
	switch fc.independence {
	case fcIndependenceAll:
		for _, w := range widths {
			if fc.denorm[w] {
				keep = append(keep, w)
			}
		}
	case fcIndependence32Only:
		for _, w := range widths {
			if w == 32 && fc.denorm[32] {
				keep = append(keep, w)
			}
		}
		if len(others) > 0 && all(others) {
			keep = append(keep, others...)
		}
	default: // None: all widths alike
		if all(widths) {
			keep = append(keep, widths...)
		}
	}
	for _, w := range keep {
		modes = append(modes, execMode{spvModeDenormPreserve, w})
	}
	return modes
}

// spvInstr is one instruction of a module: its opcode and its words (the first included).
type spvInstr struct {
	op    uint32
	words []uint32
}

// spvInstructions splits a module's words after the 5-word header into instructions.
func spvInstructions(words []uint32) ([]spvInstr, error) {
	if len(words) < 5 || words[0] != spvMagic {
		return nil, errors.Errorf("vulkan: SPIR-V: %d words without the magic number", len(words))
	}
	var out []spvInstr
	for i := 5; i < len(words); {
		n := int(words[i] >> 16)
		if n == 0 || i+n > len(words) {
			return nil, errors.Errorf("vulkan: SPIR-V: instruction at word %d has length %d (module has %d words)", i, n, len(words))
		}
		out = append(out, spvInstr{op: words[i] & 0xffff, words: words[i : i+n]})
		i += n
	}
	return out, nil
}

// floatWidths lists the widths of a module's OpTypeFloat declarations, in order.
func floatWidths(ins []spvInstr) []uint32 {
	var ws []uint32
	for _, in := range ins {
		if in.op == spvOpTypeFloat && len(in.words) >= 3 {
			ws = append(ws, in.words[2])
		}
	}
	return ws
}

// spvString encodes a literal string: its bytes, NUL-terminated, padded to whole words.
func spvString(s string) []uint32 {
	b := append([]byte(s), 0)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	w := make([]uint32, len(b)/4)
	for i := range w {
		w[i] = uint32(b[4*i]) | uint32(b[4*i+1])<<8 | uint32(b[4*i+2])<<16 | uint32(b[4*i+3])<<24
	}
	return w
}

// withFloatControls returns the module with the execution modes added to its single entry
// point, with their capabilities and the SPV_KHR_float_controls extension, in the places the
// SPIR-V logical layout requires (capabilities first, then extensions; execution modes after
// the entry points). A module without modes to add comes back unchanged.
func withFloatControls(words []uint32, modes []execMode) ([]uint32, error) {
	if len(modes) == 0 {
		return words, nil
	}
	ins, err := spvInstructions(words)
	if err != nil {
		return nil, err
	}
	entry, lastCap, lastExt, lastMode := -1, -1, -1, -1
	var entryID uint32
	for i, in := range ins {
		switch in.op {
		case spvOpCapability:
			lastCap = i
		case spvOpExtension:
			lastExt = i
		case spvOpEntryPoint:
			if entry >= 0 {
				return nil, errors.New("vulkan: SPIR-V: float controls: more than one entry point")
			}
			if len(in.words) < 3 {
				return nil, errors.Errorf("vulkan: SPIR-V: float controls: OpEntryPoint of %d words", len(in.words))
			}
			entry, entryID = i, in.words[2]
		case spvOpExecutionMode:
			lastMode = i
		}
	}
	if entry < 0 || lastCap < 0 {
		return nil, errors.New("vulkan: SPIR-V: float controls: no entry point or no capability")
	}
	caps := map[uint32]bool{}
	for _, in := range ins[:lastCap+1] {
		if in.op == spvOpCapability && len(in.words) == 2 {
			caps[in.words[1]] = true
		}
	}
	var newCaps, newModes []uint32
	for _, m := range modes {
		c := uint32(spvCapDenormPreserve)
		if m.mode == spvModeSignedZeroInfNanKeep {
			c = spvCapSignedZeroInfNanKeep
		}
		if !caps[c] {
			caps[c] = true
			newCaps = append(newCaps, 2<<16|spvOpCapability, c)
		}
		newModes = append(newModes, 4<<16|spvOpExecutionMode, entryID, m.mode, m.width)
	}
	name := spvString(spvFloatControlsExtensionName)
	ext := append([]uint32{uint32(1+len(name))<<16 | spvOpExtension}, name...)
	// After the capabilities come the extensions; the new one goes after the last existing
	// one (or right after the capabilities), the modes after the last mode or the entry point.
	extAfter := lastCap
	if lastExt > extAfter {
		extAfter = lastExt
	}
	modeAfter := entry
	if lastMode > modeAfter {
		modeAfter = lastMode
	}
	out := make([]uint32, 0, len(words)+len(newCaps)+len(ext)+len(newModes))
	out = append(out, words[:5]...)
	for i, in := range ins {
		out = append(out, in.words...)
		if i == lastCap {
			out = append(out, newCaps...)
		}
		if i == extAfter {
			out = append(out, ext...)
		}
		if i == modeAfter {
			out = append(out, newModes...)
		}
	}
	return out, nil
}
