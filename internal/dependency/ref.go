package dependency

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// Ref names one service of one service set (MultiClusterService).
type Ref struct {
	Set, Service string
}

// String is "<set>/<service>", as a dependsOn entry naming another set's service is written.
func (r Ref) String() string { return r.Set + "/" + r.Service }

// Parse reads a dependsOn entry of a service of service set set: a service name is a service of
// set; "<multiclusterservice>/<service>" one of that service set (which may be set itself). It
// returns an error saying what is wrong with an entry that is neither.
func Parse(set, entry string) (Ref, error) {
	other, name, qualified := strings.Cut(entry, "/")
	if !qualified {
		other, name = set, entry
	} else if errs := validation.IsDNS1123Subdomain(other); len(errs) > 0 {
		return Ref{}, fmt.Errorf("dependsOn entry %q: %q is not a MultiClusterService name (%s)", entry, other, strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		return Ref{}, fmt.Errorf("dependsOn entry %q: %q is not a service name (%s); write a service of this set, or <multiclusterservice>/<service>",
			entry, name, strings.Join(errs, "; "))
	}
	return Ref{Set: other, Service: name}, nil
}

// OtherSets returns the names of the service sets other than set that its services depend on,
// each once, sorted; entries that do not parse are left out.
func OtherSets(set string, services []holdfastv1.Service) []string {
	var out []string
	for _, svc := range services {
		for _, entry := range svc.DependsOn {
			if r, err := Parse(set, entry); err == nil && r.Set != set && !slices.Contains(out, r.Set) {
				out = append(out, r.Set)
			}
		}
	}
	slices.Sort(out)
	return out
}
