package clusterservicestatus

import (
	"context"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/agentaccess"
	"holdfast.dev/holdfast/internal/naming"
	"holdfast.dev/holdfast/internal/scheduling"
	"holdfast.dev/holdfast/internal/work"
)

// A Pull cluster's status object is not applied from the hub: the hub renders its services and
// publishes them as a work (package work) in the Cluster's namespace, for the cluster's agent,
// which applies them and writes the status object's status. The status object names the work it
// is to apply by its digest (WorkAnnotation); the parts of older works are deleted once it does.

// pullWithdrawalCheck is how often the deletion of a Pull cluster's status object looks whether
// its agent withdrew what it applied.
const pullWithdrawalCheck = 10 * time.Second

// WorkAnnotation, on a Pull cluster's status object, is the digest of the work published for it,
// and WorkPartsAnnotation the number of Secrets it is in (work.Parts), so that its agent reads
// them by name (work.PartName).
const (
	WorkAnnotation      = "holdfast.dev/work"
	WorkPartsAnnotation = "holdfast.dev/work-parts"
)

// publish renders the services of a Pull cluster's status object and publishes them, then comes
// back at the next full reconcile (inputs that change before bring it back sooner, as for Push).
func (r *Reconciler) publish(ctx context.Context, s *scope) (ctrl.Result, error) {
	s.published = true
	w := work.Work{ServiceSet: s.mcs.Name, Generation: s.mcs.Generation, Revision: s.css.Spec.Revision, Spec: work.ServiceSetSpec(s.mcs.Spec),
		Requested: s.mcs.Annotations[holdfastv1.ReconcileRequestedAtAnnotation]}
	for _, rs := range r.renderAll(ctx, s) {
		svc := work.Service{Name: rs.svc.Name, Overrides: rs.overrides}
		if rs.err != nil {
			svc.Problem = &work.Problem{Reason: rs.err.reason, Message: rs.err.message, Transient: rs.transient}
		} else {
			svc.Digest, svc.Objects = rs.digest, rs.objects
		}
		w.Services = append(w.Services, svc)
	}
	data, digest, err := work.Encode(w)
	if err != nil {
		return ctrl.Result{}, err
	}
	if s.css.Annotations[WorkAnnotation] != digest {
		key := client.ObjectKeyFromObject(s.css)
		parts := work.Parts(key, data, digest, 0)
		for _, part := range parts {
			if err := client.IgnoreAlreadyExists(r.Client.Create(ctx, part)); err != nil {
				if apierrors.IsForbidden(err) {
					err = fmt.Errorf("%w (the controller writes Secrets only in its own namespace and where the Role %s lets it: holdfast cluster add --pull makes it)", err, agentaccess.PublisherName)
				}
				return ctrl.Result{}, fmt.Errorf("publishing the work of ClusterServiceStatus %s: %w", key, err)
			}
		}
		before := s.css.DeepCopy()
		if s.css.Annotations == nil {
			s.css.Annotations = map[string]string{}
		}
		s.css.Annotations[WorkAnnotation] = digest
		s.css.Annotations[WorkPartsAnnotation] = strconv.Itoa(len(parts))
		if err := r.Client.Patch(ctx, s.css, client.MergeFrom(before)); err != nil {
			return ctrl.Result{}, fmt.Errorf("naming the work of ClusterServiceStatus %s: %w", key, err)
		}
		ctrl.LoggerFrom(ctx).Info("Published the work of a Pull cluster", "digest", digest, "bytes", len(data), "services", len(w.Services))
		// The older works are deleted at the next visit, after everything routine: what the
		// agents wait for, every cluster's new work, goes first (two requests each, not four).
		return ctrl.Result{RequeueAfter: tidyAfter, Priority: new(scheduling.TidyPriority)}, nil
	}
	// Older works are looked for once per digest in this process (after a restart too), not at
	// every reconcile: each look is a list from the API server.
	key := client.ObjectKeyFromObject(s.css)
	if pruned, ok := r.prunedWork.Load(key); !ok || pruned != digest {
		if err := r.pruneWork(ctx, key, digest); err != nil {
			return ctrl.Result{}, err
		}
		r.prunedWork.Store(key, digest)
	}
	return ctrl.Result{RequeueAfter: interval(s.mcs)}, nil
}

// tidyAfter is how soon a status object whose new work was published comes back, at
// scheduling.TidyPriority, to delete its older works.
const tidyAfter = time.Second

// pruneWork deletes the parts of works of the status object key other than the one with digest
// keep (all of them when keep is ""). They are listed from the API server: the hub's cache
// keeps no Secret's labels.
func (r *Reconciler) pruneWork(ctx context.Context, key types.NamespacedName, keep string) error {
	list := &corev1.SecretList{}
	if err := r.APIReader.List(ctx, list, client.InNamespace(key.Namespace),
		client.MatchingLabels{work.StatusLabel: naming.LabelValue(key.Name)}); err != nil {
		return fmt.Errorf("listing the works of ClusterServiceStatus %s: %w", key, err)
	}
	for i := range list.Items {
		p := &list.Items[i]
		if p.Type != work.SecretType || (keep != "" && p.Annotations[work.DigestAnnotation] == keep) {
			continue
		}
		if err := client.IgnoreNotFound(r.Client.Delete(ctx, p)); err != nil {
			return fmt.Errorf("deleting an old work of ClusterServiceStatus %s: %w", key, err)
		}
	}
	return nil
}

// pullCluster reports whether the status object's Cluster is a Pull cluster.
func (s *scope) pullCluster() bool {
	return s.cluster != nil && s.cluster.Spec.Mode == holdfastv1.ClusterModePull
}
