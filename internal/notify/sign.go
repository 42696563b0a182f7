package notify

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
)

// sign returns the hex HMAC-SHA256 of body keyed with key, as HeaderSignature carries it.
func sign(key, body []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}
