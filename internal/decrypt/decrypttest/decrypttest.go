// Package decrypttest makes keys and SOPS-encrypted files for tests, through the SOPS library
// as `sops --encrypt` does, so that no test needs the sops binary, gpg, or an encrypted fixture
// whose keys would have to be committed.
package decrypttest

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"path"
	"strings"
	"testing"
	"time"

	"filippo.io/age"
	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/getsops/sops/v3"
	"github.com/getsops/sops/v3/aes"
	sopsage "github.com/getsops/sops/v3/age"
	"github.com/getsops/sops/v3/config"
	"github.com/getsops/sops/v3/pgp"
	sopsjson "github.com/getsops/sops/v3/stores/json"
	sopsyaml "github.com/getsops/sops/v3/stores/yaml"
)

// AgeKey returns a new age identity file, as age-keygen writes it, and its recipient.
func AgeKey(t testing.TB) (identityFile []byte, recipient string) {
	t.Helper()
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	return []byte("# created: by a test\n# public key: " + id.Recipient().String() + "\n" + id.String() + "\n"), id.Recipient().String()
}

// PGPKey returns a new PGP private key, armored as `gpg --export-secret-keys --armor` writes
// it, and the key.
func PGPKey(t testing.TB) (armored []byte, key *openpgp.Entity) {
	t.Helper()
	e, err := openpgp.NewEntity("Holdfast test", "", "test@holdfast.dev", nil)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, err := armor.Encode(&buf, openpgp.PrivateKeyType, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.SerializePrivate(w, nil); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), e
}

// Fingerprint is a PGP key's fingerprint as SOPS records it.
func Fingerprint(e *openpgp.Entity) string {
	return strings.ToUpper(fmt.Sprintf("%x", e.PrimaryKey.Fingerprint))
}

// Options say whom a file is encrypted for and which of its values are encrypted.
type Options struct {
	// Age are age recipients (age1…), PGP the PGP keys the data key is encrypted for.
	Age []string
	PGP []*openpgp.Entity
	// EncryptedRegex encrypts only the values of keys it matches (sops --encrypted-regex),
	// e.g. "^(data|stringData)$" for a Secret; when empty, every value is encrypted but those
	// of keys ending in _unencrypted, as sops does by default.
	EncryptedRegex string
}

// Encrypt encrypts a YAML or JSON file (by name's extension) as `sops --encrypt` does.
func Encrypt(t testing.TB, name string, plain []byte, opts Options) []byte {
	t.Helper()
	var st sops.Store = sopsyaml.NewStore(&config.YAMLStoreConfig{})
	if path.Ext(name) == ".json" {
		st = sopsjson.NewStore(&config.JSONStoreConfig{})
	}
	branches, err := st.LoadPlainFile(plain)
	if err != nil {
		t.Fatalf("parsing %s: %v", name, err)
	}
	dataKey := make([]byte, 32)
	_, _ = rand.Read(dataKey)
	var group sops.KeyGroup
	for _, r := range opts.Age {
		k, err := sopsage.MasterKeyFromRecipient(r)
		if err != nil {
			t.Fatal(err)
		}
		if err := k.Encrypt(dataKey); err != nil {
			t.Fatal(err)
		}
		group = append(group, k)
	}
	for _, e := range opts.PGP {
		k := pgp.NewMasterKeyFromFingerprint(Fingerprint(e))
		k.EncryptedKey = pgpEncrypt(t, e, dataKey)
		group = append(group, k)
	}
	meta := sops.Metadata{KeyGroups: []sops.KeyGroup{group}, EncryptedRegex: opts.EncryptedRegex, Version: "3.13.3"}
	if opts.EncryptedRegex == "" {
		meta.UnencryptedSuffix = sops.DefaultUnencryptedSuffix
	}
	tree := sops.Tree{Branches: branches, Metadata: meta}
	cipher := aes.NewCipher()
	mac, err := tree.Encrypt(dataKey, cipher)
	if err != nil {
		t.Fatal(err)
	}
	tree.Metadata.LastModified = time.Now().UTC()
	if tree.Metadata.MessageAuthenticationCode, err = cipher.Encrypt(mac, dataKey, tree.Metadata.LastModified.Format(time.RFC3339)); err != nil {
		t.Fatal(err)
	}
	out, err := st.EmitEncryptedFile(tree)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// pgpEncrypt encrypts a data key for a PGP key, armored, as SOPS does with OpenPGP.
func pgpEncrypt(t testing.TB, e *openpgp.Entity, dataKey []byte) string {
	t.Helper()
	var buf bytes.Buffer
	aw, err := armor.Encode(&buf, "PGP MESSAGE", nil)
	if err != nil {
		t.Fatal(err)
	}
	w, err := openpgp.Encrypt(aw, []*openpgp.Entity{e}, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(dataKey); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := aw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}
