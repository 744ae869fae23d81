package debkernel

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
	"time"

	// x/crypto/openpgp is deprecated, and kept: pault.ag/go/debian/control
	// imports it (and its clearsign) whatever this package uses, and
	// ProtonMail/go-crypto, the maintained fork, is no drop-in here: it has
	// no SignatureV3, and its CheckDetachedSignature takes a config and
	// judges key and signature expiry itself, which VerifyClearsigned
	// does, saying which.
	"golang.org/x/crypto/openpgp"                  //nolint:staticcheck // see above
	"golang.org/x/crypto/openpgp/clearsign"        //nolint:staticcheck // see above
	pgperrors "golang.org/x/crypto/openpgp/errors" //nolint:staticcheck // see above
	"golang.org/x/crypto/openpgp/packet"           //nolint:staticcheck // see above
)

// keyFiles are Debian's archive signing keys as debian-archive-keyring
// ships them (keys/README.md says which, from which package, and why the
// two EdDSA release keys are not among them).
//
//go:embed keys/*.asc
var keyFiles embed.FS

// ArchiveKeys are Debian's archive signing keys that ship with qoslab, so
// that an InRelease is verified on any machine (a Mac has no Debian
// keyring).
func ArchiveKeys() (openpgp.EntityList, error) {
	names, err := fs.Glob(keyFiles, "keys/*.asc")
	if err != nil {
		return nil, err
	}
	var all openpgp.EntityList
	for _, name := range names {
		b, err := keyFiles.ReadFile(name)
		if err != nil {
			return nil, err
		}
		kr, err := openpgp.ReadArmoredKeyRing(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("built-in key %s: %w", path.Base(name), err)
		}
		if len(kr) == 0 {
			return nil, fmt.Errorf("built-in key %s: no key the OpenPGP library can use", path.Base(name))
		}
		all = append(all, kr...)
	}
	return all, nil
}

// Signer is the key that verified an index.
type Signer struct {
	// Fingerprint is the primary key's, upper-case hex.
	Fingerprint string `json:"fingerprint"`
	// KeyID is the (sub)key that made the signature, upper-case hex.
	KeyID string `json:"key_id"`
	UID   string `json:"uid"`
	// Expires is when the signing key expires; zero: never.
	Expires time.Time `json:"expires,omitzero"`
}

func (s Signer) String() string {
	return fmt.Sprintf("%s (key %s, fingerprint %s)", s.UID, s.KeyID, s.Fingerprint)
}

// errUnsigned is an index with no OpenPGP signature at all.
var errUnsigned = errors.New("it is not signed (no OpenPGP clearsigned block)")

// verifyClearsigned checks that data is an OpenPGP clearsigned text with at
// least one good signature by a key of keyring that is valid at now (not
// expired, not revoked, allowed to sign), and returns the signed text and
// that key. Only the signed text is returned: anything around the signed
// block is dropped. A signature the library cannot check (an EdDSA one, as
// Debian's release keys make beside the archive's RSA ones) is skipped.
func verifyClearsigned(data []byte, keyring openpgp.EntityList, now time.Time) ([]byte, Signer, error) {
	block, _ := clearsign.Decode(data)
	if block == nil {
		return nil, Signer{}, errUnsigned
	}
	raw, err := io.ReadAll(block.ArmoredSignature.Body)
	if err != nil {
		return nil, Signer{}, fmt.Errorf("signature: %w", err)
	}
	sigs, err := splitPackets(raw)
	if err != nil {
		return nil, Signer{}, fmt.Errorf("signature: %w", err)
	}
	var refused []string
	for _, sig := range sigs {
		p, err := packet.Read(bytes.NewReader(sig))
		var unsupported pgperrors.UnsupportedError
		if errors.As(err, &unsupported) {
			refused = append(refused, fmt.Sprintf("a signature qoslab cannot check (%s)", unsupported))
			continue
		}
		if err != nil {
			return nil, Signer{}, fmt.Errorf("signature: %w", err)
		}
		var issuer uint64
		var made time.Time
		var sigExpired bool
		switch s := p.(type) {
		case *packet.Signature:
			if s.IssuerKeyId == nil {
				refused = append(refused, "a signature that names no key")
				continue
			}
			issuer, made = *s.IssuerKeyId, s.CreationTime
			// A signature's lifetime counts from its creation (RFC 4880 5.2.3.10).
			sigExpired = s.SigLifetimeSecs != nil && *s.SigLifetimeSecs != 0 &&
				now.After(made.Add(time.Duration(*s.SigLifetimeSecs)*time.Second))
		case *packet.SignatureV3:
			issuer, made = s.IssuerKeyId, s.CreationTime
		default:
			return nil, Signer{}, fmt.Errorf("signature: a %T packet where a signature belongs", p)
		}
		keys := keyring.KeysByIdUsage(issuer, packet.KeyFlagSign)
		if len(keys) == 0 {
			refused = append(refused, fmt.Sprintf("a signature by key %016X, which is not a Debian archive key qoslab knows", issuer))
			continue
		}
		for _, k := range keys {
			signer := signerOf(k)
			if _, err := openpgp.CheckDetachedSignature(openpgp.EntityList{k.Entity}, bytes.NewReader(block.Bytes), bytes.NewReader(sig)); err != nil {
				refused = append(refused, fmt.Sprintf("a bad signature by %s: %v (a damaged or tampered file)", signer, err))
				continue
			}
			switch {
			case revoked(k):
				refused = append(refused, fmt.Sprintf("a signature by %s, which is revoked", signer))
			case !signer.Expires.IsZero() && now.After(signer.Expires):
				refused = append(refused, fmt.Sprintf("a signature by %s, which expired on %s", signer, signer.Expires.UTC().Format(time.DateOnly)))
			case sigExpired:
				refused = append(refused, fmt.Sprintf("a signature by %s that expired", signer))
			case made.After(now.Add(24 * time.Hour)):
				refused = append(refused, fmt.Sprintf("a signature by %s made in the future (%s)", signer, made.UTC().Format(time.RFC3339)))
			default:
				return block.Plaintext, signer, nil
			}
		}
	}
	if len(refused) == 0 {
		return nil, Signer{}, errors.New("its signature block holds no signature")
	}
	return nil, Signer{}, fmt.Errorf("no good signature by a valid Debian archive key: %s", strings.Join(refused, "; "))
}

// splitPackets splits a run of OpenPGP packets into each packet's bytes
// (RFC 4880 4.2), so that each signature is checked on its own: the
// library stops at the first signature it cannot parse.
func splitPackets(b []byte) ([][]byte, error) {
	var out [][]byte
	for len(b) > 0 {
		tag := b[0]
		if tag&0x80 == 0 {
			return nil, fmt.Errorf("packet header %#x: not an OpenPGP packet", tag)
		}
		var hdr, n int
		if tag&0x40 != 0 { // new format
			if len(b) < 2 {
				return nil, errors.New("truncated packet header")
			}
			switch l := int(b[1]); {
			case l < 192:
				hdr, n = 2, l
			case l < 224:
				if len(b) < 3 {
					return nil, errors.New("truncated packet header")
				}
				hdr, n = 3, (l-192)<<8+int(b[2])+192
			case l == 255:
				if len(b) < 6 {
					return nil, errors.New("truncated packet header")
				}
				hdr, n = 6, int(b[2])<<24|int(b[3])<<16|int(b[4])<<8|int(b[5])
			default:
				return nil, errors.New("a partial-length packet where a signature belongs")
			}
		} else { // old format
			switch tag & 3 {
			case 0:
				if len(b) < 2 {
					return nil, errors.New("truncated packet header")
				}
				hdr, n = 2, int(b[1])
			case 1:
				if len(b) < 3 {
					return nil, errors.New("truncated packet header")
				}
				hdr, n = 3, int(b[1])<<8|int(b[2])
			case 2:
				if len(b) < 5 {
					return nil, errors.New("truncated packet header")
				}
				hdr, n = 5, int(b[1])<<24|int(b[2])<<16|int(b[3])<<8|int(b[4])
			default:
				return nil, errors.New("an indeterminate-length packet where a signature belongs")
			}
		}
		if n < 0 || hdr+n > len(b) {
			return nil, errors.New("truncated packet")
		}
		out = append(out, b[:hdr+n])
		b = b[hdr+n:]
	}
	return out, nil
}

// signerOf describes key k: its entity's UID, the primary key's fingerprint,
// and when k stops being valid (RFC 4880 5.2.3.6: a key's lifetime counts
// from its creation; a subkey also ends with its primary key).
func signerOf(k openpgp.Key) Signer {
	e := k.Entity
	s := Signer{
		Fingerprint: fmt.Sprintf("%X", e.PrimaryKey.Fingerprint[:]),
		KeyID:       fmt.Sprintf("%016X", k.PublicKey.KeyId),
		Expires:     keyExpiry(e),
	}
	if id := primaryIdentity(e); id != nil {
		s.UID = id.Name
	}
	if k.PublicKey != e.PrimaryKey && k.SelfSignature != nil && k.SelfSignature.KeyLifetimeSecs != nil && *k.SelfSignature.KeyLifetimeSecs != 0 {
		sub := k.PublicKey.CreationTime.Add(time.Duration(*k.SelfSignature.KeyLifetimeSecs) * time.Second)
		if s.Expires.IsZero() || sub.Before(s.Expires) {
			s.Expires = sub
		}
	}
	return s
}

// keyExpiry is when e's primary key expires, by its primary identity's
// self-signature; zero when it does not.
func keyExpiry(e *openpgp.Entity) time.Time {
	id := primaryIdentity(e)
	if id == nil || id.SelfSignature == nil || id.SelfSignature.KeyLifetimeSecs == nil || *id.SelfSignature.KeyLifetimeSecs == 0 {
		return time.Time{}
	}
	return e.PrimaryKey.CreationTime.Add(time.Duration(*id.SelfSignature.KeyLifetimeSecs) * time.Second)
}

// primaryIdentity is the identity marked primary, else the first by name
// (the library keeps identities in a map).
func primaryIdentity(e *openpgp.Entity) *openpgp.Identity {
	names := make([]string, 0, len(e.Identities))
	for n, id := range e.Identities {
		if id.SelfSignature != nil && id.SelfSignature.IsPrimaryId != nil && *id.SelfSignature.IsPrimaryId {
			return id
		}
		names = append(names, n)
	}
	if len(names) == 0 {
		return nil
	}
	sort.Strings(names)
	return e.Identities[names[0]]
}

// revoked tells whether k's entity, or k itself when it is a subkey, is revoked.
func revoked(k openpgp.Key) bool {
	if len(k.Entity.Revocations) > 0 {
		return true
	}
	return k.PublicKey != k.Entity.PrimaryKey && k.SelfSignature != nil && k.SelfSignature.SigType == packet.SigTypeSubkeyRevocation
}
