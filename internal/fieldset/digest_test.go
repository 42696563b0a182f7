package fieldset

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

func TestObjectDigestIsShortAndComparesWithTheLongForm(t *testing.T) {
	content := []byte(`{"apiVersion":"v1","kind":"ConfigMap"}`)
	short := ObjectDigest(content)
	if len(short) != 2*ObjectDigestSize {
		t.Fatalf("ObjectDigest %q: want %d hex digits", short, 2*ObjectDigestSize)
	}
	sum := sha256.Sum256(content)
	long := "sha256:" + hex.EncodeToString(sum[:]) // as inventories recorded before
	other := sha256.Sum256([]byte("other"))
	otherLong := "sha256:" + hex.EncodeToString(other[:])
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{short, short, true},
		{short, long, true},
		{long, short, true},
		{long, long, true},
		{"", "", true},
		{short, "", false},
		{"", long, false},
		{short, otherLong, false},
		{short, ObjectDigest([]byte("other")), false},
		{short, short[:len(short)-1], false},
		{short, "sha256:" + short, false}, // not a whole sum
		{long[:len(long)-1], short, false},
	} {
		if got := SameDigest(c.a, c.b); got != c.same {
			t.Errorf("SameDigest(%q, %q) = %v, want %v", c.a, c.b, got, c.same)
		}
	}
	fields := []FieldValue{{Path: ".data.k", Value: "v", Present: true}}
	owned, err := FieldsDigest("v1", fields)
	if err != nil || len(owned) != 2*ObjectDigestSize {
		t.Fatalf("FieldsDigest = %q, %v: want an inventory digest", owned, err)
	}
	if sum, err := FieldsSum("v1", fields); err != nil || FormatObjectDigest(sum) != owned {
		t.Fatalf("FieldsSum = %x, %v: want the bytes of %s", sum, err, owned)
	}
	if sum, err := FieldsSum("", fields); err != nil || sum != ([ObjectDigestSize]byte{}) {
		t.Fatalf("FieldsSum with nothing owned = %x, %v: want zero", sum, err)
	}
}
