package guestinit

import (
	"errors"
	"fmt"
	"github.com/qoslab/qoslab/internal/guestchan"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// moduleError is a kernel module that would not load, said in the words that
// help fix the image.
type moduleError struct {
	// Module is the kernel's name for it (virtio_pci).
	Module string
	// Path is the file it was loaded from, inside the initramfs.
	Path string
	// Err is what finit_module returned.
	Err error
	// MissingSymbols are the symbols the kernel reported unknown, when it did:
	// they belong to a module that should have loaded before this one.
	MissingSymbols []string
	// KernelSaid is the kernel log's other lines about this module.
	KernelSaid []string
}

func (e *moduleError) Error() string {
	var why string
	switch {
	case len(e.MissingSymbols) > 0 || errors.Is(e.Err, syscall.ENOENT):
		why = "a module it depends on is not loaded"
		if len(e.MissingSymbols) > 0 {
			why += " (unknown symbols: " + strings.Join(e.MissingSymbols, ", ") + ")"
		}
		why += "; list its dependencies (modules.dep) before it in " + guestchan.ConfigPath
	case errors.Is(e.Err, syscall.ENOEXEC):
		why = "not a kernel module for this kernel and architecture (ENOEXEC); is the file truncated or from another build?"
	case errors.Is(e.Err, syscall.EINVAL):
		why = "the kernel refused it as invalid (EINVAL): usually a module built for another kernel version; take modules from the same kernel package as the kernel"
	case errors.Is(e.Err, syscall.EPERM):
		why = "module loading is not permitted (EPERM): is it disabled (kernel.modules_disabled) or is the kernel locked down?"
	default:
		why = e.Err.Error()
	}
	if len(e.KernelSaid) > 0 {
		why += "; kernel: " + strings.Join(e.KernelSaid, "; ")
	}
	return fmt.Sprintf("load module %s from %s: %s", e.Module, e.Path, why)
}

func (e *moduleError) Unwrap() error { return e.Err }

// moduleName is the kernel's name for the module in file path: the base name
// without .ko and a compression suffix, with '-' read as '_' as the kernel does.
func moduleName(path string) string {
	name := filepath.Base(path)
	for _, suffix := range []string{".xz", ".zst", ".gz"} {
		name = strings.TrimSuffix(name, suffix)
	}
	name = strings.TrimSuffix(name, ".ko")
	return strings.ReplaceAll(name, "-", "_")
}

// compressedModule tells whether the kernel must decompress the file itself
// (finit_module's MODULE_INIT_COMPRESSED_FILE).
func compressedModule(path string) bool {
	for _, suffix := range []string{".ko.xz", ".ko.zst", ".ko.gz"} {
		if strings.HasSuffix(path, suffix) {
			return true
		}
	}
	return false
}

// moduleLoadError turns finit_module's answer for the module in path into
// nil when the module is there after all (EEXIST: loaded before, or built
// in) or a moduleError that uses what the kernel logged meanwhile
// (kernelLog: message texts from /dev/kmsg).
func moduleLoadError(path string, err error, kernelLog []string) error {
	if err == nil || errors.Is(err, syscall.EEXIST) {
		return nil
	}
	e := &moduleError{Module: moduleName(path), Path: path, Err: err}
	prefix := e.Module + ": "
	for _, line := range kernelLog {
		rest, ok := strings.CutPrefix(line, prefix)
		if !ok {
			continue
		}
		// "virtio_pci: Unknown symbol vp_modern_probe (err -2)"
		if sym, ok := strings.CutPrefix(rest, "Unknown symbol "); ok {
			sym, _, _ = strings.Cut(sym, " ")
			e.MissingSymbols = append(e.MissingSymbols, sym)
			continue
		}
		e.KernelSaid = append(e.KernelSaid, rest)
	}
	return e
}

// kmsgRecord reads one /dev/kmsg record
// ("4,1234,5678901,-;virtio_pci: Unknown symbol x (err -2)\n SUBSYSTEM=..."):
// its time on the boot clock (the header's third field, in microseconds)
// and its message, the first line after the header's ';'.
func kmsgRecord(record string) (at time.Duration, msg string, ok bool) {
	header, msg, ok := strings.Cut(record, ";")
	if !ok {
		return 0, "", false
	}
	msg, _, _ = strings.Cut(msg, "\n")
	fields := strings.Split(header, ",")
	if len(fields) < 3 {
		return 0, "", false
	}
	us, err := strconv.ParseUint(fields[2], 10, 64)
	if err != nil {
		return 0, "", false
	}
	return time.Duration(us) * time.Microsecond, msg, true
}

// initRunMessage tells whether msg is the kernel's line for running init
// ("Run /init as init process").
func initRunMessage(msg string) bool {
	return strings.HasPrefix(msg, "Run ") && strings.HasSuffix(msg, " as init process")
}
