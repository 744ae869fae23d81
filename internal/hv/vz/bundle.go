package vz

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/qoslab/qoslab/internal/atomicfile"
	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/version"
)

// The files of a VM bundle: a directory that holds one macOS guest between
// boots. config.json is written last when a bundle is made, so a bundle
// whose creation was interrupted has none and is refused.
const (
	BundleConfigFile = "config.json"
	DiskFile         = "disk.img" // the guest's disk, raw
	AuxFile          = "aux.img"  // the Mac's auxiliary storage (its NVRAM)
	// hardwareModelFile and machineIdentifierFile are the names a new
	// bundle's config.json gives the platform's data.
	hardwareModelFile     = "hardware-model.bin"
	machineIdentifierFile = "machine-identifier.bin"
)

// bundleSchema is the schema of config.json: readers refuse another major
// and read a newer minor, which only adds fields. 1.1 added mac_address.
const bundleSchema = "1.1"

// bundleSchemaMajor is bundleSchema's major.
const bundleSchemaMajor = 1

// bundleCreateCommand is how a user makes a macOS bundle, for errors that
// tell them to make one again.
const bundleCreateCommand = "qoslab image create macos"

// maxPlatformData bounds the hardware model and machine identifier files,
// which Virtualization.framework writes in a few hundred bytes: a larger
// file is not one of them.
const maxPlatformData = 1 << 20

// GuestKind is the operating system a bundle holds.
type GuestKind string

// The guest kinds of config.json. Linux guests boot from qoslab images
// (kernel and initramfs) rather than bundles, so OpenBundle refuses a
// linux bundle; the kind is in the schema so that one can come without a
// new major.
const (
	GuestMacOS = GuestKind(hv.OSMacOS)
	guestLinux = GuestKind(hv.OSLinux)
)

// InstallSource is the restore image (IPSW) a bundle's macOS was installed
// from.
type InstallSource struct {
	IPSW      string `json:"ipsw"`                 // the file or URL
	Build     string `json:"build,omitempty"`      // e.g. 23E214
	OSVersion string `json:"os_version,omitempty"` // e.g. 14.4
	SHA256    string `json:"sha256,omitempty"`
}

// BundleConfig is config.json.
type BundleConfig struct {
	SchemaVersion string    `json:"schema_version"`
	Kind          GuestKind `json:"kind"`
	// CPUs and MemoryMiB are what the guest boots with unless a start asks
	// for other values.
	CPUs      int   `json:"cpus"`
	MemoryMiB int   `json:"memory_mib"`
	DiskBytes int64 `json:"disk_bytes"` // disk.img's size when it was made
	// MinCPUs and MinMemoryMiB are what the installed macOS needs (the
	// restore image's minimum supported configuration); 0 for no more than
	// the framework's own minimum.
	MinCPUs      int `json:"min_cpus,omitempty"`
	MinMemoryMiB int `json:"min_memory_mib,omitempty"`
	// HardwareModel and MachineIdentifier name the files in the bundle
	// that hold the platform's data (VZMacHardwareModel and
	// VZMacMachineIdentifier dataRepresentation).
	HardwareModel     string `json:"hardware_model"`
	MachineIdentifier string `json:"machine_identifier"`
	// MACAddress is the guest's network device's, made once when the
	// bundle is (or on the first boot of a bundle made before 1.1) and
	// used on every boot, so the guest sees one NIC, as tart keeps
	// macAddress in its config.json.
	MACAddress    string         `json:"mac_address,omitempty"`
	CreatedBy     string         `json:"created_by"`
	CreatedAt     time.Time      `json:"created_at"`
	InstalledFrom *InstallSource `json:"installed_from,omitempty"`
}

// Bundle is a checked VM bundle, with its platform data read.
type Bundle struct {
	Dir               string
	Config            BundleConfig
	HardwareModel     []byte
	MachineIdentifier []byte
}

// Path is the path of a file in the bundle.
func (b Bundle) Path(file string) string { return filepath.Join(b.Dir, file) }

// Image is the hv.Image that boots the bundle: a Spec whose Image has a
// Dir and no Kernel is a bundle.
func (b Bundle) Image() hv.Image {
	img := hv.Image{Name: filepath.Base(b.Dir), Dir: b.Dir, Arch: "arm64", OS: hv.OSMacOS}
	if src := b.Config.InstalledFrom; src != nil {
		img.KernelVersion = strings.TrimSpace("macOS " + src.OSVersion + " " + src.Build)
	}
	return img
}

// bundleFile is a file a bundle needs, and what it is for, for errors.
type bundleFile struct {
	name, what string
	writable   bool // the framework writes it while the guest runs
}

func (c BundleConfig) files() []bundleFile {
	return []bundleFile{
		{DiskFile, "the guest's disk", true},
		{AuxFile, "the Mac's auxiliary storage, its NVRAM", true},
		{c.HardwareModel, "the Mac's hardware model", false},
		{c.MachineIdentifier, "the Mac's machine identifier", false},
	}
}

// OpenBundle reads and checks the bundle in dir without changing anything
// in it: config.json's schema and values, and that every file is there, is
// a non-empty regular file and can be read (and written, for the two the
// framework writes). The error names the file and what to do.
func OpenBundle(dir string) (Bundle, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Bundle{}, fmt.Errorf("VM bundle %s: %w", dir, err)
	}
	b := Bundle{Dir: abs}
	st, err := os.Stat(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return b, fmt.Errorf("no VM bundle at %s: make one with `%s`", abs, bundleCreateCommand)
	}
	if err != nil {
		return b, fmt.Errorf("VM bundle %s: %w", abs, err)
	}
	if !st.IsDir() {
		return b, fmt.Errorf("VM bundle %s is not a directory: a bundle is the directory `%s` makes", abs, bundleCreateCommand)
	}
	b.Config, err = readBundleConfig(abs)
	if err != nil {
		return b, err
	}
	for _, f := range b.Config.files() {
		if err := checkBundleFile(abs, f); err != nil {
			return b, err
		}
	}
	if b.HardwareModel, err = readPlatformData(abs, b.Config.HardwareModel); err != nil {
		return b, err
	}
	if b.MachineIdentifier, err = readPlatformData(abs, b.Config.MachineIdentifier); err != nil {
		return b, err
	}
	return b, nil
}

// corrupt says a bundle file cannot be used as it is.
func corrupt(dir, file, problem string) error {
	return fmt.Errorf("VM bundle %s is corrupt: %s %s; restore the bundle from a backup or make it again with `%s`", dir, file, problem, bundleCreateCommand)
}

func readBundleConfig(dir string) (BundleConfig, error) {
	var c BundleConfig
	path := filepath.Join(dir, BundleConfigFile)
	b, err := os.ReadFile(path) //nolint:gosec // G304: config.json of the bundle the user names
	if errors.Is(err, fs.ErrNotExist) {
		return c, fmt.Errorf("%s has no %s, so it is not a VM bundle, or making it did not finish: make it again with `%s`", dir, BundleConfigFile, bundleCreateCommand)
	}
	if err != nil {
		return c, corrupt(dir, BundleConfigFile, fmt.Sprintf("cannot be read (%v)", err))
	}
	if len(b) == 0 {
		return c, corrupt(dir, BundleConfigFile, "is empty")
	}
	var head struct {
		SchemaVersion string `json:"schema_version"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return c, corrupt(dir, BundleConfigFile, fmt.Sprintf("is not valid JSON (%v)", err))
	}
	major, err := schemaMajor(head.SchemaVersion)
	if err != nil {
		return c, corrupt(dir, BundleConfigFile, err.Error())
	}
	if major != bundleSchemaMajor {
		made := "an older"
		if major > bundleSchemaMajor {
			made = "a newer"
		}
		return c, fmt.Errorf("VM bundle %s has config schema %s; this qoslab reads %d.x (the bundle was made by %s qoslab): use that qoslab, or make the bundle again with `%s`",
			dir, head.SchemaVersion, bundleSchemaMajor, made, bundleCreateCommand)
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, corrupt(dir, BundleConfigFile, fmt.Sprintf("does not match schema %s (%v)", head.SchemaVersion, err))
	}
	if err := c.check(); err != nil {
		return c, corrupt(dir, BundleConfigFile, err.Error())
	}
	return c, nil
}

// schemaMajor reads the major of a "MAJOR.MINOR" schema version.
func schemaMajor(v string) (int, error) {
	if v == "" {
		return 0, errors.New("has no schema_version")
	}
	majorText, _, _ := strings.Cut(v, ".")
	major, err := strconv.Atoi(majorText)
	if err != nil || major < 0 {
		return 0, fmt.Errorf("has schema_version %q, not MAJOR.MINOR", v)
	}
	return major, nil
}

// check validates the values of a config, whatever made it.
func (c BundleConfig) check() error {
	switch c.Kind {
	case GuestMacOS:
	case guestLinux:
		return errors.New("holds a Linux guest: this qoslab boots Linux guests from images (`qoslab image build linux`), not bundles")
	default:
		return fmt.Errorf("has kind %q: want %q", c.Kind, GuestMacOS)
	}
	if c.CPUs < 1 {
		return fmt.Errorf("has cpus %d: want 1 or more", c.CPUs)
	}
	if c.MemoryMiB < 1 {
		return fmt.Errorf("has memory_mib %d: want 1 or more", c.MemoryMiB)
	}
	if c.DiskBytes < 1 {
		return fmt.Errorf("has disk_bytes %d: want 1 or more", c.DiskBytes)
	}
	if c.MinCPUs < 0 || c.MinMemoryMiB < 0 {
		return fmt.Errorf("has min_cpus %d and min_memory_mib %d: want 0 or more", c.MinCPUs, c.MinMemoryMiB)
	}
	for _, f := range []struct{ field, name string }{{"hardware_model", c.HardwareModel}, {"machine_identifier", c.MachineIdentifier}} {
		if f.name == "" || f.name != filepath.Base(f.name) || f.name == "." || f.name == ".." || strings.ContainsRune(f.name, os.PathSeparator) {
			return fmt.Errorf("has %s %q: want a file name in the bundle, such as %s", f.field, f.name, hardwareModelFile)
		}
		switch f.name {
		case BundleConfigFile, DiskFile, AuxFile:
			return fmt.Errorf("has %s %q, which is another file of the bundle", f.field, f.name)
		}
	}
	if c.HardwareModel == c.MachineIdentifier {
		return fmt.Errorf("names %q for both the hardware model and the machine identifier", c.HardwareModel)
	}
	if c.MACAddress != "" {
		if err := checkMAC(c.MACAddress); err != nil {
			return fmt.Errorf("has mac_address %q: %w", c.MACAddress, err)
		}
	}
	return nil
}

// newMACAddress makes a random unicast, locally administered MAC address,
// as VZMACAddress.randomLocallyAdministeredAddress does.
func newMACAddress() (string, error) {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("MAC address: %w", err)
	}
	b[0] = b[0]&^0x01 | 0x02 // unicast, locally administered
	return net.HardwareAddr(b[:]).String(), nil
}

// checkMAC accepts a unicast 48-bit address written with colons, which is
// what VZMACAddress takes.
func checkMAC(s string) error {
	mac, err := net.ParseMAC(s)
	switch {
	case err != nil || len(mac) != 6 || strings.Count(s, ":") != 5:
		return errors.New("want six hexadecimal bytes joined by colons, like 5a:94:ef:e4:0c:dd")
	case mac[0]&0x01 != 0:
		return errors.New("it is a multicast address; a network device needs a unicast one")
	}
	return nil
}

// bundleMAC returns the MAC address of the bundle in dir, first writing a
// new one into its config.json when it has none (a bundle made before
// schema 1.1). held is the bundle's lock (on config.json); the lock
// returned replaces it, since config.json is replaced whole.
func bundleMAC(dir string, held *os.File) (string, *os.File, error) {
	c, err := readBundleConfig(dir)
	if err != nil {
		return "", held, err
	}
	if c.MACAddress != "" {
		return c.MACAddress, held, nil
	}
	if c.MACAddress, err = newMACAddress(); err != nil {
		return "", held, err
	}
	c.SchemaVersion = bundleSchema
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return "", held, err
	}
	lock, err := replaceLocked(filepath.Join(dir, BundleConfigFile), held, append(b, '\n'))
	if err != nil {
		return "", held, fmt.Errorf("VM bundle %s: keep its new MAC address in %s: %w", dir, BundleConfigFile, err)
	}
	return c.MACAddress, lock, nil
}

// checkBundleFile checks one file without changing it: opening for writing
// without O_TRUNC or O_CREATE leaves contents and times alone.
func checkBundleFile(dir string, f bundleFile) error {
	path := filepath.Join(dir, f.name)
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("VM bundle %s has no %s (%s), without which it cannot boot: restore it from a backup or make the bundle again with `%s`", dir, f.name, f.what, bundleCreateCommand)
	}
	if err != nil {
		return corrupt(dir, f.name, fmt.Sprintf("cannot be read (%v)", err))
	}
	if !st.Mode().IsRegular() {
		return corrupt(dir, f.name, fmt.Sprintf("(%s) is not a regular file", f.what))
	}
	if st.Size() == 0 {
		return corrupt(dir, f.name, fmt.Sprintf("(%s) is empty", f.what))
	}
	flag := os.O_RDONLY
	if f.writable {
		flag = os.O_RDWR
	}
	fh, err := os.OpenFile(path, flag, 0) //nolint:gosec // G304: a file of the bundle the user names, checked without a change
	if err != nil && f.writable && errors.Is(err, fs.ErrPermission) {
		if ro, rerr := os.Open(path); rerr == nil { //nolint:gosec // G304: the same file, to say whether it is only not writable
			_ = ro.Close()
			return fmt.Errorf("VM bundle %s: %s (%s) is not writable by this user, and the guest writes it: %w; fix its owner or mode", dir, f.name, f.what, err)
		}
	}
	if err != nil {
		return corrupt(dir, f.name, fmt.Sprintf("cannot be read (%v)", err))
	}
	var one [1]byte
	_, err = fh.Read(one[:])
	_ = fh.Close()
	if err != nil && !errors.Is(err, io.EOF) {
		return corrupt(dir, f.name, fmt.Sprintf("cannot be read (%v)", err))
	}
	return nil
}

func readPlatformData(dir, name string) ([]byte, error) {
	path := filepath.Join(dir, name)
	st, err := os.Stat(path)
	if err != nil {
		return nil, corrupt(dir, name, fmt.Sprintf("cannot be read (%v)", err))
	}
	if st.Size() > maxPlatformData {
		return nil, corrupt(dir, name, fmt.Sprintf("is %d bytes, too large for platform data (at most %d)", st.Size(), maxPlatformData))
	}
	b, err := os.ReadFile(path) //nolint:gosec // G304: platform data of the bundle the user names, its name checked by BundleConfig.check
	if err != nil {
		return nil, corrupt(dir, name, fmt.Sprintf("cannot be read (%v)", err))
	}
	if len(b) == 0 {
		return nil, corrupt(dir, name, "is empty")
	}
	return b, nil
}

// NewBundle is what CreateBundle makes a bundle of.
type NewBundle struct {
	// Config is the new config.json. SchemaVersion, HardwareModel and
	// MachineIdentifier default to bundleSchema, hardwareModelFile and
	// machineIdentifierFile, CreatedBy to this qoslab, CreatedAt to now.
	Config BundleConfig
	// HardwareModel and MachineIdentifier are the platform's data, as the
	// framework represents them (on a Mac: the restore image's most
	// featureful supported hardware model, and a new machine identifier).
	HardwareModel     []byte
	MachineIdentifier []byte
	// Populate fills the staged bundle before it is moved into place. It
	// must create aux.img (on a Mac, with the framework, from the hardware
	// model) and may install macOS onto disk.img, which exists at its full
	// size, and update staged.Config (InstalledFrom, minimums). A bundle
	// whose Populate fails is removed whole.
	Populate func(ctx context.Context, staged *Bundle) error
}

// CreateBundle makes a bundle in dir, which must not exist or be empty. The
// bundle is made in a hidden directory next to dir and renamed to dir once
// complete and checked, so an error at any step leaves dir as it was and no
// half-made bundle behind; config.json is written whole (a temporary file
// renamed) as the last file.
func CreateBundle(ctx context.Context, dir string, nb NewBundle) (Bundle, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Bundle{}, fmt.Errorf("create VM bundle %s: %w", dir, err)
	}
	c, err := nb.config()
	if err != nil {
		return Bundle{}, fmt.Errorf("create VM bundle %s: %w", abs, err)
	}
	if err := checkEmptyDir(abs); err != nil {
		return Bundle{}, err
	}
	parent := filepath.Dir(abs)
	if err := os.MkdirAll(parent, 0o755); err != nil { //nolint:gosec // G301: a directory the user names for the bundle, made as mkdir -p makes it
		return Bundle{}, fmt.Errorf("create VM bundle %s: %w", abs, err)
	}
	staging, err := os.MkdirTemp(parent, "."+filepath.Base(abs)+".creating-")
	if err != nil {
		return Bundle{}, fmt.Errorf("create VM bundle %s: %w", abs, err)
	}
	placed := false
	defer func() {
		if !placed {
			_ = os.RemoveAll(staging)
		}
	}()
	if err := stageBundle(ctx, staging, c, nb); err != nil {
		return Bundle{}, fmt.Errorf("create VM bundle %s: %w", abs, err)
	}
	// os.Rename refuses to replace a directory, even an empty one; rmdir
	// removes dir only while it is an empty directory, so a bundle that appeared there
	// meanwhile is left alone and the rename then fails.
	if err := syscall.Rmdir(abs); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Bundle{}, fmt.Errorf("create VM bundle %s: %w", abs, err)
	}
	if err := os.Rename(staging, abs); err != nil {
		return Bundle{}, fmt.Errorf("create VM bundle %s: move the new bundle into place: %w", abs, err)
	}
	placed = true
	return OpenBundle(abs)
}

// config is the new bundle's config.json, with its defaults filled in,
// checked with the platform data.
func (nb NewBundle) config() (BundleConfig, error) {
	c := nb.Config
	if c.SchemaVersion == "" {
		c.SchemaVersion = bundleSchema
	}
	if c.HardwareModel == "" {
		c.HardwareModel = hardwareModelFile
	}
	if c.MachineIdentifier == "" {
		c.MachineIdentifier = machineIdentifierFile
	}
	if c.CreatedBy == "" {
		c.CreatedBy = "qoslab " + version.String()
	}
	if c.CreatedAt.IsZero() {
		c.CreatedAt = time.Now().UTC()
	}
	if c.MACAddress == "" {
		var err error
		if c.MACAddress, err = newMACAddress(); err != nil {
			return c, err
		}
	}
	if major, err := schemaMajor(c.SchemaVersion); err != nil || major != bundleSchemaMajor {
		return c, fmt.Errorf("schema_version %q: this qoslab makes %s", c.SchemaVersion, bundleSchema)
	}
	if err := c.check(); err != nil {
		return c, fmt.Errorf("the config %w", err)
	}
	for _, d := range []struct {
		what string
		b    []byte
	}{{"hardware model", nb.HardwareModel}, {"machine identifier", nb.MachineIdentifier}} {
		if len(d.b) == 0 || len(d.b) > maxPlatformData {
			return c, fmt.Errorf("the %s is %d bytes: want 1 to %d", d.what, len(d.b), maxPlatformData)
		}
	}
	return c, nil
}

// stageBundle makes the whole bundle in staging, config c last, and checks
// it as OpenBundle will.
func stageBundle(ctx context.Context, staging string, c BundleConfig, nb NewBundle) error {
	staged := &Bundle{Dir: staging, Config: c, HardwareModel: nb.HardwareModel, MachineIdentifier: nb.MachineIdentifier}
	if err := os.WriteFile(staged.Path(c.HardwareModel), nb.HardwareModel, 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(staged.Path(c.MachineIdentifier), nb.MachineIdentifier, 0o600); err != nil {
		return err
	}
	if err := makeSparseDisk(staged.Path(DiskFile), c.DiskBytes); err != nil {
		return err
	}
	if nb.Populate != nil {
		if err := nb.Populate(ctx, staged); err != nil {
			return err
		}
		staged.Dir = staging // Populate may not move it
	}
	if err := writeBundleConfig(staging, staged.Config); err != nil {
		return err
	}
	if _, err := OpenBundle(staging); err != nil {
		return fmt.Errorf("the new bundle does not check: %w", err)
	}
	return nil
}

// checkEmptyDir refuses a dir that has anything in it.
func checkEmptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("create VM bundle %s: %w", dir, err)
	case len(entries) == 0:
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, BundleConfigFile)); err == nil {
		return fmt.Errorf("create VM bundle %s: a bundle is already there; qoslab never overwrites one: choose another directory, or remove that bundle first", dir)
	}
	return fmt.Errorf("create VM bundle %s: the directory is not empty (%s, ...): choose another directory", dir, entries[0].Name())
}

// writeBundleConfig replaces config.json whole.
func writeBundleConfig(dir string, c BundleConfig) error {
	if err := atomicfile.WriteJSON(filepath.Join(dir, BundleConfigFile), c); err != nil {
		return fmt.Errorf("write %s: %w", BundleConfigFile, err)
	}
	return nil
}

// makeSparseDisk makes a raw disk of size bytes, rounded up to whole MiB
// (block devices come in sectors), without writing its blocks.
func makeSparseDisk(path string, size int64) error {
	size = roundUpMiB(size)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600) //nolint:gosec // G304: a disk in the bundle or the state directory, made new
	if err != nil {
		return fmt.Errorf("disk %s: %w", path, err)
	}
	err = f.Truncate(size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(path)
		return fmt.Errorf("disk %s of %d bytes: %w", path, size, err)
	}
	return nil
}

const mib = 1 << 20

func roundUpMiB(n int64) int64 { return (n + mib - 1) / mib * mib }
