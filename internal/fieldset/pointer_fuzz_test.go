package fieldset

import (
	"strings"
	"testing"
)

// FuzzPointerCovers checks, for any ignore pointer a service set's author writes and any field
// path a target's object yields: no panic; a pointer covers every path below a path it covers;
// the root pointer covers everything; a pointer that does not start with "/" covers nothing.
func FuzzPointerCovers(f *testing.F) {
	for _, s := range [][2]string{
		{"/spec/replicas", ".spec.replicas"},
		{"/spec/template/spec/containers/0/image", `.spec.template.spec.containers[name="app"].image`},
		{"/metadata/annotations/a~1b", ".metadata.annotations.a/b"},
		{"/spec/ports/*", `.spec.ports[port=80,protocol="TCP"]`},
		{"spec", ".spec"},
		{"/a/[", ".a[[]"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pointer, path string) {
		covers := PointerCovers(pointer, path)
		if !strings.HasPrefix(pointer, "/") && pointer != "" && covers {
			t.Fatalf("%q is not a JSON pointer but covers %q", pointer, path)
		}
		if covers {
			for _, below := range []string{".x", `[name="y"]`} {
				if !PointerCovers(pointer, path+below) {
					t.Fatalf("%q covers %q but not %q below it", pointer, path, path+below)
				}
			}
		}
		if !PointerCovers("", path) {
			t.Fatalf("the root pointer does not cover %q", path)
		}
	})
}
