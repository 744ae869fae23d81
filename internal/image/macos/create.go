package macos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/qoslab/qoslab/internal/hv/vz"
)

// Disk policy. The disk is a sparse file, but the guest fills it over time
// and a host that runs out of space under a guest corrupts the guest's file
// system, so the whole size plus a margin (aux storage, config, slack) must
// be free before the install starts.
const (
	// minDiskBytes is qoslab's floor for a guest disk: the installer needs
	// room for the system, its snapshots and updates, and fails late (after
	// many minutes) when short.
	minDiskBytes int64 = 32 << 30
	// diskFreeMargin is what is required free beyond the disk size.
	diskFreeMargin uint64 = 2 << 30
	// defaultCPUs and defaultMemoryBytes apply when CreateOptions leaves them
	// 0, raised to what the restore image needs and capped at the host's
	// limits.
	defaultCPUs        = 4
	defaultMemoryBytes = 8 << 30
)

// memoryGranule is Virtualization.framework's rule: memory is a whole
// number of MiB. Disks are made in whole MiB too.
const memoryGranule = 1 << 20

// CreateOptions says what bundle to make from which restore image.
type CreateOptions struct {
	IPSW string // a local .ipsw file
	// Bundle is the directory to create. It must not exist: an existing
	// bundle is never touched.
	Bundle      string
	DiskBytes   int64
	CPUs        int    // 0: defaultCPUs within the allowed range
	MemoryBytes uint64 // 0: defaultMemoryBytes within the allowed range
	// Progress gets the installer's progress: a bar on a terminal, periodic
	// lines otherwise; nil is silent.
	Progress   io.Writer
	OnProgress func(Progress)
	// Framework defaults to hostFramework().
	Framework Framework
	// FreeSpace defaults to statfs on the bundle's parent directory.
	FreeSpace FreeSpaceFunc
	// Now defaults to time.Now; it stamps the bundle's created_at.
	Now func() time.Time
}

// createPlan is what planCreate checked: the values Create will use.
type createPlan struct {
	Image        RestoreImage
	Requirements requirements
	Limits       vz.Limits
	CPUs         int
	MemoryBytes  uint64
	DiskBytes    int64
	// NeedFree is what must be free beside the bundle.
	NeedFree uint64
}

// planCreate makes every check Create makes before its long step, and
// writes nothing: the restore image is one and this Mac can run it, the
// CPUs, memory and disk are in range, and there is room for the disk.
func planCreate(ctx context.Context, opts CreateOptions) (createPlan, error) {
	var plan createPlan
	fw := opts.Framework
	if fw == nil {
		var err error
		if fw, err = hostFramework(); err != nil {
			return plan, err
		}
	}
	if opts.Bundle == "" {
		return plan, errors.New("create macOS bundle: no bundle directory given")
	}
	if _, err := os.Lstat(opts.Bundle); err == nil {
		return plan, fmt.Errorf("macOS bundle %s already exists and qoslab never overwrites one: choose another name, or delete it first", opts.Bundle)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return plan, fmt.Errorf("macOS bundle %s: %w", opts.Bundle, err)
	}

	img, err := inspectIPSW(opts.IPSW)
	if err != nil {
		return plan, err
	}
	plan.Image = img
	req, err := fw.Requirements(ctx, opts.IPSW)
	if err != nil {
		return plan, fmt.Errorf("load %s (%s) with Virtualization.framework: %w", opts.IPSW, img, err)
	}
	if !req.Supported || len(req.HardwareModel) == 0 {
		return plan, unsupportedImageError(img, fw.HostVersion())
	}
	plan.Requirements = req
	plan.Limits = fw.Limits()

	if plan.CPUs, err = pickCPUs(opts.CPUs, req, plan.Limits, img); err != nil {
		return plan, err
	}
	if plan.MemoryBytes, err = pickMemory(opts.MemoryBytes, req, plan.Limits, img); err != nil {
		return plan, err
	}
	if err := checkDiskSize(opts.DiskBytes); err != nil {
		return plan, err
	}
	// Whole MiB, as hv/vz makes disks; the rounding is below a MiB.
	plan.DiskBytes = int64(roundUpMiB(uint64(opts.DiskBytes)))
	plan.NeedFree = uint64(plan.DiskBytes) + diskFreeMargin
	// The bundle's parent may not exist yet; it will be on the file system
	// of its nearest existing ancestor.
	parent := existingAncestor(filepath.Dir(opts.Bundle))
	if err := checkFreeSpace(opts.FreeSpace, parent, plan.NeedFree,
		fmt.Sprintf("a %s guest disk (the installer and the guest fill it; plus %s margin)",
			formatBytes(opts.DiskBytes), formatBytes(int64(diskFreeMargin)))); err != nil {
		return plan, err
	}
	return plan, nil
}

// Create makes a bundle from a restore image: planCreate's checks, then the
// installer (tens of minutes) in a staged bundle beside opts.Bundle, moved
// into place only once the install succeeded (vz.CreateBundle). A failed or
// cancelled install leaves nothing behind.
func Create(ctx context.Context, opts CreateOptions) (vz.Bundle, error) {
	if opts.Framework == nil {
		fw, err := hostFramework()
		if err != nil {
			return vz.Bundle{}, err
		}
		opts.Framework = fw
	}
	fw := opts.Framework
	if opts.Bundle != "" {
		if err := os.MkdirAll(filepath.Dir(opts.Bundle), 0o755); err != nil { //nolint:gosec // G301: the store of VM bundles, as hv/vz makes it; every file in a bundle is 0600
			return vz.Bundle{}, fmt.Errorf("create macOS bundle: %w", err)
		}
	}
	plan, err := planCreate(ctx, opts)
	if err != nil {
		return vz.Bundle{}, err
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	id, err := fw.NewMachineIdentifier()
	if err != nil {
		return vz.Bundle{}, fmt.Errorf("create macOS bundle: machine identifier: %w", err)
	}
	img := plan.Image
	nb := vz.NewBundle{
		Config: vz.BundleConfig{
			Kind:          vz.GuestMacOS,
			CPUs:          plan.CPUs,
			MemoryMiB:     int(plan.MemoryBytes / memoryGranule),
			DiskBytes:     plan.DiskBytes,
			MinCPUs:       plan.Requirements.MinCPUs,
			MinMemoryMiB:  int(roundUpMiB(plan.Requirements.MinMemory) / memoryGranule),
			CreatedAt:     now().UTC(),
			InstalledFrom: &vz.InstallSource{IPSW: absPath(opts.IPSW), Build: img.Build, OSVersion: img.Version},
		},
		HardwareModel:     plan.Requirements.HardwareModel,
		MachineIdentifier: id,
		Populate: func(ctx context.Context, staged *vz.Bundle) error {
			bar := newProgressBar(opts.Progress, "installing "+img.String(), unitFraction, opts.OnProgress)
			defer bar.finish()
			err := fw.Install(ctx, installTarget{
				IPSW: opts.IPSW, Disk: staged.Path(vz.DiskFile), Aux: staged.Path(vz.AuxFile),
				HardwareModel: staged.HardwareModel, MachineIdentifier: staged.MachineIdentifier,
				CPUs: plan.CPUs, MemoryBytes: plan.MemoryBytes,
			}, func(f float64) { bar.update(int64(min(max(f, 0), 1)*1000), 1000) })
			if err != nil && ctx.Err() != nil {
				return fmt.Errorf("install %s cancelled; nothing was kept: %w", img, ctx.Err())
			}
			if err != nil {
				return fmt.Errorf("install %s failed; nothing was kept: %w", img, err)
			}
			return nil
		},
	}
	return vz.CreateBundle(ctx, opts.Bundle, nb)
}

func unsupportedImageError(img RestoreImage, host string) error {
	imgMajor, _ := strconv.Atoi(strings.SplitN(img.Version, ".", 2)[0])
	hostMajor, _ := strconv.Atoi(strings.SplitN(host, ".", 2)[0])
	if imgMajor > 0 && hostMajor > 0 && imgMajor > hostMajor {
		return fmt.Errorf("%s (%s) cannot run on this Mac: its host runs macOS %s, and a macOS %d guest needs a macOS %d or newer host: "+
			"update the host, or use an older restore image (`qoslab image fetch macos --ipsw latest` picks one this Mac supports)",
			img, img.Path, host, imgMajor, imgMajor)
	}
	return fmt.Errorf("%s (%s) cannot run on this Mac (host macOS %s): Virtualization.framework supports none of its hardware models; "+
		"use another restore image (`qoslab image fetch macos --ipsw latest` picks one this Mac supports)", img, img.Path, host)
}

func pickCPUs(asked int, req requirements, lim vz.Limits, img RestoreImage) (int, error) {
	lo, hi := max(req.MinCPUs, lim.MinCPUs, 1), lim.MaxCPUs
	if hi < lo {
		return 0, fmt.Errorf("%s needs at least %d CPUs and this Mac allows at most %d: it cannot run here", img, lo, hi)
	}
	if asked == 0 {
		return min(max(defaultCPUs, lo), hi), nil
	}
	if asked < lo || asked > hi {
		return 0, fmt.Errorf("--cpus %d: allowed %d..%d (%s needs at least %d; this Mac allows at most %d)",
			asked, lo, hi, img, req.MinCPUs, hi)
	}
	return asked, nil
}

func pickMemory(asked uint64, req requirements, lim vz.Limits, img RestoreImage) (uint64, error) {
	lo, hi := max(req.MinMemory, lim.MinMemoryBytes), lim.MaxMemoryBytes
	if hi < lo {
		return 0, fmt.Errorf("%s needs at least %s of memory and this Mac allows at most %s: it cannot run here",
			img, formatBytes(int64(lo)), formatBytes(int64(hi)))
	}
	if asked == 0 {
		return min(max(defaultMemoryBytes, roundUpMiB(lo)), hi/memoryGranule*memoryGranule), nil
	}
	if asked < lo || asked > hi {
		return 0, fmt.Errorf("--memory %s: allowed %s..%s (%s needs at least %s; this Mac allows at most %s)",
			formatBytes(int64(asked)), formatBytes(int64(lo)), formatBytes(int64(hi)), img, formatBytes(int64(req.MinMemory)), formatBytes(int64(hi)))
	}
	if asked%memoryGranule != 0 {
		return 0, fmt.Errorf("--memory %d bytes: Virtualization.framework needs a whole number of MiB, e.g. %s", asked,
			formatBytes(int64(roundUpMiB(asked))))
	}
	return asked, nil
}

func checkDiskSize(n int64) error {
	if n < minDiskBytes {
		return fmt.Errorf("--disk %s: at least %s, so the installer does not run out of room late", formatBytes(n), formatBytes(minDiskBytes))
	}
	return nil
}

// roundUpMiB rounds n bytes up to a whole number of MiB (memoryGranule).
func roundUpMiB(n uint64) uint64 { return (n + memoryGranule - 1) / memoryGranule * memoryGranule }

// existingAncestor is dir, or its nearest ancestor that exists.
func existingAncestor(dir string) string {
	for {
		if _, err := os.Stat(dir); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			return dir
		}
		dir = up
	}
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
