package clusterservicestatus

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/dependency"
	"holdfast.dev/holdfast/internal/naming"
)

// setDependencies looks at what the rendered services depend on in other service sets
// (spec.services[].dependsOn "<multiclusterservice>/<service>") on this reconcile's cluster. It
// returns the problem of each service that can never be applied because of it — naming a
// service set the tenancy policy does not let it depend on (CrossNamespaceReference), or in a
// dependency cycle across service sets (InvalidDependency, naming the cycle) — and, for each other
// set's service named, why it is not ready for its dependents on the cluster, "" when it is
// (dependency.Ready). A service set that does not exist, does not select the cluster (no status
// object there) or does not declare the service is a wait, not a problem: it may come. Everything
// is read from the hub cache: the other sets' specs, and their status objects, once each.
func (r *Reconciler) setDependencies(ctx context.Context, s *scope, rendered []renderedService) (map[string]*problem, map[dependency.Ref]string) {
	own := s.mcs.Name
	g := &setGraph{ctx: ctx, reader: r.Client, own: s.mcs, local: map[string][]string{}, tenancy: r.Tenancy.DependsOn}
	for _, rs := range rendered {
		g.local[rs.svc.Name] = rs.svc.DependsOn
	}
	if !g.crossesSets() {
		return nil, nil
	}
	problems := map[string]*problem{}
	others := map[dependency.Ref]string{}
	for _, rs := range rendered {
		if p := g.refused(rs.svc); p != nil {
			problems[rs.svc.Name] = p
			continue
		}
		if len(rs.svc.DependsOn) > 0 {
			cycle, err := dependency.Cycle(dependency.Ref{Set: own, Service: rs.svc.Name}, g.next)
			switch {
			case errors.Is(err, dependency.ErrTooLarge):
				problems[rs.svc.Name] = &problem{holdfastv1.InvalidDependencyReason,
					fmt.Sprintf("dependsOn cannot be checked for cycles: %v; depend on fewer services", err)}
				continue
			case crossesSets(cycle, own):
				problems[rs.svc.Name] = &problem{holdfastv1.InvalidDependencyReason, fmt.Sprintf(
					"in a dependency cycle across service sets: %s; none of them is applied; break the cycle in spec.services[].dependsOn",
					dependency.FormatCycle(cycle))}
				continue
			}
		}
		for _, entry := range rs.svc.DependsOn {
			ref, err := dependency.Parse(own, entry)
			if err != nil || ref.Set == own {
				continue
			}
			if _, done := others[ref]; !done {
				others[ref] = g.notReady(s.css, ref)
			}
		}
	}
	return problems, others
}

// crossesSets reports whether a cycle goes through a service set other than own.
func crossesSets(cycle []dependency.Ref, own string) bool {
	for _, r := range cycle {
		if r.Set != own {
			return true
		}
	}
	return false
}

// setGraph is the dependency graph of services across service sets as one reconcile sees it:
// its own set's services as rendered (local: dependsOn by service), the others' specs from the
// hub cache, each read once.
type setGraph struct {
	ctx    context.Context
	reader client.Reader
	own    *holdfastv1.MultiClusterService
	local  map[string][]string
	// tenancy says whether a service set may depend on another (tenancy.Policy.DependsOn);
	// edges it refuses are not followed.
	tenancy func(mcs, other *holdfastv1.MultiClusterService) error
	sets    map[string]setRead
}

// setRead is a service set read from the cache: nil when it does not exist, or why it could not
// be read.
type setRead struct {
	mcs *holdfastv1.MultiClusterService
	err error
}

// crossesSets reports whether a service depends on another service set's.
func (g *setGraph) crossesSets() bool {
	for _, entries := range g.local {
		for _, entry := range entries {
			if ref, err := dependency.Parse(g.own.Name, entry); err == nil && ref.Set != g.own.Name {
				return true
			}
		}
	}
	return false
}

// set reads a service set, once.
func (g *setGraph) set(name string) setRead {
	if name == g.own.Name {
		return setRead{mcs: g.own}
	}
	if read, ok := g.sets[name]; ok {
		return read
	}
	mcs := &holdfastv1.MultiClusterService{}
	var read setRead
	switch err := g.reader.Get(g.ctx, client.ObjectKey{Name: name}, mcs); {
	case apierrors.IsNotFound(err):
	case err != nil:
		read.err = fmt.Errorf("reading MultiClusterService %s: %w", name, err)
	default:
		read.mcs = mcs
	}
	if g.sets == nil {
		g.sets = map[string]setRead{}
	}
	g.sets[name] = read
	return read
}

// declared returns the dependsOn of a service of a service set, and whether the set declares it
// (and does not disable it).
func (g *setGraph) declared(r dependency.Ref) ([]string, bool) {
	if r.Set == g.own.Name {
		entries, ok := g.local[r.Service]
		return entries, ok
	}
	mcs := g.set(r.Set).mcs
	if mcs == nil {
		return nil, false
	}
	for _, svc := range mcs.Spec.Services {
		if svc.Name == r.Service && !svc.Disabled {
			return svc.DependsOn, true
		}
	}
	return nil, false
}

// next returns the services r depends on, for dependency.Cycle: those of service sets that
// exist, and that r's set may depend on.
func (g *setGraph) next(r dependency.Ref) []dependency.Ref {
	entries, _ := g.declared(r)
	var out []dependency.Ref
	for _, entry := range entries {
		to, err := dependency.Parse(r.Set, entry)
		if err != nil {
			continue
		}
		if to.Set != r.Set {
			from, other := g.set(r.Set).mcs, g.set(to.Set).mcs
			if from == nil || other == nil || g.tenancy(from, other) != nil {
				continue
			}
		}
		out = append(out, to)
	}
	return out
}

// refused returns the problem of a service naming a service set it may not depend on, or nil.
func (g *setGraph) refused(svc holdfastv1.Service) *problem {
	for _, entry := range svc.DependsOn {
		ref, err := dependency.Parse(g.own.Name, entry)
		if err != nil || ref.Set == g.own.Name {
			continue
		}
		if other := g.set(ref.Set).mcs; other != nil {
			if err := g.tenancy(g.own, other); err != nil {
				return &problem{holdfastv1.CrossNamespaceReferenceReason, err.Error() + "; fix spec.services[].dependsOn"}
			}
		}
	}
	return nil
}

// notReady says why another set's service is not ready for its dependents on css's cluster, as
// that set's status object for the cluster records it, or "" when it is.
func (g *setGraph) notReady(css *holdfastv1.ClusterServiceStatus, ref dependency.Ref) string {
	read := g.set(ref.Set)
	switch {
	case read.err != nil:
		return read.err.Error()
	case read.mcs == nil:
		return fmt.Sprintf("MultiClusterService %s does not exist", ref.Set)
	}
	if _, ok := g.declared(ref); !ok {
		return fmt.Sprintf("MultiClusterService %s declares no service %q, or disables it", ref.Set, ref.Service)
	}
	other := &holdfastv1.ClusterServiceStatus{}
	key := client.ObjectKey{Namespace: css.Namespace, Name: naming.StatusName(ref.Set, css.Spec.Cluster)}
	err := g.reader.Get(g.ctx, key, other)
	switch {
	case apierrors.IsNotFound(err) || (err == nil && (other.Spec.MultiClusterService != ref.Set || other.Spec.Cluster != css.Spec.Cluster)):
		return fmt.Sprintf("MultiClusterService %s has no status object for Cluster %s/%s: it does not select the cluster, or not yet",
			ref.Set, css.Namespace, css.Spec.Cluster)
	case err != nil:
		return fmt.Sprintf("reading ClusterServiceStatus %s: %v", key, err)
	case !other.DeletionTimestamp.IsZero():
		return fmt.Sprintf("its ClusterServiceStatus %s is being deleted", key.Name)
	}
	for _, st := range other.Status.Services {
		if st.Name == ref.Service {
			_, why := dependency.Ready(st)
			return why
		}
	}
	return "not deployed on the cluster yet"
}
