package clusterservicestatus

import (
	"context"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
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
//
// A revision is read from the status object's namespace, where others may write
// ControllerRevisions, so it is used only when rollout.Verify finds it is the service set's own
// with the data its name stands for, and when the tenancy policy lets the set use every
// template it names. Otherwise it is refused the same way (RevisionRefused, naming the revision
// and what is wrong): it is not replaced by the services as declared now, which may be a
// revision the rollout holds back from this cluster. The MultiClusterService controller puts
// back the revision of the services as declared when it finds it changed (it knows the bytes
// its name stands for); an older one stays refused until the rollout gives the cluster another.
func (r *Reconciler) loadRevision(ctx context.Context, s *scope) {
	name := s.css.Spec.Revision
	if name == "" || s.mcs == nil || r.agent() {
		// In the agent, the work is of the revision the hub chose (deployedRevision).
		return
	}
	snap, prob := r.readRevision(ctx, s, name)
	if prob != nil {
		s.revisionProblem = prob
		return
	}
	s.mcs, s.revision = withServices(s.mcs, snap.Services), snap
}

// withServices is a copy of the service set mcs declaring services: those of a revision, or of
// a published work.
func withServices(mcs *holdfastv1.MultiClusterService, services []holdfastv1.Service) *holdfastv1.MultiClusterService {
	c := mcs.DeepCopy()
	c.Spec.Services = services
	return c
}

// readRevision reads, verifies and admits the revision name of the scope's service set, from
// the status object's namespace (see loadRevision), or says why it cannot be used.
func (r *Reconciler) readRevision(ctx context.Context, s *scope, name string) (*rollout.Snapshot, *problem) {
	cr := &appsv1.ControllerRevision{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: s.css.Namespace, Name: name}, cr); err != nil {
		what := fmt.Sprintf("reading revision %s (ControllerRevision %s/%s): %v", name, s.css.Namespace, name, err)
		if apierrors.IsNotFound(err) {
			what = fmt.Sprintf("revision %s not found (ControllerRevision %s/%s): the rollout of MultiClusterService %s names it; it is made again when the services change",
				name, s.css.Namespace, name, s.mcs.Name)
		}
		return nil, &problem{holdfastv1.RevisionFailedReason, what}
	}
	// A ControllerRevision's data never changes (the API server refuses it): once verified for
	// this service set (UID), its UID names the decoded snapshot, which nothing changes either.
	key := string(cr.UID) + "/" + string(s.mcs.UID)
	if kept, ok := r.revisions.Get(key); ok {
		return kept.(*rollout.Snapshot), nil
	}
	verified, err := rollout.Verify(cr, s.mcs)
	if err == nil {
		err = r.admitSnapshot(s.mcs, cr, verified)
	}
	if err != nil {
		ctrl.LoggerFrom(ctx).Info("Revision refused", "revision", klog.KObj(cr), "reason", err.Error())
		return nil, &problem{holdfastv1.RevisionRefusedReason, err.Error() + ": nothing is deployed from it, what is deployed stays"}
	}
	r.revisions.Add(key, verified)
	return verified, nil
}

// admitSnapshot applies the tenancy policy to the template of every service a revision holds
// (the snapshot's templates are reached only through them), as renderRequest does to each
// service it renders: a revision naming a template the service set may not use is refused as a
// whole.
func (r *Reconciler) admitSnapshot(mcs *holdfastv1.MultiClusterService, cr *appsv1.ControllerRevision, snap *rollout.Snapshot) error {
	var refused []string
	for _, svc := range snap.Services {
		if err := r.Tenancy.Template(mcs, svc.Name, svc.Template.Namespace); err != nil {
			refused = append(refused, err.Error())
		}
	}
	if len(refused) > 0 {
		return fmt.Errorf("ControllerRevision %s/%s names templates MultiClusterService %s may not use: %s",
			cr.Namespace, cr.Name, mcs.Name, strings.Join(refused, "; "))
	}
	return nil
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
