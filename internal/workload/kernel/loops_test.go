package kernel

import (
	"bufio"
	"math"
	"os"
	"runtime"
	"strings"
	"testing"
)

var loopCounts = []uint64{0, 1, 2, 3, 7, 55, 1000, 1_000_000}

func TestFPMatchesRef(t *testing.T) {
	for _, n := range loopCounts {
		got, want := FP(n), fpRef(n)
		if math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("FP(%d) = %v (%#x), FPRef = %v (%#x)", n, got, math.Float64bits(got), want, math.Float64bits(want))
		}
	}
	// Spot values that do not depend on either implementation.
	if got := FP(0); got != 10 {
		t.Errorf("FP(0) = %v, want 0+1+3+6 = 10", got)
	}
	if got := FP(1); got != 9 {
		t.Errorf("FP(1) = %v, want 1+1.5+2.5+4 = 9", got)
	}
	if got := FP(2); got != 8.5 {
		t.Errorf("FP(2) = %v, want 1.5+1.75+2.25+3 = 8.5", got)
	}
	if got := FP(1_000_000); got != 8 {
		t.Errorf("FP(1e6) = %v, want the converged 2+2+2+2 = 8", got)
	}
}

func TestIntMatchesRef(t *testing.T) {
	for _, n := range loopCounts {
		if got, want := Int(n), intRef(n); got != want {
			t.Errorf("Int(%d) = %#x, IntRef = %#x", n, got, want)
		}
	}
	if got := Int(0); got != 6 {
		t.Errorf("Int(0) = %d, want 0+1+2+3 = 6", got)
	}
	const m, k = intMul, intAdd
	var want uint64
	for _, x := range []uint64{0, 1, 2, 3} {
		want += x*m + k
	}
	if got := Int(1); got != want {
		t.Errorf("Int(1) = %#x, want %#x", got, want)
	}
}

// asmLoop is the body of a loop in an assembly function: the instructions
// after a label up to and including the branch back to it.
type asmLoop struct {
	label string
	insns []string // mnemonic and operands, comments stripped
}

// asmLoops parses file and returns the loops of function fn (TEXT ·fn(SB)).
func asmLoops(t *testing.T, file, fn string) []asmLoop {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var (
		in     bool
		found  bool
		body   []string           // instructions of fn, with labels as "label:"
		labels = map[string]int{} // label -> index in body
	)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "TEXT") {
			in = strings.Contains(line, "·"+fn+"(SB)")
			found = found || in
			continue
		}
		if !in {
			continue
		}
		if strings.HasSuffix(line, ":") {
			labels[strings.TrimSuffix(line, ":")] = len(body)
			continue
		}
		body = append(body, line)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if !found {
		t.Fatalf("%s: no TEXT ·%s(SB)", file, fn)
	}
	var loops []asmLoop
	for i, insn := range body {
		fields := strings.Fields(insn)
		if len(fields) != 2 {
			continue
		}
		// A branch to a label at or before it is a loop's back edge.
		if start, ok := labels[fields[1]]; ok && start <= i {
			loops = append(loops, asmLoop{label: fields[1], insns: body[start : i+1]})
		}
	}
	return loops
}

// memoryOperand reports why insn may access memory, or "" if it does not.
func memoryOperand(insn string) string {
	mnemonic, operands, _ := strings.Cut(insn, " ")
	if strings.Contains(operands, "(") {
		return "memory operand"
	}
	if runtime.GOARCH == "arm64" {
		switch {
		case strings.HasPrefix(mnemonic, "MOV"), strings.HasPrefix(mnemonic, "FMOV"),
			strings.HasPrefix(mnemonic, "LD"), strings.HasPrefix(mnemonic, "ST"),
			strings.HasPrefix(mnemonic, "FLD"), strings.HasPrefix(mnemonic, "FST"),
			strings.HasPrefix(mnemonic, "VLD"), strings.HasPrefix(mnemonic, "VST"):
			return "move, load or store instruction"
		}
	}
	return ""
}

func TestLoopsTouchNoMemory(t *testing.T) {
	// Per function: the instructions the loop must contain, and how often.
	var want map[string]map[string]int
	switch runtime.GOARCH {
	case "amd64":
		want = map[string]map[string]int{
			"FP":  {"MULSD": 4, "ADDSD": 4},
			"Int": {"IMULQ": 4, "ADDQ": 4},
		}
	case "arm64":
		want = map[string]map[string]int{
			"FP":  {"FMADDD": 4},
			"Int": {"MADD": 4},
		}
	default:
		t.Skipf("no assembly kernels on %s", runtime.GOARCH)
	}
	for fn, ops := range want {
		file := map[string]string{"FP": "fp", "Int": "int"}[fn] + "_" + runtime.GOARCH + ".s"
		loops := asmLoops(t, file, fn)
		if len(loops) != 1 {
			t.Errorf("%s: %s has %d loops, want 1", file, fn, len(loops))
			continue
		}
		l := loops[0]
		counts := map[string]int{}
		for _, insn := range l.insns {
			if why := memoryOperand(insn); why != "" {
				t.Errorf("%s: %s: loop %q: %q: %s", file, fn, l.label, insn, why)
			}
			counts[strings.Fields(insn)[0]]++
		}
		for op, n := range ops {
			if counts[op] != n {
				t.Errorf("%s: %s: loop %q has %d %s, want %d", file, fn, l.label, counts[op], op, n)
			}
		}
		t.Logf("%s: %s: loop %q: %s", file, fn, l.label, strings.Join(l.insns, "; "))
	}
}

func TestMemoryOperandDetection(t *testing.T) {
	if got := memoryOperand("MULSD 8(SP), X0"); got == "" {
		t.Error("MULSD 8(SP), X0 not flagged")
	}
	if got := memoryOperand("ADDSD X5, X0"); got != "" {
		t.Errorf("ADDSD X5, X0 flagged: %s", got)
	}
	if runtime.GOARCH == "arm64" {
		for _, insn := range []string{"FMOVD F1, F2", "LDP (R1), (R2, R3)", "MOVD R1, R2"} {
			if memoryOperand(insn) == "" {
				t.Errorf("%s not flagged", insn)
			}
		}
	}
}

func TestFPAllocs(t *testing.T) {
	if a := testing.AllocsPerRun(10, func() { FP(1000); Int(1000) }); a != 0 {
		t.Errorf("FP+Int allocate %v times per call", a)
	}
}
