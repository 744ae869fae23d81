package macos

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"howett.net/plist"
)

// wholeDisk matches a whole disk's device node, not a partition's.
var wholeDisk = regexp.MustCompile(`^/dev/disk[0-9]+$`)

// hdiutilAttach is the part of `hdiutil attach -plist` read here.
type hdiutilAttach struct {
	SystemEntities []struct {
		DevEntry    string `plist:"dev-entry"`
		ContentHint string `plist:"content-hint"`
	} `plist:"system-entities"`
}

// attachedWholeDisk finds the device node of the disk `hdiutil attach
// -plist` made: the entry without a partition number (its content is the
// GUID partition scheme for a macOS guest's disk).
func attachedWholeDisk(out []byte) (string, error) {
	var a hdiutilAttach
	if _, err := plist.Unmarshal(out, &a); err != nil {
		return "", fmt.Errorf("read hdiutil's answer: %w", err)
	}
	var found []string
	for _, e := range a.SystemEntities {
		if wholeDisk.MatchString(e.DevEntry) {
			found = append(found, e.DevEntry)
		}
	}
	if len(found) != 1 {
		return "", fmt.Errorf("hdiutil attached %d whole disks (%s), want 1", len(found), strings.Join(found, ", "))
	}
	return found[0], nil
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
