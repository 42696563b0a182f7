package decrypt_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ProtonMail/go-crypto/openpgp"
	"sigs.k8s.io/yaml"

	"holdfast.dev/holdfast/internal/decrypt"
	"holdfast.dev/holdfast/internal/decrypt/decrypttest"
)

const (
	marker    = "s3cr3t-plaintext-marker"
	secretDoc = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n  namespace: app\nstringData:\n  password: " + marker + "\n"
	source    = "Secret team-a/sops-keys"
	secretRe  = "^(data|stringData)$"
)

func keys(t *testing.T, data map[string][]byte) *decrypt.Keys {
	t.Helper()
	k, err := decrypt.ParseKeys(source, data)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// password is the stringData.password of a decrypted Secret manifest.
func password(t *testing.T, plain []byte) string {
	t.Helper()
	var s struct {
		Metadata   struct{ Name string }
		StringData map[string]string `json:"stringData"`
	}
	if err := yaml.Unmarshal(plain, &s); err != nil {
		t.Fatalf("the decrypted file does not parse: %v", err)
	}
	if s.Metadata.Name != "db" {
		t.Errorf("metadata.name %q, want db", s.Metadata.Name)
	}
	return s.StringData["password"]
}

// A file encrypted for an age recipient or a PGP key is decrypted with the Secret's key of
// that kind, whole or in the parts encrypted_regex selects, in YAML and JSON; the encrypted
// file does not hold the plaintext, and the decrypted one is not encrypted any more.
func TestFileDecryptsWithTheSecretsKeys(t *testing.T) {
	ageFile, ageRecipient := decrypttest.AgeKey(t)
	pgpArmored, pgpKey := decrypttest.PGPKey(t)
	_, otherRecipient := decrypttest.AgeKey(t)
	json := []byte(`{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db"}, "stringData": {"password": "` + marker + `"}}`)
	for _, tt := range []struct {
		name    string
		file    string
		plain   []byte
		opts    decrypttest.Options
		secret  map[string][]byte
		wantKey string
	}{
		{name: "age, Secret values only", file: "secret.yaml", plain: []byte(secretDoc),
			opts:   decrypttest.Options{Age: []string{ageRecipient}, EncryptedRegex: secretRe},
			secret: map[string][]byte{"identity.agekey": ageFile}},
		{name: "age, whole file", file: "secret.yaml", plain: []byte(secretDoc),
			opts:   decrypttest.Options{Age: []string{ageRecipient}},
			secret: map[string][]byte{"identity.agekey": ageFile}},
		{name: "PGP", file: "secret.yaml", plain: []byte(secretDoc),
			opts:   decrypttest.Options{PGP: []*openpgp.Entity{pgpKey}, EncryptedRegex: secretRe},
			secret: map[string][]byte{"key.asc": pgpArmored}},
		{name: "JSON", file: "secret.json", plain: json,
			opts:   decrypttest.Options{Age: []string{ageRecipient}},
			secret: map[string][]byte{"identity.agekey": ageFile}},
		{name: "one of several recipients, beside other entries", file: "secret.yaml", plain: []byte(secretDoc),
			opts:   decrypttest.Options{Age: []string{otherRecipient, ageRecipient}, PGP: []*openpgp.Entity{pgpKey}},
			secret: map[string][]byte{"team.agekey": ageFile, "README": []byte("not a key"), "kubeconfig": []byte("ignored")}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			enc := decrypttest.Encrypt(t, tt.file, tt.plain, tt.opts)
			if bytes.Contains(enc, []byte(marker)) {
				t.Fatalf("the encrypted file holds the plaintext:\n%s", enc)
			}
			if !decrypt.Encrypted(tt.file, enc) {
				t.Fatalf("Encrypted = false for:\n%s", enc)
			}
			plain, err := decrypt.File(tt.file, enc, keys(t, tt.secret))
			if err != nil {
				t.Fatal(err)
			}
			if got := password(t, plain); got != marker {
				t.Errorf("password %q, want %q", got, marker)
			}
			if decrypt.Encrypted(tt.file, plain) {
				t.Errorf("the decrypted file still has SOPS metadata:\n%s", plain)
			}
		})
	}
}

// Files without SOPS metadata are not encrypted, whatever they say about sops, and files that do
// not parse are left to the render.
func TestUnencryptedFilesAreNotEncrypted(t *testing.T) {
	for name, content := range map[string]string{
		"plain.yaml":    secretDoc,
		"mentions.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: sops}\ndata: {sops: mac}\n",
		"nomac.yaml":    "kind: ConfigMap\nsops:\n  version: 3.9.0\n",
		"second.yaml":   "kind: ConfigMap\n---\nkind: Secret\nsops:\n  mac: ENC[x]\n",
		"broken.yaml":   "sops: [mac\n",
		"plain.json":    `{"kind": "ConfigMap", "data": {"sops": "mac"}}`,
	} {
		if decrypt.Encrypted(name, []byte(content)) {
			t.Errorf("%s: Encrypted = true for\n%s", name, content)
		}
	}
}

// A file no key of the Secret opens, a file changed after it was encrypted, or a file that is
// not SOPS's is refused with a message that names the keys by their public parts and quotes
// nothing of the file.
func TestFileRefusals(t *testing.T) {
	ageFile, ageRecipient := decrypttest.AgeKey(t)
	_, strangerRecipient := decrypttest.AgeKey(t)
	pgpArmored, pgpKey := decrypttest.PGPKey(t)
	ageOnly := map[string][]byte{"identity.agekey": ageFile}
	forStranger := decrypttest.Encrypt(t, "s.yaml", []byte(secretDoc), decrypttest.Options{Age: []string{strangerRecipient}, EncryptedRegex: secretRe})
	forPGP := decrypttest.Encrypt(t, "s.yaml", []byte(secretDoc), decrypttest.Options{PGP: []*openpgp.Entity{pgpKey}, EncryptedRegex: secretRe})
	good := decrypttest.Encrypt(t, "s.yaml", []byte(secretDoc), decrypttest.Options{Age: []string{ageRecipient}, EncryptedRegex: secretRe})
	// A value left in the clear by encrypted_regex is covered by the MAC.
	renamed := bytes.Replace(good, []byte("name: db"), []byte("name: dc"), 1)
	// An encrypted value is bound to its place: moved elsewhere, it does not decrypt.
	moved := swapEncryptedValue(t, good)
	for _, tt := range []struct {
		name   string
		file   []byte
		secret map[string][]byte
		want   []string
	}{
		{name: "encrypted for another age key", file: forStranger, secret: ageOnly,
			want: []string{"no key of the Secret opens it", "age recipients " + strangerRecipient, "the Secret holds age recipients " + ageRecipient}},
		{name: "encrypted for PGP, the Secret has age only", file: forPGP, secret: ageOnly,
			want: []string{"PGP keys " + decrypttest.Fingerprint(pgpKey), "the Secret holds age recipients " + ageRecipient}},
		{name: "encrypted for age, the Secret has PGP only", file: good, secret: map[string][]byte{"k.asc": pgpArmored},
			want: []string{"age recipients " + ageRecipient, "the Secret holds PGP keys " + decrypttest.Fingerprint(pgpKey)}},
		{name: "a clear value changed", file: renamed, secret: ageOnly, want: []string{"MAC does not match its content", "changed after it was encrypted"}},
		{name: "an encrypted value moved", file: moved, secret: ageOnly, want: []string{"does not decrypt", "changed after it was encrypted"}},
		{name: "bad metadata", file: []byte("stringData: {password: " + marker + "}\nsops:\n  mac: " + marker + "\n  lastmodified: never\n"), secret: ageOnly,
			want: []string{"SOPS metadata cannot be read"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decrypt.File("s.yaml", tt.file, keys(t, tt.secret))
			if err == nil {
				t.Fatal("File succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if strings.Contains(err.Error(), marker) {
				t.Errorf("error quotes the file: %q", err)
			}
		})
	}
}

// swapEncryptedValue moves the encrypted password of a Secret manifest to another key.
func swapEncryptedValue(t *testing.T, enc []byte) []byte {
	t.Helper()
	out := bytes.Replace(enc, []byte("    password: ENC["), []byte("    passwd: ENC["), 1)
	if bytes.Equal(out, enc) {
		t.Fatalf("no encrypted password in\n%s", enc)
	}
	return out
}

// Keys in the controller's environment, where the sops command would look, are never used: a
// file is decrypted with the Secret's keys or not at all.
func TestFileIgnoresTheProcesssKeys(t *testing.T) {
	ageFile, ageRecipient := decrypttest.AgeKey(t)
	pgpArmored, _ := decrypttest.PGPKey(t)
	t.Setenv("SOPS_AGE_KEY", string(ageFile))
	enc := decrypttest.Encrypt(t, "s.yaml", []byte(secretDoc), decrypttest.Options{Age: []string{ageRecipient}})
	if _, err := decrypt.File("s.yaml", enc, keys(t, map[string][]byte{"k.asc": pgpArmored})); err == nil {
		t.Fatal("File decrypted with the age key of the process's environment")
	}
}
