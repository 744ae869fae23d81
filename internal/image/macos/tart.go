package macos

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"time"

	"howett.net/plist"

	"github.com/qoslab/qoslab/internal/hv/vz"
)

// The files of a tart VM directory (tart's VMDirectory.swift).
const (
	tartConfigFile = "config.json"
	tartDiskFile   = "disk.img"
	tartNVRAMFile  = "nvram.bin" // the Mac's auxiliary storage
	tartStateFile  = "state.vzvmsave"
)

// tartConfigVersion is the config.json version tart writes (VMConfig.swift).
const tartConfigVersion = 1

// tartConfig is tart's config.json as VMConfig.swift and Platform/Darwin.swift
// decode it. Pointers tell a missing required key from a zero.
type tartConfig struct {
	Version       *int        `json:"version"`
	OS            *string     `json:"os"`   // absent means darwin
	Arch          *string     `json:"arch"` // absent means arm64
	CPUCountMin   *int        `json:"cpuCountMin"`
	CPUCount      *int        `json:"cpuCount"`
	MemorySizeMin *uint64     `json:"memorySizeMin"`
	MemorySize    *uint64     `json:"memorySize"`
	MACAddress    *string     `json:"macAddress"`
	Display       *tartScreen `json:"display"`
	DiskFormat    *string     `json:"diskFormat"` // absent means raw
	// ECID and HardwareModel are base64 data representations of
	// VZMacMachineIdentifier and VZMacHardwareModel.
	ECID          *string `json:"ecid"`
	HardwareModel *string `json:"hardwareModel"`
}

type tartScreen struct {
	Width  int    `json:"width"`
	Height int    `json:"height"`
	Unit   string `json:"unit,omitempty"` // pt or px
}

// tartVM is a checked tart VM directory, ready to import.
type tartVM struct {
	Dir               string
	CPUs, MinCPUs     int
	MemoryBytes       uint64
	MinMemoryBytes    uint64
	MACAddress        string
	DiskBytes         int64
	HardwareModel     []byte
	MachineIdentifier []byte
}

// inspectTart reads and checks a tart VM directory without changing it:
// every field qoslab uses and every file it copies.
func inspectTart(dir string) (tartVM, error) {
	vm := tartVM{Dir: dir}
	fi, err := os.Stat(dir)
	if err != nil {
		return vm, fmt.Errorf("tart VM: %w; pass the VM's directory (~/.tart/vms/NAME)", err)
	}
	if !fi.IsDir() {
		return vm, fmt.Errorf("tart VM %s is not a directory; pass the VM's directory (~/.tart/vms/NAME)", dir)
	}
	c, err := readTartConfig(dir)
	if err == nil {
		err = vm.takeConfig(c)
	}
	if err == nil {
		vm.DiskBytes, err = checkTartFiles(dir)
	}
	if err != nil {
		return vm, fmt.Errorf("tart VM %s: %w", dir, err)
	}
	return vm, nil
}

// readTartConfig reads dir's config.json and checks that it is tart's, of
// a macOS VM, with every key tart requires.
func readTartConfig(dir string) (tartConfig, error) {
	var c tartConfig
	b, err := os.ReadFile(filepath.Join(dir, tartConfigFile)) //nolint:gosec // G304: the tart VM directory the user names
	if errors.Is(err, fs.ErrNotExist) {
		return c, fmt.Errorf("no %s, so this is not a tart VM directory (~/.tart/vms/NAME)", tartConfigFile)
	}
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("%s is not tart's config (%w); the VM is damaged", tartConfigFile, err)
	}
	if c.Version == nil || *c.Version != tartConfigVersion {
		v := "none"
		if c.Version != nil {
			v = fmt.Sprint(*c.Version)
		}
		return c, fmt.Errorf("config version %s: qoslab reads tart's version %d", v, tartConfigVersion)
	}
	if c.OS != nil && *c.OS != "darwin" {
		return c, fmt.Errorf("os %q: qoslab imports macOS VMs (os \"darwin\"); it boots Linux guests from its own images", *c.OS)
	}
	if c.Arch != nil && *c.Arch != "arm64" {
		return c, fmt.Errorf("arch %q: macOS guests run on Apple silicon (arch \"arm64\") only", *c.Arch)
	}
	for _, f := range []struct {
		name    string
		present bool
	}{
		{"cpuCountMin", c.CPUCountMin != nil}, {"cpuCount", c.CPUCount != nil},
		{"memorySizeMin", c.MemorySizeMin != nil}, {"memorySize", c.MemorySize != nil},
		{"macAddress", c.MACAddress != nil}, {"ecid", c.ECID != nil}, {"hardwareModel", c.HardwareModel != nil},
	} {
		if !f.present {
			return c, fmt.Errorf("%s has no %q, which tart requires; the VM is damaged", tartConfigFile, f.name)
		}
	}
	return c, nil
}

// takeConfig checks the values of c (read by readTartConfig) that qoslab
// uses, and sets vm's fields from them.
func (vm *tartVM) takeConfig(c tartConfig) error {
	vm.CPUs, vm.MinCPUs = *c.CPUCount, *c.CPUCountMin
	if vm.MinCPUs < 1 || vm.CPUs < vm.MinCPUs {
		return fmt.Errorf("cpuCount %d with cpuCountMin %d: want 1 <= cpuCountMin <= cpuCount", vm.CPUs, vm.MinCPUs)
	}
	vm.MemoryBytes, vm.MinMemoryBytes = *c.MemorySize, *c.MemorySizeMin
	if vm.MinMemoryBytes == 0 || vm.MemoryBytes < vm.MinMemoryBytes {
		return fmt.Errorf("memorySize %d with memorySizeMin %d: want 0 < memorySizeMin <= memorySize", vm.MemoryBytes, vm.MinMemoryBytes)
	}
	if vm.MemoryBytes%memoryGranule != 0 {
		return fmt.Errorf("memorySize %d is not a whole number of MiB, which Virtualization.framework needs; set it with `tart set --memory`", vm.MemoryBytes)
	}
	if _, err := parseMAC(*c.MACAddress); err != nil {
		return fmt.Errorf("macAddress: %w", err)
	}
	vm.MACAddress = *c.MACAddress
	if c.DiskFormat != nil && *c.DiskFormat != "raw" {
		return fmt.Errorf("diskFormat %q: qoslab imports raw disks only (tart's default); create the image with `qoslab image create macos` instead", *c.DiskFormat)
	}
	var err error
	if vm.MachineIdentifier, err = decodePlatformData("ecid", *c.ECID); err != nil {
		return err
	}
	vm.HardwareModel, err = decodePlatformData("hardwareModel", *c.HardwareModel)
	return err
}

// checkTartFiles checks that the VM in dir is shut down (not suspended, not
// running) and has the files an import copies; it returns the disk's size.
func checkTartFiles(dir string) (diskBytes int64, err error) {
	if _, err := os.Lstat(filepath.Join(dir, tartStateFile)); err == nil {
		return 0, fmt.Errorf("it is suspended (%s): its disk is mid-flight; resume it and shut macOS down in tart (`tart run`), then import", tartStateFile)
	}
	if pid, err := tartRunningPID(filepath.Join(dir, tartConfigFile)); err != nil {
		return 0, err
	} else if pid != 0 {
		return 0, fmt.Errorf("it is running (tart pid %d): shut it down (`tart stop`) first, so its disk is not copied mid-write", pid)
	}
	for _, f := range []string{tartDiskFile, tartNVRAMFile} {
		fi, err := os.Stat(filepath.Join(dir, f))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return 0, fmt.Errorf("no %s, which tart keeps with every VM; the VM is damaged", f)
		case err != nil:
			return 0, err
		case !fi.Mode().IsRegular():
			return 0, fmt.Errorf("%s is not a regular file", f)
		case fi.Size() == 0:
			return 0, fmt.Errorf("%s is empty; the VM is damaged", f)
		}
		if f == tartDiskFile {
			diskBytes = fi.Size()
		}
	}
	return diskBytes, nil
}

// decodePlatformData decodes a base64 data representation and checks it is
// what Virtualization.framework writes: a property list holding a
// dictionary. Whether the framework accepts the values only a Mac can say.
func decodePlatformData(field, s string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("%s is not base64 (%w); the VM is damaged", field, err)
	}
	var v map[string]any
	if _, err := plist.Unmarshal(b, &v); err != nil || len(v) == 0 {
		return nil, fmt.Errorf("%s does not hold a Virtualization.framework data representation (a property list); the VM is damaged", field)
	}
	return b, nil
}

// parseMAC accepts a unicast 48-bit address, as VZMACAddress does.
func parseMAC(s string) (net.HardwareAddr, error) {
	mac, err := net.ParseMAC(s)
	if err != nil {
		return nil, fmt.Errorf("%q is not a MAC address", s)
	}
	if len(mac) != 6 {
		return nil, fmt.Errorf("%q is not a 48-bit MAC address", s)
	}
	if mac[0]&1 != 0 {
		return nil, fmt.Errorf("%q is a multicast address", s)
	}
	return mac, nil
}

// ImportTartOptions says which tart VM to import and where.
type ImportTartOptions struct {
	Dir string // the tart VM directory, e.g. ~/.tart/vms/NAME
	// Bundle is the directory to create; it must not exist.
	Bundle string
	// Progress gets the copy's progress when the disk cannot be cloned;
	// nil is silent.
	Progress   io.Writer
	OnProgress func(Progress)
	FreeSpace  FreeSpaceFunc
	Now        func() time.Time
}

// ImportTart makes a bundle from a tart VM, which it never changes: the
// disk and NVRAM are cloned copy-on-write where the file system can (APFS
// clonefile, a reflink on Linux) and copied otherwise, sparsely. They are
// never hard-linked: the guest writes its disk, and a link would write
// tart's. tart's MAC address is not kept: the bundle gets one of its own,
// as `tart clone` gives a clone its own, since the tart VM may still run on
// the same NAT network. tart's display is not kept either (nobody looks at
// a qoslab guest's).
func ImportTart(ctx context.Context, opts ImportTartOptions) (vz.Bundle, error) {
	vm, err := inspectTart(opts.Dir)
	if err != nil {
		return vz.Bundle{}, err
	}
	if opts.Bundle == "" {
		return vz.Bundle{}, errors.New("import tart VM: no bundle directory given")
	}
	if _, err := os.Lstat(opts.Bundle); err == nil {
		return vz.Bundle{}, fmt.Errorf("macOS bundle %s already exists and qoslab never overwrites one: choose another name, or delete it first", opts.Bundle)
	}
	if err := os.MkdirAll(filepath.Dir(opts.Bundle), 0o755); err != nil { //nolint:gosec // G301: the store of VM bundles, as hv/vz makes it; every file in a bundle is 0600
		return vz.Bundle{}, fmt.Errorf("import tart VM: %w", err)
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	nb := vz.NewBundle{
		Config: vz.BundleConfig{
			Kind:         vz.GuestMacOS,
			CPUs:         vm.CPUs,
			MemoryMiB:    int(vm.MemoryBytes / memoryGranule),
			DiskBytes:    vm.DiskBytes,
			MinCPUs:      vm.MinCPUs,
			MinMemoryMiB: int(roundUpMiB(vm.MinMemoryBytes) / memoryGranule),
			CreatedAt:    now().UTC(),
		},
		HardwareModel:     vm.HardwareModel,
		MachineIdentifier: vm.MachineIdentifier,
		Populate: func(ctx context.Context, staged *vz.Bundle) error {
			// CreateBundle made an empty disk; tart's takes its place.
			if err := os.Remove(staged.Path(vz.DiskFile)); err != nil {
				return err
			}
			for _, f := range []struct{ from, to string }{
				{filepath.Join(vm.Dir, tartNVRAMFile), staged.Path(vz.AuxFile)},
				{filepath.Join(vm.Dir, tartDiskFile), staged.Path(vz.DiskFile)},
			} {
				if err := cloneOrCopy(ctx, f.from, f.to, opts); err != nil {
					return fmt.Errorf("copy %s: %w", f.from, err)
				}
			}
			return nil
		},
	}
	return vz.CreateBundle(ctx, opts.Bundle, nb)
}

// cloneOrCopy makes to a copy of from: a copy-on-write clone when the file
// system can, else a sparse copy after checking there is room for it.
func cloneOrCopy(ctx context.Context, from, to string, opts ImportTartOptions) error {
	err := cloneFile(from, to)
	if err == nil {
		return nil
	}
	if !errors.Is(err, errors.ErrUnsupported) {
		return err
	}
	need, err := allocatedSize(from)
	if err != nil {
		return err
	}
	if err := checkFreeSpace(opts.FreeSpace, filepath.Dir(to), uint64(need),
		"copying "+filepath.Base(from)+" (this file system cannot clone it)"); err != nil {
		return err
	}
	return copySparse(ctx, from, to, newProgressBar(opts.Progress, "copying "+filepath.Base(from), unitBytes, opts.OnProgress))
}

// sparseChunk is the unit of a sparse copy: an all-zero chunk becomes a
// hole instead of written zeros.
const sparseChunk = 256 << 10

// copySparse copies from to a new file to, leaving holes for zero chunks, so
// a mostly empty guest disk stays mostly unallocated.
func copySparse(ctx context.Context, from, to string, bar *progressBar) (err error) {
	src, err := os.Open(from) //nolint:gosec // G304: a file of the tart VM the user names
	if err != nil {
		return err
	}
	defer src.Close()
	fi, err := src.Stat()
	if err != nil {
		return err
	}
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600) //nolint:gosec // G304: a file of the bundle being made
	if err != nil {
		return err
	}
	defer func() {
		if cerr := dst.Close(); err == nil {
			err = cerr
		}
	}()
	defer bar.finish()
	buf := make([]byte, sparseChunk)
	zero := make([]byte, sparseChunk)
	var off int64
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, rerr := io.ReadFull(src, buf)
		if n > 0 {
			if bytes.Equal(buf[:n], zero[:n]) {
				if _, err := dst.Seek(int64(n), io.SeekCurrent); err != nil {
					return err
				}
			} else if _, err := dst.Write(buf[:n]); err != nil {
				return err
			}
			off += int64(n)
			bar.update(off, fi.Size())
		}
		if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
			break
		}
		if rerr != nil {
			return rerr
		}
	}
	// A trailing hole needs the size set explicitly.
	if err := dst.Truncate(off); err != nil {
		return err
	}
	return dst.Sync()
}
