package clusterservicestatus

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/rollout"
)

// decodedRevisions bounds how many decoded revisions the reconciler keeps: a fleet rolls out a
// few at a time, and each is decoded once instead of at every reconcile (drift corrections
// included) of every cluster deploying it.
const decodedRevisions = 64

// revisionRetry is how soon a status object whose revision cannot be read yet is looked at
// again: the MultiClusterService controller creates the ControllerRevision before it names it,
// so this is the cache catching up, or a revision deleted by hand.
const revisionRetry = 5 * time.Second

// loadRevision makes the scope deploy the revision the status object names (spec.revision, set
// by the service set's rollout): the snapshot's services replace the service set's, and its
// templates are rendered instead of the hub's (renderRequest). Everything else (sync mode,
// drift policy, health checks) stays the service set's as it is. A revision that cannot be read
// is a problem: nothing is deployed, what is deployed stays.
func (r *Reconciler) loadRevision(ctx context.Context, s *scope) {
	name := s.css.Spec.Revision
	if name == "" || s.mcs == nil {
		return
	}
	cr := &appsv1.ControllerRevision{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: s.css.Namespace, Name: name}, cr); err != nil {
		what := fmt.Sprintf("reading revision %s (ControllerRevision %s/%s): %v", name, s.css.Namespace, name, err)
		if apierrors.IsNotFound(err) {
			what = fmt.Sprintf("revision %s not found (ControllerRevision %s/%s): the rollout of MultiClusterService %s names it; it is made again when the services change",
				name, s.css.Namespace, name, s.mcs.Name)
		}
		s.revisionProblem = &problem{holdfastv1.RevisionFailedReason, what}
		return
	}
	// A ControllerRevision's data never changes (it is named by its digest): its UID names the
	// decoded snapshot, which nothing changes either.
	var snap *rollout.Snapshot
	if kept, ok := r.revisions.Get(cr.UID); ok {
		snap = kept.(*rollout.Snapshot)
	} else {
		decoded, err := rollout.Decode(cr)
		if err != nil {
			s.revisionProblem = &problem{holdfastv1.RevisionFailedReason, err.Error()}
			return
		}
		snap = decoded
		r.revisions.Add(cr.UID, snap)
	}
	mcs := s.mcs.DeepCopy()
	mcs.Spec.Services = snap.Services
	s.mcs, s.revision = mcs, snap
}

// template returns the ServiceTemplate key names for a service: the revision's copy when the
// status object deploys one, else the hub's.
func (r *Reconciler) template(ctx context.Context, s *scope, key client.ObjectKey) (*holdfastv1.ServiceTemplate, error) {
	if s.revision != nil {
		if tpl := s.revision.Template(key.Namespace, key.Name); tpl != nil {
			return tpl, nil
		}
		return nil, apierrors.NewNotFound(holdfastv1.GroupVersion.WithResource("servicetemplates").GroupResource(), key.Name)
	}
	tpl := &holdfastv1.ServiceTemplate{}
	if err := r.Client.Get(ctx, key, tpl); err != nil {
		return nil, err
	}
	return tpl, nil
}
