package macos

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"howett.net/plist"
)

// wholeDisk matches a whole disk's device node, not a partition's.
var wholeDisk = regexp.MustCompile(`^/dev/disk[0-9]+$`)

// apfsContainerScheme is the content hint of a disk that macOS synthesizes
// for an APFS container (diskutil's "APFS Container Scheme"): attaching a
// disk with APFS partitions makes one per partition, beside the image's own.
const apfsContainerScheme = "EF57347C-0000-11AA-AA11-00306543ECAC"

// hdiutilEntity is one disk, partition or volume in the system-entities of
// `hdiutil attach -plist` and of each image in `hdiutil info -plist`.
type hdiutilEntity struct {
	DevEntry    string `plist:"dev-entry"`
	ContentHint string `plist:"content-hint"`
	MountPoint  string `plist:"mount-point"`
	VolumeKind  string `plist:"volume-kind"`
}

// hdiutilAttach is the part of `hdiutil attach -plist` read here.
type hdiutilAttach struct {
	SystemEntities []hdiutilEntity `plist:"system-entities"`
}

// attachedDisks is what one attach made.
type attachedDisks struct {
	// Image is the image's own whole disk, /dev/diskN.
	Image string
	// Detach undoes the attach: the image's disk (detaching it detaches
	// the containers synthesized from it), or when that cannot be told,
	// every whole disk that is not a synthesized container, else every
	// whole disk listed.
	Detach []string
}

// imageDisk picks the image's own disk among the entities of one attached
// image: the whole disk that is not a synthesized APFS container (for a
// macOS guest's disk, the GUID partition scheme). Detach is set even when
// the pick fails.
func imageDisk(entities []hdiutilEntity) (attachedDisks, error) {
	var whole, own []string
	for _, e := range entities {
		if !wholeDisk.MatchString(e.DevEntry) {
			continue
		}
		whole = append(whole, e.DevEntry)
		if e.ContentHint != apfsContainerScheme {
			own = append(own, e.DevEntry)
		}
	}
	if len(own) != 1 {
		a := attachedDisks{Detach: own}
		if len(own) == 0 {
			a.Detach = whole
		}
		return a, fmt.Errorf("hdiutil attached %d disks that are not synthesized APFS containers (%s) among %d whole disks (%s), want 1: the image's own",
			len(own), strings.Join(own, ", "), len(whole), strings.Join(whole, ", "))
	}
	return attachedDisks{Image: own[0], Detach: own}, nil
}

// parseAttach reads `hdiutil attach -plist`: the disks the attach made.
func parseAttach(out []byte) (attachedDisks, error) {
	var a hdiutilAttach
	if _, err := plist.Unmarshal(out, &a); err != nil {
		return attachedDisks{}, fmt.Errorf("read hdiutil's answer: %w", err)
	}
	return imageDisk(a.SystemEntities)
}

// hdiutilInfo is the part of `hdiutil info -plist` read here.
type hdiutilInfo struct {
	Images []struct {
		ImagePath      string          `plist:"image-path"`
		SystemEntities []hdiutilEntity `plist:"system-entities"`
	} `plist:"images"`
}

// attachedFrom finds in `hdiutil info -plist` the disks that detach every
// attachment of the image at path (paths compared after resolving symlinks:
// hdiutil reports /private/tmp for /tmp).
func attachedFrom(out []byte, path string) ([]string, error) {
	var info hdiutilInfo
	if _, err := plist.Unmarshal(out, &info); err != nil {
		return nil, fmt.Errorf("read hdiutil's list of attached images: %w", err)
	}
	want := resolvedPath(path)
	var disks []string
	for _, img := range info.Images {
		if resolvedPath(img.ImagePath) != want {
			continue
		}
		a, _ := imageDisk(img.SystemEntities)
		disks = append(disks, a.Detach...)
	}
	return disks, nil
}

// resolvedPath is path with symlinks resolved, or cleaned when it cannot be.
func resolvedPath(path string) string {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	return filepath.Clean(path)
}

// apfsList is the part of `diskutil apfs list -plist` read here.
type apfsList struct {
	Containers []struct {
		ContainerReference string       `plist:"ContainerReference"`
		PhysicalStores     []apfsStore  `plist:"PhysicalStores"`
		Volumes            []apfsVolume `plist:"Volumes"`
	} `plist:"Containers"`
}

type apfsStore struct {
	DeviceIdentifier string `plist:"DeviceIdentifier"`
}

type apfsVolume struct {
	DeviceIdentifier string   `plist:"DeviceIdentifier"`
	Name             string   `plist:"Name"`
	Roles            []string `plist:"Roles"`
	FileVault        bool     `plist:"FileVault"`
	Locked           bool     `plist:"Locked"`
}

// findDataVolume finds the guest's Data volume: the volume with the Data
// role in the APFS container whose physical store is a partition of dev.
func findDataVolume(out []byte, dev string) (apfsVolume, error) {
	var l apfsList
	if _, err := plist.Unmarshal(out, &l); err != nil {
		return apfsVolume{}, fmt.Errorf("read diskutil's APFS list: %w", err)
	}
	partPrefix := strings.TrimPrefix(dev, "/dev/") + "s"
	var data []apfsVolume
	for _, c := range l.Containers {
		if !slices.ContainsFunc(c.PhysicalStores, func(s apfsStore) bool { return strings.HasPrefix(s.DeviceIdentifier, partPrefix) }) {
			continue
		}
		for _, v := range c.Volumes {
			if slices.Contains(v.Roles, "Data") {
				data = append(data, v)
			}
		}
	}
	switch {
	case len(data) == 0:
		return apfsVolume{}, errors.New("no macOS Data volume on it: macOS is not installed there (did `qoslab image create macos` finish?)")
	case len(data) > 1:
		var names []string
		for _, v := range data {
			names = append(names, v.DeviceIdentifier+" "+v.Name)
		}
		return apfsVolume{}, fmt.Errorf("%d Data volumes on it (%s): qoslab provisions a disk with one macOS", len(data), strings.Join(names, ", "))
	}
	v := data[0]
	if v.FileVault || v.Locked {
		return v, fmt.Errorf("its Data volume %s is encrypted with FileVault and cannot be written offline: provision the running guest with `--via ssh USER@ADDR`",
			v.DeviceIdentifier)
	}
	return v, nil
}
