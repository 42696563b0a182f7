package naming

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestLabelValue(t *testing.T) {
	long := strings.Repeat("a", 62) + ".b" // 64 characters, a dot where the cut falls
	cases := []struct {
		name, in string
		same     bool
	}{
		{"short names are kept", "web", true},
		{"63 characters are kept", strings.Repeat("x", 63), true},
		{"longer names are shortened", long, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := LabelValue(c.in)
			if (got == c.in) != c.same {
				t.Fatalf("LabelValue(%q) = %q, kept = %v, want kept = %v", c.in, got, got == c.in, c.same)
			}
			if errs := validation.IsValidLabelValue(got); len(errs) > 0 {
				t.Fatalf("LabelValue(%q) = %q is not a valid label value: %v", c.in, got, errs)
			}
		})
	}
	if LabelValue(long) == LabelValue(long+"c") {
		t.Fatalf("two long names that share a prefix got the same label value")
	}
}

func TestStatusName(t *testing.T) {
	if got := StatusName("web", "cluster-1"); got != "web.cluster-1" {
		t.Fatalf("StatusName = %q, want web.cluster-1", got)
	}
	got := StatusName(strings.Repeat("s", 200), strings.Repeat("c", 100))
	if len(got) > 253 {
		t.Fatalf("StatusName is %d characters, longer than a name may be", len(got))
	}
	if errs := validation.IsDNS1123Subdomain(got); len(errs) > 0 {
		t.Fatalf("StatusName = %q is not a valid name: %v", got, errs)
	}
}

func TestRenderingsName(t *testing.T) {
	if got := RenderingsName("web.cluster-1"); got != "web.cluster-1-render" {
		t.Fatalf("RenderingsName = %q, want web.cluster-1-render", got)
	}
	long := StatusName(strings.Repeat("s", 200), strings.Repeat("c", 100))
	got := RenderingsName(long)
	if errs := validation.IsDNS1123Subdomain(got); len(errs) > 0 {
		t.Fatalf("RenderingsName = %q is not a valid name: %v", got, errs)
	}
	if got == RenderingsName(long[:len(long)-1]+"x") {
		t.Fatalf("two long status names got the same Secret name")
	}
}
