package macos

import (
	"crypto/sha256"
	"debug/buildinfo"
	"debug/macho"
	"encoding/hex"
	"fmt"
	"io"
	"os"
)

// agentPackage is the Go package the guest agent is built from.
const agentPackage = "github.com/qoslab/qoslab/guest/agent"

// agentBuildHint is how to get a binary checkAgentBinary accepts.
const agentBuildHint = "build it with `make build` (bin/darwin-arm64/qoslab-agent) or " +
	"`GOOS=darwin GOARCH=arm64 CGO_ENABLED=0 go build -o qoslab-agent ./guest/agent`"

// lcCodeSignature is LC_CODE_SIGNATURE, which debug/macho does not name.
const lcCodeSignature = 0x1d

// AgentBinary is an agent executable checked for a macOS guest.
type AgentBinary struct {
	Path   string
	Size   int64
	SHA256 string
}

// checkAgentBinary makes sure path is the qoslab agent built for
// darwin/arm64, and signed: macOS on Apple silicon kills unsigned arm64
// code at exec, which in a LaunchDaemon would only show as a crash loop.
func checkAgentBinary(path string) (AgentBinary, error) {
	a := AgentBinary{Path: path}
	f, err := os.Open(path) //nolint:gosec // G304: the agent binary the user names
	if err != nil {
		return a, fmt.Errorf("agent binary: %w; %s", err, agentBuildHint)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return a, fmt.Errorf("agent binary: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return a, fmt.Errorf("agent binary %s is not a file; %s", path, agentBuildHint)
	}
	a.Size = fi.Size()
	if err := checkMachO(f, path); err != nil {
		return a, err
	}
	bi, err := buildinfo.Read(f)
	if err != nil {
		return a, fmt.Errorf("agent binary %s carries no Go build information (%w), so it is not the qoslab agent; %s", path, err, agentBuildHint)
	}
	if bi.Path != agentPackage {
		return a, fmt.Errorf("agent binary %s is %s, not the qoslab agent (%s); %s", path, bi.Path, agentPackage, agentBuildHint)
	}
	h := sha256.New()
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return a, fmt.Errorf("agent binary: %w", err)
	}
	if _, err := io.Copy(h, f); err != nil {
		return a, fmt.Errorf("agent binary: %w", err)
	}
	a.SHA256 = hex.EncodeToString(h.Sum(nil))
	return a, nil
}

// checkMachO accepts an arm64 Mach-O executable with a code signature,
// alone or as the arm64 slice of a universal binary.
func checkMachO(r io.ReaderAt, path string) error {
	m, err := macho.NewFile(r)
	if err != nil {
		fat, ferr := macho.NewFatFile(r)
		if ferr != nil {
			return fmt.Errorf("agent binary %s is not a macOS executable (%s); %s", path, describeFormat(r), agentBuildHint)
		}
		for _, arch := range fat.Arches {
			if arch.Cpu == macho.CpuArm64 {
				m = arch.File
			}
		}
		if m == nil {
			return fmt.Errorf("agent binary %s is a universal binary without an arm64 slice; %s", path, agentBuildHint)
		}
	}
	if m.Cpu != macho.CpuArm64 {
		return fmt.Errorf("agent binary %s is built for %s, not arm64 (Apple silicon); %s", path, cpuName(m.Cpu), agentBuildHint)
	}
	if m.Type != macho.TypeExec {
		return fmt.Errorf("agent binary %s is a Mach-O %s, not an executable; %s", path, m.Type, agentBuildHint)
	}
	for _, l := range m.Loads {
		raw := l.Raw()
		if len(raw) >= 4 && m.ByteOrder.Uint32(raw) == lcCodeSignature {
			return nil
		}
	}
	return fmt.Errorf("agent binary %s is not code-signed, and macOS on Apple silicon refuses to run unsigned arm64 code: "+
		"rebuild it with go build (which signs darwin/arm64 binaries ad hoc) or sign it with `codesign -s - %s`", path, path)
}

func cpuName(c macho.Cpu) string {
	switch c {
	case macho.CpuAmd64:
		return "amd64 (Intel)"
	case macho.CpuArm64:
		return "arm64"
	}
	return c.String()
}

// describeFormat names a non-Mach-O executable format, for the error.
func describeFormat(r io.ReaderAt) string {
	var magic [4]byte
	if _, err := r.ReadAt(magic[:], 0); err != nil {
		return "too short to be an executable"
	}
	switch {
	case string(magic[:]) == "\x7fELF":
		return "it is ELF: a Linux build"
	case string(magic[:2]) == "MZ":
		return "it is PE: a Windows build"
	case string(magic[:2]) == "#!":
		return "it is a script"
	}
	return "no Mach-O header"
}
