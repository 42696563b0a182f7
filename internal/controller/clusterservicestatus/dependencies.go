package clusterservicestatus

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/dependency"
)

// dependencyOrder returns the rendered services of service set set so that each comes after the
// services of the set it depends on (spec.services[].dependsOn), in declaration order otherwise,
// and the problem of each service that can never be applied because of its dependencies: one
// with an entry that names no service, one naming a service the set does not have, and those in
// (or behind) a cycle. Entries naming another service set's services are left to
// setDependencies.
func dependencyOrder(set string, rendered []renderedService) ([]renderedService, map[string]*problem) {
	byName := map[string]int{}
	for i, rs := range rendered {
		byName[rs.svc.Name] = i
	}
	problems := map[string]*problem{}
	waits := make([]int, len(rendered)) // dependencies not yet placed
	dependents := make([][]int, len(rendered))
	for i, rs := range rendered {
		for _, entry := range rs.svc.DependsOn {
			ref, err := dependency.Parse(set, entry)
			if err != nil {
				problems[rs.svc.Name] = &problem{holdfastv1.InvalidDependencyReason, err.Error() + "; fix spec.services[].dependsOn"}
				continue
			}
			if ref.Set != set {
				continue
			}
			j, ok := byName[ref.Service]
			if !ok {
				problems[rs.svc.Name] = &problem{holdfastv1.InvalidDependencyReason,
					fmt.Sprintf("dependsOn names service %q, which the service set does not have; fix spec.services[].dependsOn", ref.Service)}
				continue
			}
			waits[i]++
			dependents[j] = append(dependents[j], i)
		}
	}
	ordered := make([]renderedService, 0, len(rendered))
	placed := make([]bool, len(rendered))
	for len(ordered) < len(rendered) {
		next := -1
		for i := range rendered {
			if !placed[i] && waits[i] == 0 {
				next = i
				break
			}
		}
		if next < 0 {
			break
		}
		placed[next] = true
		ordered = append(ordered, rendered[next])
		for _, d := range dependents[next] {
			waits[d]--
		}
	}
	var stuck []string
	for i, rs := range rendered {
		if !placed[i] {
			stuck = append(stuck, rs.svc.Name)
			ordered = append(ordered, rs)
		}
	}
	for _, name := range stuck {
		problems[name] = &problem{holdfastv1.InvalidDependencyReason, fmt.Sprintf(
			"in or behind a dependency cycle among services %s: none of them is applied; break the cycle in spec.services[].dependsOn",
			strings.Join(stuck, ", "))}
	}
	return ordered, problems
}

// dependencyWait says why svc, of service set set, must wait, or "" when every service it
// depends on is ready on the cluster: those of the set in this reconcile (ready: applied, or
// kept, without failures, and each of its objects healthy), those of other sets as their status
// objects record it (others: why each is not ready, "" when it is; see setDependencies).
func dependencyWait(svc holdfastv1.Service, set string, ready map[string]bool, others map[dependency.Ref]string) string {
	var waiting, why []string
	for _, entry := range svc.DependsOn {
		ref, err := dependency.Parse(set, entry)
		switch {
		case err != nil:
		case ref.Set == set:
			if !ready[ref.Service] {
				waiting = append(waiting, ref.Service)
			}
		default:
			if reason, ok := others[ref]; !ok || reason != "" {
				waiting = append(waiting, ref.String())
				why = append(why, ref.String()+": "+firstNonEmpty(reason, "not looked at"))
			}
		}
	}
	if len(waiting) == 0 {
		return ""
	}
	slices.Sort(waiting)
	slices.Sort(why)
	msg := fmt.Sprintf("waits for %s to be applied and healthy on the cluster (dependsOn)", strings.Join(waiting, ", "))
	if len(why) > 0 {
		msg += "; " + strings.Join(why, "; ")
	}
	return msg
}

// readyForDependents reports whether the service's outcome in this reconcile lets the services
// that depend on it be applied: applied (or kept, OneTime) with no object failed or in
// conflict, and each of its objects in entries healthy.
func (s *scope) readyForDependents(o serviceOutcome, entries []holdfastv1.ResourceStatus) bool {
	switch {
	case o.renderErr != nil, o.applyErr != nil, o.waiting != nil:
		return false
	case o.result != nil:
		if status, _, _ := serviceReadiness(s, o); status != metav1.ConditionTrue {
			return false
		}
	}
	worst := s.healthOf(entries).byService[o.name]
	return worst.n == 0 || (worst.status == holdfastv1.HealthCurrent && !worst.timedOut)
}
