package decrypt_test

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"

	"holdfast.dev/holdfast/internal/decrypt"
	"holdfast.dev/holdfast/internal/decrypt/decrypttest"
)

// armorKey armors a PGP key, its private part or its public part only.
func armorKey(t *testing.T, e *openpgp.Entity, private bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	kind, serialize := openpgp.PublicKeyType, e.Serialize
	if private {
		kind, serialize = openpgp.PrivateKeyType, func(w io.Writer) error { return e.SerializePrivateWithoutSigning(w, nil) }
	}
	w, err := armor.Encode(&buf, kind, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := serialize(w); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// A decryption Secret's entries that do not hold usable keys are refused by name, and what they
// hold is never quoted; a Secret without a key entry says which entries it needs.
func TestParseKeysRefusals(t *testing.T) {
	const leak = "AGE-SECRET-KEY-1LEAKEDLEAKED"
	_, protected := decrypttest.PGPKey(t)
	if err := protected.EncryptPrivateKeys([]byte("passphrase"), nil); err != nil {
		t.Fatal(err)
	}
	_, public := decrypttest.PGPKey(t)
	for _, tt := range []struct {
		name string
		data map[string][]byte
		want string
	}{
		{name: "no key entry", data: map[string][]byte{"age.txt": []byte(leak)}, want: "has no entry ending in .agekey (an age identity file) or .asc"},
		{name: "not an age identity", data: map[string][]byte{"a.agekey": []byte(leak + "\n")}, want: `entry "a.agekey": is not an age identity file`},
		{name: "an age plugin identity", data: map[string][]byte{"a.agekey": []byte("AGE-PLUGIN-YUBIKEY-1LEAKED\n")}, want: "age plugin identities are not supported"},
		{name: "an empty age file", data: map[string][]byte{"a.agekey": []byte("# nothing\n")}, want: "is not an age identity file"},
		{name: "not armored PGP", data: map[string][]byte{"k.asc": []byte(leak)}, want: `entry "k.asc": is not an ASCII-armored PGP key`},
		{name: "a PGP public key", data: map[string][]byte{"k.asc": armorKey(t, public, false)}, want: "is a public key"},
		{name: "a PGP key with a passphrase", data: map[string][]byte{"k.asc": armorKey(t, protected, true)}, want: "protected by a passphrase"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decrypt.ParseKeys(source, tt.data)
			if err == nil {
				t.Fatal("ParseKeys succeeded")
			}
			if !strings.Contains(err.Error(), source) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want it to name %s and say %q", err, source, tt.want)
			}
			if strings.Contains(err.Error(), "LEAKED") {
				t.Errorf("error quotes the Secret: %q", err)
			}
		})
	}
}
