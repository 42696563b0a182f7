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
	for _, d := range []string{short, long} {
		b, ok := ParseObjectDigest(d)
		if !ok || FormatObjectDigest(b) != short {
			t.Errorf("ParseObjectDigest(%q) = %x, %v; want the bytes of %s", d, b, ok, short)
		}
	}
	for _, bad := range []string{"", "sha256:", short[:30], "zz" + short[2:], "sha256:" + short} {
		if _, ok := ParseObjectDigest(bad); ok {
			t.Errorf("ParseObjectDigest(%q) accepted", bad)
		}
	}
	owned, err := FieldsDigest("v1", []FieldValue{{Path: ".data.k", Value: "v", Present: true}})
	if err != nil || len(owned) != 2*ObjectDigestSize {
		t.Fatalf("FieldsDigest = %q, %v: want an inventory digest", owned, err)
	}
}
