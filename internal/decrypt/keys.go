package decrypt

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"filippo.io/age"
	"github.com/ProtonMail/go-crypto/openpgp"
)

// Suffixes of the entries of a decryption Secret that hold keys; other entries are ignored.
const (
	// AgeKeySuffix ends an entry holding an age identity file: one AGE-SECRET-KEY-1… (or
	// AGE-SECRET-KEY-PQ-1…) identity a line, as age-keygen writes it; lines starting with "#"
	// are comments.
	AgeKeySuffix = ".agekey"
	// PGPKeySuffix ends an entry holding ASCII-armored PGP private keys without a passphrase,
	// as `gpg --export-secret-keys --armor` writes them.
	PGPKeySuffix = ".asc"
)

// Keys are the private keys of one decryption Secret, and nothing else: a file is decrypted
// with these or not at all. A Keys is not changed after ParseKeys, so concurrent renders may
// share one.
type Keys struct {
	// source names the Secret for messages, e.g. "Secret team-a/sops-keys".
	source string
	age    []age.Identity
	pgp    openpgp.EntityList
	// ageRecipients and pgpFingerprints are the public parts of the keys, for messages.
	ageRecipients, pgpFingerprints []string
}

// ParseKeys reads the keys in a decryption Secret's data; source names the Secret in messages
// ("Secret team-a/sops-keys"). An entry that does not parse, a PGP key protected by a
// passphrase, or a Secret with no key at all is an error naming the entry, never its content.
func ParseKeys(source string, data map[string][]byte) (*Keys, error) {
	k := &Keys{source: source}
	names := make([]string, 0, len(data))
	for name := range data {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		var err error
		switch path.Ext(name) {
		case AgeKeySuffix:
			err = k.addAge(data[name])
		case PGPKeySuffix:
			err = k.addPGP(data[name])
		default:
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s entry %q: %w", source, name, err)
		}
	}
	if len(k.age) == 0 && len(k.pgp) == 0 {
		return nil, fmt.Errorf("%s has no entry ending in %s (an age identity file) or %s (an armored PGP private key)",
			source, AgeKeySuffix, PGPKeySuffix)
	}
	return k, nil
}

// addAge adds the identities of an age identity file. age's parser quotes a line it cannot
// read, which may be a key: its words are not passed on.
func (k *Keys) addAge(file []byte) error {
	ids, err := age.ParseIdentities(bytes.NewReader(file))
	if err != nil {
		return errors.New("is not an age identity file: each line must be an AGE-SECRET-KEY-1… identity, as age-keygen writes (age plugin identities are not supported)")
	}
	for _, id := range ids {
		switch id := id.(type) {
		case *age.X25519Identity:
			k.ageRecipients = append(k.ageRecipients, id.Recipient().String())
		case *age.HybridIdentity:
			k.ageRecipients = append(k.ageRecipients, id.Recipient().String())
		}
	}
	k.age = append(k.age, ids...)
	return nil
}

// addPGP adds the private keys of an armored PGP key ring.
func (k *Keys) addPGP(armored []byte) error {
	ring, err := openpgp.ReadArmoredKeyRing(bytes.NewReader(armored))
	if err != nil {
		return errors.New("is not an ASCII-armored PGP key (gpg --export-secret-keys --armor)")
	}
	for _, e := range ring {
		if e.PrivateKey == nil {
			return fmt.Errorf("PGP key %s is a public key: export its private key", fingerprint(e))
		}
		if e.PrivateKey.Encrypted || subkeyEncrypted(e) {
			return fmt.Errorf("PGP key %s is protected by a passphrase, which Holdfast cannot be given: export it without one", fingerprint(e))
		}
		k.pgpFingerprints = append(k.pgpFingerprints, fingerprint(e))
	}
	k.pgp = append(k.pgp, ring...)
	return nil
}

func subkeyEncrypted(e *openpgp.Entity) bool {
	for _, s := range e.Subkeys {
		if s.PrivateKey != nil && s.PrivateKey.Encrypted {
			return true
		}
	}
	return false
}

// fingerprint is a PGP key's fingerprint as SOPS records it: upper-case hex.
func fingerprint(e *openpgp.Entity) string {
	return strings.ToUpper(fmt.Sprintf("%x", e.PrimaryKey.Fingerprint))
}

// Source names the Secret the keys were read from, as ParseKeys was told: "Secret team-a/keys".
func (k *Keys) Source() string { return k.source }

// describe lists the public parts of the keys, for messages.
func (k *Keys) describe() string {
	return describeKeys(k.ageRecipients, k.pgpFingerprints)
}

// describeKeys is "age recipients a, b and PGP keys C" or the one kind there is.
func describeKeys(ageRecipients, pgpFingerprints []string) string {
	var parts []string
	if len(ageRecipients) > 0 {
		parts = append(parts, "age recipients "+strings.Join(ageRecipients, ", "))
	}
	if len(pgpFingerprints) > 0 {
		parts = append(parts, "PGP keys "+strings.Join(pgpFingerprints, ", "))
	}
	if len(parts) == 0 {
		return "no age or PGP key"
	}
	return strings.Join(parts, " and ")
}
