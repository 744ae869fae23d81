package macos

import (
	"bytes"
	"debug/macho"
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// must stops a test fixture's construction at an error that cannot
// happen (a write into memory, a file in the test's own directory).
func must(err error) {
	if err != nil {
		panic(err)
	}
}

// thinMachO is a 64-bit Mach-O header with, when signed, one
// LC_CODE_SIGNATURE load command: enough for debug/macho, not to run.
func thinMachO(cpu macho.Cpu, typ macho.Type, signed bool) []byte {
	var cmds bytes.Buffer
	ncmds := uint32(0)
	if signed {
		must(binary.Write(&cmds, binary.LittleEndian, []uint32{lcCodeSignature, 16, 0x1000, 0x100}))
		ncmds++
	}
	var b bytes.Buffer
	must(binary.Write(&b, binary.LittleEndian, []uint32{
		macho.Magic64, uint32(cpu), 0, uint32(typ), ncmds, uint32(cmds.Len()), 0, 0,
	}))
	b.Write(cmds.Bytes())
	return b.Bytes()
}

// fatMachO wraps thin files in a universal binary.
func fatMachO(slices map[macho.Cpu][]byte) []byte {
	var b bytes.Buffer
	must(binary.Write(&b, binary.BigEndian, []uint32{macho.MagicFat, uint32(len(slices))}))
	off := uint32(4096)
	var body bytes.Buffer
	for _, cpu := range []macho.Cpu{macho.CpuAmd64, macho.CpuArm64} {
		s, ok := slices[cpu]
		if !ok {
			continue
		}
		must(binary.Write(&b, binary.BigEndian, []uint32{uint32(cpu), 0, off + uint32(body.Len()), uint32(len(s)), 12}))
		body.Write(s)
		for body.Len()%4096 != 0 {
			body.WriteByte(0)
		}
	}
	out := make([]byte, off)
	copy(out, b.Bytes())
	return append(out, body.Bytes()...)
}

func writeBin(t *testing.T, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "qoslab-agent")
	require.NoError(t, os.WriteFile(p, b, 0o755))
	return p
}

func TestCheckMachO(t *testing.T) {
	for _, tc := range []struct {
		name string
		bin  []byte
		want string // "" accepts
	}{
		{"signed arm64 executable", thinMachO(macho.CpuArm64, macho.TypeExec, true), ""},
		{"unsigned", thinMachO(macho.CpuArm64, macho.TypeExec, false), "not code-signed"},
		{"Intel", thinMachO(macho.CpuAmd64, macho.TypeExec, true), "built for amd64 (Intel), not arm64"},
		{"a library", thinMachO(macho.CpuArm64, macho.TypeDylib, true), "not an executable"},
		{"universal with arm64", fatMachO(map[macho.Cpu][]byte{
			macho.CpuAmd64: thinMachO(macho.CpuAmd64, macho.TypeExec, true),
			macho.CpuArm64: thinMachO(macho.CpuArm64, macho.TypeExec, true),
		}), ""},
		{"universal without arm64", fatMachO(map[macho.Cpu][]byte{
			macho.CpuAmd64: thinMachO(macho.CpuAmd64, macho.TypeExec, true),
		}), "without an arm64 slice"},
		{"ELF", []byte("\x7fELF\x02\x01\x01\x00rest of a linux binary"), "it is ELF: a Linux build"},
		{"script", []byte("#!/bin/sh\necho hi\n"), "it is a script"},
		{"empty", nil, "too short"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkMachO(bytes.NewReader(tc.bin), "bin/qoslab-agent")
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), "bin/qoslab-agent")
		})
	}
}

func TestCheckAgentBinary(t *testing.T) {
	// A Mach-O that passes the format checks but is no Go program.
	_, err := checkAgentBinary(writeBin(t, thinMachO(macho.CpuArm64, macho.TypeExec, true)))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no Go build information")

	if runtime.GOOS == "linux" {
		self, err := os.Executable()
		require.NoError(t, err)
		_, err = checkAgentBinary(self)
		assert.ErrorContains(t, err, "ELF: a Linux build")
	}

	_, err = checkAgentBinary(filepath.Join(t.TempDir(), "missing"))
	require.Error(t, err)
	assert.ErrorIs(t, err, os.ErrNotExist)
	assert.Contains(t, err.Error(), "make build")

	_, err = checkAgentBinary(t.TempDir())
	assert.ErrorContains(t, err, "is not a file")
}

// TestCheckAgentBinaryBuilt checks the agent `make build` cross-built, when
// there is one: the real thing, with its Go build information and the
// linker's ad hoc signature.
func TestCheckAgentBinaryBuilt(t *testing.T) {
	p := filepath.Join("..", "..", "..", "bin", "darwin-arm64", "qoslab-agent")
	if _, err := os.Stat(p); err != nil {
		t.Skip("no bin/darwin-arm64/qoslab-agent; `make build` makes it")
	}
	a, err := checkAgentBinary(p)
	require.NoError(t, err)
	assert.Len(t, a.SHA256, 64)
	assert.Positive(t, a.Size)
}
