package clusterservicestatus

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/naming"
	"holdfast.dev/holdfast/internal/work"
)

// The reconcile of one cluster takes its declarations from one of two places
// (docs/design/pull-mode.md). On the hub, the service sets, the Cluster, the templates and what
// they reference, which it renders. In a Pull cluster's agent, the works the hub published for
// the cluster's status objects (Works): the service set is made of the work's, the services'
// objects are the work's, and the Cluster is the agent's own. Everything after that — apply,
// prune, health, drift watches and policy, attribution and prevention, the status — is the
// same code. The functions here are the only places that choose between the two.

// Works is where a Pull cluster's agent finds its declarations: the work the hub published for
// each status object of its cluster (package work).
type Works interface {
	// Cluster is the agent's Cluster on the hub, the only one whose status objects it
	// reconciles.
	Cluster() types.NamespacedName
	// Work returns the work published for css, the one its WorkAnnotation names: ErrNoWork when
	// it names none, or one not found.
	Work(ctx context.Context, css *holdfastv1.ClusterServiceStatus) (*work.Work, error)
	// PreviewWork returns the work published for the revision css is to preview, the one its
	// PreviewWorkAnnotation names, if it is of the revision of its PreviewRequestAnnotation:
	// ErrNoWork otherwise.
	PreviewWork(ctx context.Context, css *holdfastv1.ClusterServiceStatus) (*work.Work, error)
}

// ErrNoWork is returned by Works when a status object has no work published yet.
var ErrNoWork = errors.New("no work published for the status object yet")

// agent reports whether this reconciler is a Pull cluster's agent's.
func (r *Reconciler) agent() bool { return r.Works != nil }

// publishes reports whether this reconcile publishes the status object's work rather than
// applying it: on the hub, for a Pull cluster.
func (r *Reconciler) publishes(s *scope) bool { return !r.agent() && s.pullCluster() }

// loadServiceSet reads the service set of the scope's status object into s.mcs, nil when none
// declares it (on the hub: it was deleted; in the agent: no work is published for it, yet or
// any more: the hub deletes it when the status object goes).
func (r *Reconciler) loadServiceSet(ctx context.Context, s *scope) error {
	mcs, w, err := r.serviceSet(ctx, s.css, s.css.Spec.MultiClusterService)
	if err != nil && !errors.Is(err, ErrNoWork) && !apierrors.IsNotFound(err) {
		return err
	}
	s.mcs, s.work = mcs, w
	return nil
}

// serviceSet returns the service set name, as the reconcile of css's cluster sees it: the hub's
// object, or the agent's work's (with the work). A service set that does not exist is a
// NotFound error; in the agent, one that has no work published is ErrNoWork.
func (r *Reconciler) serviceSet(ctx context.Context, css *holdfastv1.ClusterServiceStatus, name string) (*holdfastv1.MultiClusterService, *work.Work, error) {
	if !r.agent() {
		mcs := &holdfastv1.MultiClusterService{}
		if err := r.Client.Get(ctx, client.ObjectKey{Name: name}, mcs); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, nil, err
			}
			return nil, nil, fmt.Errorf("reading MultiClusterService %s: %w", name, err)
		}
		return mcs, nil, nil
	}
	// Another service set's: its status object on the same cluster names its work.
	if name != css.Spec.MultiClusterService {
		other := &holdfastv1.ClusterServiceStatus{}
		key := client.ObjectKey{Namespace: css.Namespace, Name: naming.StatusName(name, css.Spec.Cluster)}
		if err := r.Client.Get(ctx, key, other); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, nil, err
			}
			return nil, nil, fmt.Errorf("reading ClusterServiceStatus %s: %w", key, err)
		}
		if !statusOf(other, name, types.NamespacedName{Namespace: css.Namespace, Name: css.Spec.Cluster}) {
			return nil, nil, apierrors.NewNotFound(holdfastv1.GroupVersion.WithResource("multiclusterservices").GroupResource(), name)
		}
		css = other
	}
	w, err := r.Works.Work(ctx, css)
	if err != nil {
		return nil, nil, err
	}
	mcs := &holdfastv1.MultiClusterService{Spec: *w.Spec.DeepCopy()}
	mcs.Name, mcs.Generation = w.ServiceSet, w.Generation
	if w.Requested != "" {
		mcs.Annotations = map[string]string{holdfastv1.ReconcileRequestedAtAnnotation: w.Requested}
	}
	return mcs, w, nil
}

// loadCluster reads the Cluster and its connection; a problem is a wait, not an error. In the
// agent, the Cluster is its own, reached through its one connection.
func (r *Reconciler) loadCluster(ctx context.Context, s *scope) {
	key := client.ObjectKey{Namespace: s.css.Namespace, Name: s.css.Spec.Cluster}
	if r.agent() {
		if key != r.Works.Cluster() {
			s.clusterProblem = &problem{holdfastv1.ClusterNotFoundReason, fmt.Sprintf("Cluster %s is not this agent's", key)}
			return
		}
		c := &holdfastv1.Cluster{}
		c.Namespace, c.Name, c.Spec.Mode = key.Namespace, key.Name, holdfastv1.ClusterModePull
		s.cluster = c
		r.useConnection(s, key)
		return
	}
	r.loadHubCluster(ctx, s, key)
}

// services returns the services declared for the scope's cluster, in declaration order: on the
// hub rendered (renderAll), in the agent the work's (declareEach with s.workDeclaration).
func (r *Reconciler) services(ctx context.Context, s *scope) []renderedService {
	if !r.agent() {
		return r.renderAll(ctx, s)
	}
	return r.declareEach(ctx, s, s.workDeclaration, nil)
}

// workDeclaration is the declaration of svc in the scope's work, and the digest of its objects.
func (s *scope) workDeclaration(svc holdfastv1.Service) (renderedService, string) {
	rs := renderedService{svc: svc}
	ws := s.publishedService(svc.Name)
	if ws != nil {
		rs.overrides = ws.Overrides
	}
	switch {
	case ws == nil:
		rs.err = &problem{holdfastv1.RenderFailedReason, fmt.Sprintf("service %q is not in the work the hub published", svc.Name)}
	case ws.Problem != nil:
		rs.err, rs.transient = &problem{ws.Problem.Reason, ws.Problem.Message}, ws.Problem.Transient
	default:
		// Copies: the work is kept between reconciles, and applying marks the objects.
		rs.objects = make([]*unstructured.Unstructured, len(ws.Objects))
		for i, o := range ws.Objects {
			rs.objects[i] = o.DeepCopy()
		}
		rs.count, rs.digest = len(ws.Objects), ws.Digest
		return rs, ws.Digest
	}
	return rs, ""
}

// inputDigest is the digest of everything rendering svc for the scope's cluster reads (see
// rendercache.InputDigest): equal digests give equal renderings, up to what a Helm chart
// generates, which the hub keeps (package rendercache). In the agent, the digest of the
// service's published objects: the hub rendered them.
func (r *Reconciler) inputDigest(ctx context.Context, s *scope, svc holdfastv1.Service) (string, error) {
	if r.agent() {
		ws := s.publishedService(svc.Name)
		if ws == nil || ws.Problem != nil {
			return "", fmt.Errorf("service %q: not rendered in the published work", svc.Name)
		}
		return ws.Digest, nil
	}
	req, err := r.renderRequest(ctx, s, svc)
	if err != nil {
		return "", err
	}
	return r.digestOf(ctx, req)
}

// publishedService is the work's service name, nil when the scope has no work or it has no such
// service.
func (s *scope) publishedService(name string) *work.Service {
	if s.work == nil {
		return nil
	}
	for i := range s.work.Services {
		if s.work.Services[i].Name == name {
			return &s.work.Services[i]
		}
	}
	return nil
}

// deployedRevision is the rollout revision the reconcile deploys: the status object's
// spec.revision on the hub, the one its work was rendered from in the agent (the hub publishes
// the work of a new revision a moment after naming it).
func (s *scope) deployedRevision() string {
	if s.work != nil {
		return s.work.Revision
	}
	return s.css.Spec.Revision
}
