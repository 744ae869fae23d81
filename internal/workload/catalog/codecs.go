package catalog

import (
	"fmt"
	"sort"
	"strings"
)

// Codec names, as users type them.
const (
	Zstd  = "zstd"
	Gzip  = "gzip"
	LZ4   = "lz4"
	LZFSE = "lzfse" // macOS only, through libcompression
)

// DefaultCodec compresses unless a cell names another.
const DefaultCodec = Zstd

// Codec is a compression codec and the levels it takes. Level 0 always
// means the codec's default, which DefaultLevel names for messages.
type Codec struct {
	Name         string
	MinLevel     int
	MaxLevel     int // 0: the codec has no levels
	DefaultLevel string
	// Ext is the file name extension of its output.
	Ext string
	// OnlyOn is the one OS the codec exists on ("" for every OS).
	OnlyOn string
}

var codecs = []Codec{
	{Zstd, 1, 22, "3", "zst", ""},
	{Gzip, 1, 9, "5", "gz", ""},
	{LZ4, 1, 9, "lz4's fast mode", "lz4", ""},
	{LZFSE, 0, 0, "its only level", "lzfse", "darwin"},
}

// Codecs lists the codecs that exist on goos, in a stable order.
func Codecs(goos string) []string {
	var out []string
	for _, c := range codecs {
		if c.OnlyOn == "" || c.OnlyOn == goos {
			out = append(out, c.Name)
		}
	}
	return out
}

// AllCodecs lists every codec, whatever the OS.
func AllCodecs() []string {
	var out []string
	for _, c := range codecs {
		out = append(out, c.Name)
	}
	return out
}

// LookupCodec returns the codec called name.
func LookupCodec(name string) (Codec, bool) {
	for _, c := range codecs {
		if c.Name == name {
			return c, true
		}
	}
	return Codec{}, false
}

// CheckLevel checks a codec's name and level whatever this OS provides, so
// a controller can refuse a bad request before any target is asked.
func CheckLevel(name string, level int) error {
	c, known := LookupCodec(name)
	switch {
	case !known:
		all := AllCodecs()
		sort.Strings(all)
		return fmt.Errorf("unknown codec %q: allowed %s", name, strings.Join(all, ", "))
	case level == 0:
		return nil
	case c.MaxLevel == 0:
		return fmt.Errorf("%s level %d: %s has no levels, use 0", name, level, name)
	case level < c.MinLevel || level > c.MaxLevel:
		return fmt.Errorf("%s level %d: allowed %d..%d, or 0 for the default (%s)", name, level, c.MinLevel, c.MaxLevel, c.DefaultLevel)
	}
	return nil
}

// Sink kinds, as users type them.
const (
	SinkFile  = "file"  // one new file per thread in a directory, fsync'd
	SinkBlock = "block" // one region per thread of a raw block device
	SinkNull  = "null"  // discarded
)

// DefaultSink takes the output unless a cell names another.
const DefaultSink = SinkFile

// Sinks lists the sink kinds.
func Sinks() []string { return []string{SinkFile, SinkBlock, SinkNull} }
