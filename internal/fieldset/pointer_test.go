package fieldset

import "testing"

func TestPointerCovers(t *testing.T) {
	cases := []struct {
		pointer, path string
		want          bool
	}{
		{"/spec/replicas", ".spec.replicas", true},
		{"/spec", ".spec.replicas", true},
		{"/spec/replica", ".spec.replicas", false},
		{"/spec/replicas", ".spec", false},
		{"/data/a", ".data.ab", false},
		{"/metadata/annotations/example.com~1rotated", ".metadata.annotations.example.com/rotated", true},
		{"/spec/template/spec/containers/0/image", `.spec.template.spec.containers[name="app"].image`, true},
		{"/spec/template/spec/containers/*/image", `.spec.template.spec.containers[name="a]b"].image`, true},
		{"/spec/template/spec/containers/*/image", `.spec.template.spec.containers[name="app"].env`, false},
		{"spec/replicas", ".spec.replicas", false},
		{"", ".anything", true},
	}
	for _, c := range cases {
		if got := PointerCovers(c.pointer, c.path); got != c.want {
			t.Errorf("PointerCovers(%q, %q) = %v, want %v", c.pointer, c.path, got, c.want)
		}
	}
}
