package clusterservicestatus

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
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
// them by name (work.PartName). PreviewWorkAnnotation and PreviewWorkPartsAnnotation name the
// same way the work of the revision the status object is to preview, for the preview request
// PreviewRequestAnnotation holds (holdfastv1.PreviewRequest).
const (
	WorkAnnotation             = "holdfast.dev/work"
	WorkPartsAnnotation        = "holdfast.dev/work-parts"
	PreviewWorkAnnotation      = "holdfast.dev/preview-work"
	PreviewWorkPartsAnnotation = "holdfast.dev/preview-work-parts"
	PreviewRequestAnnotation   = "holdfast.dev/preview-request"
)

// publish renders the services of a Pull cluster's status object and publishes them, with those
// of the revision it previews if any, then comes back at the next full reconcile (inputs that
// change before bring it back sooner, as for Push).
func (r *Reconciler) publish(ctx context.Context, s *scope) (ctrl.Result, error) {
	s.published = true
	key := client.ObjectKeyFromObject(s.css)
	w := work.Work{ServiceSet: s.mcs.Name, Generation: s.mcs.Generation, Revision: s.css.Spec.Revision, Spec: work.ServiceSetSpec(s.mcs.Spec),
		Requested: s.mcs.Annotations[holdfastv1.ReconcileRequestedAtAnnotation], Services: publishedServices(r.renderAll(ctx, s))}
	named := map[string]string{}
	digest, err := r.publishWork(ctx, s, w, WorkAnnotation, WorkPartsAnnotation, named)
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := r.publishPreview(ctx, s, named); err != nil {
		return ctrl.Result{}, err
	}
	if len(named) > 0 {
		before := s.css.DeepCopy()
		if s.css.Annotations == nil {
			s.css.Annotations = map[string]string{}
		}
		maps.Copy(s.css.Annotations, named)
		if err := r.Client.Patch(ctx, s.css, client.MergeFrom(before)); err != nil {
			return ctrl.Result{}, fmt.Errorf("naming the work of ClusterServiceStatus %s: %w", key, err)
		}
		ctrl.LoggerFrom(ctx).Info("Published the work of a Pull cluster", "digest", digest, "services", len(w.Services),
			"preview", named[PreviewRequestAnnotation])
		// The older works are deleted at the next visit, after everything routine: what the
		// agents wait for, every cluster's new work, goes first (two requests each, not four).
		return ctrl.Result{RequeueAfter: tidyAfter, Priority: new(scheduling.TidyPriority)}, nil
	}
	// Older works are looked for once per digest in this process (after a restart too), not at
	// every reconcile: each look is a list from the API server.
	keep := []string{digest}
	if holdfastv1.PreviewRequest(s.mcs.Status.Rollout) != "" {
		keep = append(keep, s.css.Annotations[PreviewWorkAnnotation])
	}
	if pruned, ok := r.prunedWork.Load(key); !ok || pruned != strings.Join(keep, " ") {
		if err := r.pruneWork(ctx, key, keep...); err != nil {
			return ctrl.Result{}, err
		}
		r.prunedWork.Store(key, strings.Join(keep, " "))
	}
	return ctrl.Result{RequeueAfter: interval(s.mcs)}, nil
}

// publishedServices are the services of a work from their renderings.
func publishedServices(rendered []renderedService) []work.Service {
	var out []work.Service
	for _, rs := range rendered {
		svc := work.Service{Name: rs.svc.Name, Overrides: rs.overrides}
		if rs.err != nil {
			svc.Problem = &work.Problem{Reason: rs.err.reason, Message: rs.err.message, Transient: rs.transient}
		} else {
			svc.Digest, svc.Objects = rs.digest, rs.objects
		}
		out = append(out, svc)
	}
	return out
}

// publishWork publishes w for the scope's status object unless the annotation digestKey already
// names it: its parts are created, and the annotations to name it (digestKey, partsKey) added to
// named. It returns the work's digest.
func (r *Reconciler) publishWork(ctx context.Context, s *scope, w work.Work, digestKey, partsKey string, named map[string]string) (string, error) {
	data, digest, err := work.Encode(w)
	if err != nil {
		return "", err
	}
	if s.css.Annotations[digestKey] == digest {
		return digest, nil
	}
	key := client.ObjectKeyFromObject(s.css)
	parts := work.Parts(key, data, digest, 0)
	for _, part := range parts {
		if err := client.IgnoreAlreadyExists(r.Client.Create(ctx, part)); err != nil {
			if apierrors.IsForbidden(err) {
				err = fmt.Errorf("%w (the controller writes Secrets only in its own namespace and where the Role %s lets it: holdfast cluster add --pull makes it)", err, agentaccess.PublisherName)
			}
			return "", fmt.Errorf("publishing the work of ClusterServiceStatus %s: %w", key, err)
		}
	}
	named[digestKey], named[partsKey] = digest, strconv.Itoa(len(parts))
	return digest, nil
}

// publishPreview publishes, for a Pull cluster's status object whose service set holds a
// revision for approval, that revision's services rendered for the cluster, once per preview
// request: its agent dry-runs them (preview.go). A revision that cannot be read is an error: the
// reconcile is retried.
func (r *Reconciler) publishPreview(ctx context.Context, s *scope, named map[string]string) error {
	request := holdfastv1.PreviewRequest(s.mcs.Status.Rollout)
	if request == "" || s.css.Annotations[PreviewRequestAnnotation] == request {
		return nil
	}
	rev := holdfastv1.RevisionOf(request)
	snap, prob := r.readRevision(ctx, s, rev)
	if prob != nil {
		return fmt.Errorf("publishing the preview of revision %s: %s", rev, prob.message)
	}
	ps, rendered := r.renderRevision(ctx, s, snap)
	w := work.Work{ServiceSet: s.mcs.Name, Generation: s.mcs.Generation, Revision: rev, Spec: work.ServiceSetSpec(ps.mcs.Spec),
		Services: publishedServices(rendered)}
	if _, err := r.publishWork(ctx, s, w, PreviewWorkAnnotation, PreviewWorkPartsAnnotation, named); err != nil {
		return err
	}
	named[PreviewRequestAnnotation] = request
	return nil
}

// tidyAfter is how soon a status object whose new work was published comes back, at
// scheduling.TidyPriority, to delete its older works.
const tidyAfter = time.Second

// pruneWork deletes the parts of works of the status object key other than those with a digest
// keep holds (all of them when it holds none). They are listed from the API server: the hub's
// cache keeps no Secret's labels.
func (r *Reconciler) pruneWork(ctx context.Context, key types.NamespacedName, keep ...string) error {
	list := &corev1.SecretList{}
	if err := r.APIReader.List(ctx, list, client.InNamespace(key.Namespace),
		client.MatchingLabels{work.StatusLabel: naming.LabelValue(key.Name)}); err != nil {
		return fmt.Errorf("listing the works of ClusterServiceStatus %s: %w", key, err)
	}
	for i := range list.Items {
		p := &list.Items[i]
		if p.Type != work.SecretType || slices.Contains(keep, p.Annotations[work.DigestAnnotation]) {
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
