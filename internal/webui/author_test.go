package webui

import (
	"testing"

	"holdfast.dev/holdfast/internal/fleetview"
)

func TestAuthor(t *testing.T) {
	cases := []struct {
		d    fleetview.Drift
		want string
	}{
		{fleetview.Drift{Manager: "kubectl-edit", Operation: "Update"}, "kubectl-edit (Update)"},
		{fleetview.Drift{Manager: "kubectl-edit", Operation: "Update", User: "alice"}, "alice via kubectl-edit (Update)"},
		{fleetview.Drift{Manager: "kubectl", Operation: "Update", Subresource: "scale"}, "kubectl (Update/scale)"},
		{fleetview.Drift{}, "unknown"},
	}
	for _, c := range cases {
		if got := author(c.d); got != c.want {
			t.Errorf("author(%+v) = %q, want %q", c.d, got, c.want)
		}
	}
}
