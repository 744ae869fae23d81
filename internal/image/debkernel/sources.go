package debkernel

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"golang.org/x/crypto/openpgp" //nolint:staticcheck // the keyring type pault.ag/go/debian takes
)

// AptSources reads the Debian suites of this machine's apt configuration
// under dir (/etc/apt): sources.list and sources.list.d/*.list (one-line
// "deb [options] URI SUITE COMPONENTS"), and sources.list.d/*.sources
// (deb822: Types, URIs, Suites, Components, Enabled). Only "deb" entries
// with the main component count. None (a Mac, a machine without apt) is no
// error: the caller says what to set instead.
func AptSources(dir string) ([]Source, error) {
	var out []Source
	add := func(uri, suite string) {
		s := Source{URI: strings.TrimRight(uri, "/"), Suite: suite}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	lists := []string{filepath.Join(dir, "sources.list")}
	more, _ := filepath.Glob(filepath.Join(dir, "sources.list.d", "*.list"))
	sort.Strings(more)
	lists = append(lists, more...)
	for _, p := range lists {
		b, err := os.ReadFile(p) //nolint:gosec // G304: apt's sources, at the paths apt reads
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return out, err
		}
		for _, line := range strings.Split(string(b), "\n") {
			if i := strings.IndexByte(line, '#'); i >= 0 {
				line = line[:i]
			}
			f := strings.Fields(line)
			if len(f) < 4 || f[0] != "deb" {
				continue
			}
			f = f[1:]
			if strings.HasPrefix(f[0], "[") { // [arch=amd64 signed-by=...]
				for len(f) > 0 && !strings.HasSuffix(f[0], "]") {
					f = f[1:]
				}
				if len(f) == 0 {
					continue
				}
				f = f[1:]
			}
			if len(f) >= 3 && slices.Contains(f[2:], "main") {
				add(f[0], f[1])
			}
		}
	}
	deb822, _ := filepath.Glob(filepath.Join(dir, "sources.list.d", "*.sources"))
	sort.Strings(deb822)
	for _, p := range deb822 {
		b, err := os.ReadFile(p) //nolint:gosec // G304: apt's sources, at the paths apt reads
		if err != nil {
			return out, err
		}
		for _, stanza := range bytes.Split(b, []byte("\n\n")) {
			fields := parseStanza(stanza)
			if strings.EqualFold(fields["enabled"], "no") || !slices.Contains(strings.Fields(fields["types"]), "deb") ||
				!slices.Contains(strings.Fields(fields["components"]), "main") {
				continue
			}
			for _, uri := range strings.Fields(fields["uris"]) {
				for _, suite := range strings.Fields(fields["suites"]) {
					add(uri, suite)
				}
			}
		}
	}
	return out, nil
}

// parseStanza reads one deb822 stanza's fields, keys lower-cased,
// continuation lines joined.
func parseStanza(b []byte) map[string]string {
	out := map[string]string{}
	key := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		if (strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t")) && key != "" {
			out[key] += " " + strings.TrimSpace(line)
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		key = strings.ToLower(strings.TrimSpace(k))
		out[key] = strings.TrimSpace(v)
	}
	return out
}

// DebianKeyring is where Debian's archive keyring lives on a Debian or
// Ubuntu machine (package debian-archive-keyring).
const DebianKeyring = "/usr/share/keyrings/debian-archive-keyring.gpg"

// LoadKeyring reads an OpenPGP keyring (binary, as Debian ships it); a
// missing file is no keyring and no error.
func LoadKeyring(path string) (openpgp.EntityList, error) {
	f, err := os.Open(path) //nolint:gosec // G304: the keyring the user or the default names
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	kr, err := openpgp.ReadKeyRing(f)
	if err != nil {
		return nil, fmt.Errorf("keyring %s: %w", path, err)
	}
	return kr, nil
}
