package rendercache

import (
	"crypto/sha256"
	"encoding/hex"
	"unsafe"

	"holdfast.dev/holdfast/internal/sizedlru"
)

// A large inline source (a ServiceTemplate's spec.inline of thousands of objects, up to the
// API server's 1.5 MiB) is hashed once, not at every InputDigest: a drift correction asks for
// the digest of each service's inputs to know the declaration it keeps is still current, and
// encoding and hashing a megabyte per service made a correction in a set of 20,000 objects cost
// several times one in a set of ten (bench/RESULTS.md#inventory).
//
// The digest is kept by the identity of the string: the address and length of its bytes. Every
// reconcile's copy of the same ServiceTemplate from the informer cache shares them (a deep copy
// copies a string's header, not its bytes), a new version of the template has new bytes, and
// the entry holds the string itself, so its bytes cannot be freed and reused for another string
// while the entry exists: the same identity is the same content.

// memoizedInline is the size from which an inline source's digest is kept.
const memoizedInline = 64 << 10

// inlineDigests are the digests of large inline sources, bounded in entries and in the bytes
// of the sources they keep alive.
var inlineDigests = sizedlru.New[inlineIdentity, inlineEntry](64, 32<<20)

type inlineIdentity struct {
	data *byte
	len  int
}

type inlineEntry struct {
	source, digest string
}

// inlineDigest is the digest of an inline source's content.
func inlineDigest(source string) string {
	id := inlineIdentity{data: unsafe.StringData(source), len: len(source)}
	if e, ok := inlineDigests.Get(id); ok {
		return e.digest
	}
	sum := sha256.Sum256([]byte(source))
	digest := "sha256:" + hex.EncodeToString(sum[:])
	inlineDigests.Add(id, inlineEntry{source: source, digest: digest}, int64(len(source)))
	return digest
}
