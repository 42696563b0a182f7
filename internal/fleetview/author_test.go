package fleetview

import "testing"

func TestAuthorStrings(t *testing.T) {
	cases := []struct {
		d               Drift
		author, manager string
	}{
		{Drift{Manager: "kubectl-edit", Operation: "Update"}, "kubectl-edit (Update)", "kubectl-edit"},
		{Drift{Manager: "kubectl-edit", Operation: "Update", User: "alice"}, "alice via kubectl-edit (Update)", "alice via kubectl-edit"},
		{Drift{Type: "Deleted"}, "unknown", "unknown"},
	}
	for _, c := range cases {
		if got := c.d.Author(); got != c.author {
			t.Errorf("Author(%+v) = %q, want %q", c.d, got, c.author)
		}
		if got := managerString(&c.d); got != c.manager {
			t.Errorf("managerString(%+v) = %q, want %q", c.d, got, c.manager)
		}
	}
}
