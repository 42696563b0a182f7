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
	g := &setGraph{ctx: ctx, reader: r.Client, serviceSet: func(name string) (*holdfastv1.MultiClusterService, error) {
		mcs, _, err := r.serviceSet(ctx, s.css, name)
		return mcs, err
	}}
	g.Graph = dependency.Graph{Own: s.mcs, Local: map[string][]string{}, MayDependOn: r.Tenancy.DependsOn,
		Lookup: func(name string) *holdfastv1.MultiClusterService { return g.set(name).mcs }}
	for _, rs := range rendered {
		g.Local[rs.svc.Name] = rs.svc.DependsOn
	}
	if !g.DependsOnOtherSets() {
		return nil, nil
	}
	problems := map[string]*problem{}
	others := map[dependency.Ref]string{}
	for _, rs := range rendered {
		if err := g.Refused(rs.svc.DependsOn); err != nil {
			problems[rs.svc.Name] = &problem{holdfastv1.CrossNamespaceReferenceReason, err.Error() + "; fix spec.services[].dependsOn"}
			continue
		}
		if len(rs.svc.DependsOn) > 0 {
			cycle, err := dependency.Cycle(dependency.Ref{Set: own, Service: rs.svc.Name}, g.Next)
			switch {
			case errors.Is(err, dependency.ErrTooLarge):
				problems[rs.svc.Name] = &problem{holdfastv1.InvalidDependencyReason,
					fmt.Sprintf("dependsOn cannot be checked for cycles: %v; depend on fewer services", err)}
				continue
			case dependency.CrossesSets(cycle, own):
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

// setGraph is the dependency graph of services across service sets as one reconcile sees it
// (dependency.Graph), with the other sets' specs read from the hub cache, each once.
type setGraph struct {
	dependency.Graph
	ctx    context.Context
	reader client.Reader
	// serviceSet reads a service set as the reconcile sees it (Reconciler.serviceSet).
	serviceSet func(name string) (*holdfastv1.MultiClusterService, error)
	sets       map[string]setRead
}

// setRead is a service set read from the cache: nil when it does not exist, or why it could not
// be read.
type setRead struct {
	mcs *holdfastv1.MultiClusterService
	err error
}

// set reads a service set, once.
func (g *setGraph) set(name string) setRead {
	if name == g.Own.Name {
		return setRead{mcs: g.Own}
	}
	if read, ok := g.sets[name]; ok {
		return read
	}
	var read setRead
	switch mcs, err := g.serviceSet(name); {
	case apierrors.IsNotFound(err) || errors.Is(err, ErrNoWork):
	case err != nil:
		read.err = err
	default:
		read.mcs = mcs
	}
	if g.sets == nil {
		g.sets = map[string]setRead{}
	}
	g.sets[name] = read
	return read
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
	if _, ok := g.Declared(ref); !ok {
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
