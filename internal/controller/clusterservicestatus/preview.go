package clusterservicestatus

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/apply"
	"holdfast.dev/holdfast/internal/inventory"
	"holdfast.dev/holdfast/internal/rollout"
)

// previewWanted reports whether the rollout asks the status object to preview a revision it has
// not previewed yet (or whose preview failed, and is tried again).
func previewWanted(css *holdfastv1.ClusterServiceStatus) bool {
	rev := css.Spec.PreviewRevision
	p := css.Status.Preview
	return rev != "" && (p == nil || p.Revision != rev || p.Outcome == holdfastv1.PreviewFailed)
}

// previewIfWanted previews spec.previewRevision when previewWanted says so.
func (r *Reconciler) previewIfWanted(ctx context.Context, s *scope) {
	if previewWanted(s.css) {
		r.preview(ctx, s)
	}
}

// preview previews spec.previewRevision on the cluster, changing nothing: it renders the
// revision's services for the cluster (its values and overrides), has the cluster's API server
// dry-run apply them (server-side: defaulting, validation, admission, quota), diffs each result
// with the live object (Secret values masked, as drift records are), and lists what pruning and
// the withdrawal of services the revision no longer has would delete. An object the cluster
// refuses, or a service that cannot be rendered, is a result (Refused), not a failure of the
// reconcile. The preview goes to status.preview with the reconcile's one status patch.
func (r *Reconciler) preview(ctx context.Context, s *scope) {
	rev := s.css.Spec.PreviewRevision
	notPreviewed := func(outcome holdfastv1.PreviewOutcome, why string) {
		s.preview = rollout.NotPreviewed(rev, outcome, why, s.now)
	}
	switch {
	case s.published || r.agent():
		notPreviewed(holdfastv1.PreviewUnsupported, "a Pull cluster's agent does not preview revisions yet: nothing was dry-run there")
		return
	case s.clusterProblem != nil:
		notPreviewed(holdfastv1.PreviewFailed, "the cluster cannot be reached: "+s.clusterProblem.message)
		return
	}
	snap, prob := r.readRevision(ctx, s, rev)
	if prob != nil {
		notPreviewed(holdfastv1.PreviewFailed, prob.message)
		return
	}
	if err := r.readWhole(ctx, s); err != nil {
		notPreviewed(holdfastv1.PreviewFailed, err.Error())
		return
	}
	mcs := s.mcs.DeepCopy()
	mcs.Spec.Services = snap.Services
	ps := &scope{css: s.css, whole: true, mcs: mcs, revision: snap, now: s.now, cluster: s.cluster, conn: s.conn,
		ownWrites: s.ownWrites, previous: inventory.IndexOf(s.css.Status.Resources)}
	c, names, err := ps.targetClientUnnoted()
	if err != nil {
		notPreviewed(holdfastv1.PreviewFailed, err.Error())
		return
	}
	applier := apply.New(c, apply.WithNameLister(names))
	kept := r.renderings().Open(s.css)
	var changes []holdfastv1.PreviewChange
	declared := map[string]bool{}
	for _, svc := range snap.Services {
		if svc.Disabled {
			continue
		}
		declared[svc.Name] = true
		refuse := func(object, why string) {
			changes = append(changes, holdfastv1.PreviewChange{Service: svc.Name, Object: object, Action: holdfastv1.PreviewRefuse, Diff: []string{why}})
		}
		req, err := r.renderRequest(ctx, ps, svc)
		var objects []*unstructured.Unstructured
		if err == nil {
			res, rerr := kept.Render(ctx, req.Service, req)
			if err = rerr; err == nil {
				objects = res.Objects
			}
		}
		if err != nil {
			refuse("(rendering)", err.Error())
			continue
		}
		opts := r.applyOptions(ctx, ps, svc, resourcesOf(s.css.Status.Resources, svc.Name))
		opts.DryRun, opts.Contend = true, nil
		res, err := applier.Apply(ctx, objects, opts)
		if err != nil {
			refuse("(applying)", err.Error())
			continue
		}
		changes = append(changes, previewChanges(svc.Name, res)...)
	}
	changes = append(changes, withdrawals(s, declared)...)
	if ctx.Err() != nil {
		return // the reconcile ended: no half preview
	}
	s.preview = rollout.NewClusterPreview(rev, changes, r.Clock.Now())
	ctrl.LoggerFrom(ctx).V(1).Info("Revision previewed", "revision", rev, "outcome", s.preview.Outcome, "changes", len(changes))
}

// previewChanges lists what a dry run found would change.
func previewChanges(service string, res *apply.Result) []holdfastv1.PreviewChange {
	var out []holdfastv1.PreviewChange
	for _, o := range res.Objects {
		ch := holdfastv1.PreviewChange{Service: service, Object: o.Ref.String()}
		switch o.Action {
		case apply.WouldCreate:
			ch.Action = holdfastv1.PreviewCreate
		case apply.WouldUpdate:
			ch.Action = holdfastv1.PreviewUpdate
		case apply.WouldDelete:
			ch.Action = holdfastv1.PreviewDelete
		case apply.Failed, apply.Conflict:
			ch.Action = holdfastv1.PreviewRefuse
			why := o.Message
			if o.Err != nil {
				why = o.Err.Error()
			}
			if o.ConflictWith != "" {
				why = fmt.Sprintf("owned by %s: %s", o.ConflictWith, why)
			}
			ch.Diff = []string{why}
			out = append(out, ch)
			continue
		default:
			continue
		}
		if o.Diff != "" {
			ch.Diff = strings.Split(o.Diff, "\n")
		}
		out = append(out, ch)
	}
	return out
}

// withdrawals lists the objects of the services deployed now that the previewed revision no
// longer has (removed or disabled): withdrawing them deletes them, unless the service set
// leaves them (unmatchPolicy Leave) or adopted them.
func withdrawals(s *scope, declared map[string]bool) []holdfastv1.PreviewChange {
	if s.mcs.Spec.UnmatchPolicy == holdfastv1.UnmatchLeave {
		return nil
	}
	gone := map[string]bool{}
	for _, svc := range s.mcs.Spec.Services {
		if !declared[svc.Name] {
			gone[svc.Name] = true
		}
	}
	var out []holdfastv1.PreviewChange
	for _, rs := range s.css.Status.Resources {
		if gone[rs.Service] && !rs.Adopted && rs.State != holdfastv1.ResourceConflict {
			out = append(out, holdfastv1.PreviewChange{Service: rs.Service, Object: toRef(rs.ResourceRef).String(),
				Action: holdfastv1.PreviewDelete, Diff: []string{"service " + rs.Service + " is not in the revision: withdrawn"}})
		}
	}
	return out
}
