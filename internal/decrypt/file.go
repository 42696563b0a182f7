package decrypt

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"time"

	"github.com/getsops/sops/v3"
	"github.com/getsops/sops/v3/aes"
	sopsage "github.com/getsops/sops/v3/age"
	"github.com/getsops/sops/v3/config"
	"github.com/getsops/sops/v3/keyservice"
	"github.com/getsops/sops/v3/pgp"
	"github.com/getsops/sops/v3/stores"
	sopsjson "github.com/getsops/sops/v3/stores/json"
	sopsyaml "github.com/getsops/sops/v3/stores/yaml"
)

// store reads and writes one format of SOPS file.
type store interface {
	sops.Store
}

// storeFor returns the SOPS store of a file by its extension: JSON for .json, YAML otherwise
// (JSON is YAML too).
func storeFor(name string) store {
	if path.Ext(name) == ".json" {
		return sopsjson.NewStore(&config.JSONStoreConfig{})
	}
	return sopsyaml.NewStore(&config.YAMLStoreConfig{})
}

// Encrypted reports whether a YAML or JSON file is encrypted with SOPS: its first document has
// a top-level "sops" map holding a "mac", which is how SOPS finds its metadata. A file that does
// not parse is not: it is left to whoever parses it next.
func Encrypted(name string, content []byte) bool {
	if !bytes.Contains(content, []byte(stores.SopsMetadataKey)) {
		return false
	}
	branches, err := storeFor(name).LoadPlainFile(content)
	if err != nil || len(branches) == 0 {
		return false
	}
	for _, item := range branches[0] {
		if item.Key != stores.SopsMetadataKey {
			continue
		}
		meta, ok := item.Value.(sops.TreeBranch)
		if !ok {
			return false
		}
		for _, m := range meta {
			if m.Key == "mac" {
				return true
			}
		}
	}
	return false
}

// File decrypts a SOPS-encrypted YAML or JSON file (name says which, by its extension) with
// keys, and checks its MAC: it returns the plaintext in the file's format, or an error that
// names what is wrong and quotes nothing of the file. Nothing is written anywhere.
func File(name string, content []byte, keys *Keys) (plain []byte, err error) {
	// Malformed input has made SOPS panic before (Flux recovers likewise); what it was doing
	// is not said, since its message may quote the file.
	defer func() {
		if recover() != nil {
			plain, err = nil, errors.New("SOPS failed on its content: it is not a file sops(1) wrote")
		}
	}()
	st := storeFor(name)
	tree, err := st.LoadEncryptedFile(content)
	if err != nil {
		return nil, errors.New("its SOPS metadata cannot be read: it is not a file sops(1) wrote")
	}
	dataKey, err := tree.Metadata.GetDataKeyWithKeyServices([]keyservice.KeyServiceClient{keyService{keys: keys}}, sops.DefaultDecryptionOrder)
	if err != nil {
		return nil, fmt.Errorf("no key of the Secret opens it: it is encrypted for %s, and the Secret holds %s",
			fileKeys(tree.Metadata), keys.describe())
	}
	cipher := aes.NewCipher()
	mac, err := tree.Decrypt(dataKey, cipher)
	if err != nil {
		return nil, errors.New("a value does not decrypt with the file's data key: it was changed after it was encrypted")
	}
	original, err := cipher.Decrypt(tree.Metadata.MessageAuthenticationCode, dataKey, tree.Metadata.LastModified.Format(time.RFC3339))
	if err != nil {
		return nil, errors.New("its MAC does not decrypt with the file's data key: it was changed after it was encrypted")
	}
	if original != mac {
		return nil, errors.New("its MAC does not match its content: it was changed after it was encrypted")
	}
	plain, err = st.EmitPlainFile(tree.Branches)
	if err != nil {
		return nil, errors.New("its decrypted content cannot be written out in its format")
	}
	return plain, nil
}

// fileKeys lists the public parts of the keys a file's data key is encrypted for.
func fileKeys(m sops.Metadata) string {
	var ageRecipients, pgpFingerprints []string
	other := 0
	for _, group := range m.KeyGroups {
		for _, k := range group {
			switch k := k.(type) {
			case *sopsage.MasterKey:
				ageRecipients = append(ageRecipients, k.Recipient)
			case *pgp.MasterKey:
				pgpFingerprints = append(pgpFingerprints, k.Fingerprint)
			default:
				other++
			}
		}
	}
	s := describeKeys(ageRecipients, pgpFingerprints)
	if other > 0 {
		s += fmt.Sprintf(" (and %d key(s) of other kinds, such as KMS or Vault, which Holdfast does not use)", other)
	}
	return s
}
