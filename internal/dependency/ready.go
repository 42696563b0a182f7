package dependency

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/textlimit"
)

// maxWhy bounds how much of another status object's message a reason to wait repeats.
const maxWhy = 200

// Ready reports whether a service of another service set, as the status.services entry st of
// that set's ClusterServiceStatus for the cluster records it, lets the services that depend on it
// be applied there, and if not why. It is ready when its last reconcile applied it (or kept it,
// OneTime) without a failed or conflicting object — st.Ready True, which a service waiting for
// its own dependencies, not rendered, or in DryRun never is — and each of its objects is
// healthy: st.Health Current, or empty when none of its objects has a health verdict (it has
// none). A health timeout is recorded as Failed. This is the rule the controller applies to
// the services of the same set in the same reconcile, read from what was recorded.
func Ready(st holdfastv1.ServiceStatus) (bool, string) {
	switch {
	case st.Ready != metav1.ConditionTrue:
		return false, textlimit.Cut(fmt.Sprintf("not applied there (%s: %s)", st.Reason, st.Message), maxWhy, "…")
	case st.Health != "" && st.Health != holdfastv1.HealthCurrent:
		return false, textlimit.Cut(fmt.Sprintf("not healthy there (%s: %s)", st.Health, st.HealthMessage), maxWhy, "…")
	}
	return true, ""
}

// ReadyServices returns the services of a ClusterServiceStatus that are Ready, by name.
func ReadyServices(services []holdfastv1.ServiceStatus) map[string]bool {
	out := make(map[string]bool, len(services))
	for _, st := range services {
		out[st.Name], _ = Ready(st)
	}
	return out
}
