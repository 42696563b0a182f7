package decrypt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	sopsage "github.com/getsops/sops/v3/age"
	"github.com/getsops/sops/v3/keyservice"
	"google.golang.org/grpc"
)

// maxDataKey bounds what a PGP message may decrypt to: a SOPS data key is 32 bytes.
const maxDataKey = 1 << 10

// keyService recovers a SOPS data key with the keys of one Secret, in memory. It is the only
// key service a decryption uses (see the package comment for why SOPS's local one is not).
type keyService struct {
	keys *Keys
}

var _ keyservice.KeyServiceClient = keyService{}

var (
	errNoAgeKey    = errors.New("the Secret holds no age identity")
	errNoPGPKey    = errors.New("the Secret holds no PGP key")
	errOtherKey    = errors.New("only age and PGP keys are read from the decryption Secret")
	errNoEncrypter = errors.New("decryption keys do not encrypt")
)

// Decrypt returns the data key that req's ciphertext holds for an age recipient or a PGP key.
func (s keyService) Decrypt(_ context.Context, req *keyservice.DecryptRequest, _ ...grpc.CallOption) (*keyservice.DecryptResponse, error) {
	var (
		plain []byte
		err   error
	)
	switch k := req.GetKey().GetKeyType().(type) {
	case *keyservice.Key_AgeKey:
		plain, err = s.decryptAge(k.AgeKey.GetRecipient(), req.GetCiphertext())
	case *keyservice.Key_PgpKey:
		plain, err = s.decryptPGP(req.GetCiphertext())
	default:
		err = errOtherKey
	}
	if err != nil {
		return nil, err
	}
	return &keyservice.DecryptResponse{Plaintext: plain}, nil
}

// decryptAge opens an age-encrypted data key with SOPS's age key, given the Secret's
// identities: with none, SOPS would look for identities in the environment instead, so it is
// not called.
func (s keyService) decryptAge(recipient string, ciphertext []byte) ([]byte, error) {
	if len(s.keys.age) == 0 {
		return nil, errNoAgeKey
	}
	mk := &sopsage.MasterKey{Recipient: recipient, EncryptedKey: string(ciphertext)}
	sopsage.ParsedIdentities(s.keys.age).ApplyToMasterKey(mk)
	return mk.Decrypt()
}

// decryptPGP opens a PGP-encrypted data key with the Secret's key ring. SOPS's PGP key reads
// key rings from a GnuPG home directory or runs gpg, so the message is read here, with
// OpenPGP, as SOPS itself reads it first.
func (s keyService) decryptPGP(ciphertext []byte) ([]byte, error) {
	if len(s.keys.pgp) == 0 {
		return nil, errNoPGPKey
	}
	block, err := armor.Decode(bytes.NewReader(ciphertext))
	if err != nil {
		return nil, fmt.Errorf("the PGP-encrypted data key is not armored: %w", err)
	}
	md, err := openpgp.ReadMessage(block.Body, s.keys.pgp, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("no PGP key of the Secret opens the data key: %w", err)
	}
	plain, err := io.ReadAll(io.LimitReader(md.UnverifiedBody, maxDataKey))
	if err != nil {
		return nil, fmt.Errorf("reading the PGP-encrypted data key: %w", err)
	}
	return plain, nil
}

// Encrypt is refused: the key service only decrypts.
func (keyService) Encrypt(context.Context, *keyservice.EncryptRequest, ...grpc.CallOption) (*keyservice.EncryptResponse, error) {
	return nil, errNoEncrypter
}
