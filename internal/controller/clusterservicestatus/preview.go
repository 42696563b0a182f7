package clusterservicestatus

import (
	"context"
	"errors"
	"fmt"
	"strings"

	ctrl "sigs.k8s.io/controller-runtime"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/apply"
	"holdfast.dev/holdfast/internal/inventory"
	"holdfast.dev/holdfast/internal/rollout"
)

// previewRequest is the preview the scope's status object is asked for, "" when none: on the
// hub, its service set's rollout's (holdfastv1.PreviewRequest); in a Pull cluster's agent, the
// one the hub published for it (PreviewRequestAnnotation, publishPreview).
func (r *Reconciler) previewRequest(s *scope) string {
	if r.agent() {
		return s.css.Annotations[PreviewRequestAnnotation]
	}
	if s.mcs == nil {
		return ""
	}
	return holdfastv1.PreviewRequest(s.mcs.Status.Rollout)
}

// previewWanted reports whether the status object is asked for a preview it has not recorded
// yet (or whose preview failed, and is tried again). The hub's side of a Pull cluster previews
// nothing: its agent does.
func (r *Reconciler) previewWanted(s *scope) bool {
	request := r.previewRequest(s)
	p := s.css.Status.Preview
	return request != "" && !s.published && (p == nil || p.Request != request || p.Outcome == holdfastv1.PreviewFailed)
}

// previewIfWanted previews when previewWanted says so.
func (r *Reconciler) previewIfWanted(ctx context.Context, s *scope) {
	if r.previewWanted(s) {
		r.preview(ctx, s)
	}
}

// preview previews the revision the status object is asked to (previewRequest) on the cluster,
// changing nothing: it takes the revision's services as rendered for the cluster (its values and
// overrides; in a Pull cluster's agent, as the hub published them), has the cluster's API server
// dry-run apply them (server-side: defaulting, validation, admission, quota), diffs each result
// with the live object (Secret values masked, as drift records are), and lists what pruning and
// the withdrawal of services the revision no longer has would delete. An object the cluster
// refuses, or a service that cannot be rendered, is a result (Refused), not a failure of the
// reconcile. The preview goes to status.preview with the reconcile's one status patch. On the
// hub, a Pull cluster's preview is its agent's: the hub publishes the revision (publishPreview).
func (r *Reconciler) preview(ctx context.Context, s *scope) {
	request := r.previewRequest(s)
	rev := holdfastv1.RevisionOf(request)
	notPreviewed := func(outcome holdfastv1.PreviewOutcome, why string) {
		s.preview = rollout.NotPreviewed(request, outcome, why, s.now)
	}
	if s.clusterProblem != nil {
		notPreviewed(holdfastv1.PreviewFailed, "the cluster cannot be reached: "+s.clusterProblem.message)
		return
	}
	ps, declared, err := r.previewDeclarations(ctx, s, rev)
	if errors.Is(err, ErrNoWork) {
		return // the hub has yet to publish it: its annotation brings the status object back
	}
	if err != nil {
		notPreviewed(holdfastv1.PreviewFailed, err.Error())
		return
	}
	if err := r.readWhole(ctx, s); err != nil {
		notPreviewed(holdfastv1.PreviewFailed, err.Error())
		return
	}
	ps.css, ps.previous = s.css, inventory.IndexOf(s.css.Status.Resources)
	c, names, err := ps.targetClientUnnoted()
	if err != nil {
		notPreviewed(holdfastv1.PreviewFailed, err.Error())
		return
	}
	applier := apply.New(c, apply.WithNameLister(names))
	var changes []holdfastv1.PreviewChange
	kept := map[string]bool{}
	for _, rs := range declared {
		kept[rs.svc.Name] = true
		refuse := func(object, why string) {
			changes = append(changes, holdfastv1.PreviewChange{Service: rs.svc.Name, Object: object, Action: holdfastv1.PreviewRefuse, Diff: []string{why}})
		}
		if rs.err != nil {
			refuse("(rendering)", rs.err.message)
			continue
		}
		opts := r.applyOptions(ctx, ps, rs.svc, resourcesOf(s.css.Status.Resources, rs.svc.Name))
		opts.DryRun, opts.Contend = true, nil
		res, err := applier.Apply(ctx, rs.objects, opts)
		if err != nil {
			refuse("(applying)", err.Error())
			continue
		}
		changes = append(changes, previewChanges(rs.svc.Name, res)...)
	}
	changes = append(changes, withdrawals(s, kept)...)
	if ctx.Err() != nil {
		return // the reconcile ended: no half preview
	}
	s.preview = rollout.NewClusterPreview(request, changes, r.Clock.Now())
	ctrl.LoggerFrom(ctx).V(1).Info("Revision previewed", "revision", rev, "outcome", s.preview.Outcome, "changes", len(changes))
}

// reconcileHeld deploys nothing through a held status object (spec.held: only the revision
// waiting for approval selects its cluster) and previews that revision there; a Pull cluster's
// is published with no services, and the revision to preview, for its agent.
func (r *Reconciler) reconcileHeld(ctx context.Context, s *scope) (ctrl.Result, error) {
	s.mcs = withServices(s.mcs, nil)
	if r.publishes(s) {
		return r.publish(ctx, s)
	}
	s.revisionProblem = &problem{holdfastv1.AwaitingApprovalReason, fmt.Sprintf(
		"Cluster %s/%s is selected only by the revision of MultiClusterService %s that awaits approval: nothing is deployed until it is approved",
		s.css.Namespace, s.css.Spec.Cluster, s.mcs.Name)}
	r.previewIfWanted(ctx, s)
	return ctrl.Result{}, nil
}

// previewDeclarations are the enabled services of revision rev as the cluster would deploy them,
// and the scope to apply them in (the service set with the revision's services): on the hub
// rendered (renderRevision), in the agent as the hub published them for the preview
// (Works.PreviewWork; ErrNoWork until it has).
func (r *Reconciler) previewDeclarations(ctx context.Context, s *scope, rev string) (*scope, []renderedService, error) {
	if !r.agent() {
		snap, prob := r.readRevision(ctx, s, rev)
		if prob != nil {
			return nil, nil, errors.New(prob.message)
		}
		ps, rendered := r.renderRevision(ctx, s, snap)
		return ps, rendered, nil
	}
	w, err := r.Works.PreviewWork(ctx, s.css)
	if err != nil {
		return nil, nil, err
	}
	ps := &scope{mcs: withServices(s.mcs, w.Spec.Services), work: w, now: s.now, cluster: s.cluster, conn: s.conn, ownWrites: s.ownWrites}
	var out []renderedService
	for _, svc := range ps.mcs.Spec.Services {
		if !svc.Disabled {
			rs, _ := ps.workDeclaration(svc)
			out = append(out, rs)
		}
	}
	return ps, out, nil
}

// renderRevision renders the enabled services of the revision snap for the scope's cluster, as
// a reconcile deploying it would, but keeping nothing: neither the renderings (a Helm chart's
// generated values come from the renderings kept for the revision deployed, so they do not show
// as changes) nor the declarations drift is judged against. It returns the scope of the service
// set with the revision's services.
func (r *Reconciler) renderRevision(ctx context.Context, s *scope, snap *rollout.Snapshot) (*scope, []renderedService) {
	ps := &scope{css: s.css, mcs: withServices(s.mcs, snap.Services), revision: snap, now: s.now, cluster: s.cluster, conn: s.conn, ownWrites: s.ownWrites}
	if s.cluster != nil && r.membership(s.mcs, s.cluster) == rollout.Leaving {
		// The revision's selector leaves the cluster out: it declares no service there, and
		// every one is withdrawn (withdrawals lists what that deletes).
		ps.mcs = withServices(s.mcs, nil)
		return ps, nil
	}
	kept := r.renderings().Open(s.css)
	var out []renderedService
	for _, svc := range snap.Services {
		if svc.Disabled {
			continue
		}
		rs, _ := r.renderOne(ctx, ps, kept, nil, svc)
		out = append(out, rs)
	}
	return ps, out
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
// longer has for the cluster (removed, disabled, or all of them when its selector leaves the
// cluster out): withdrawing them deletes them, unless the service set leaves them
// (unmatchPolicy Leave) or adopted them.
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
				Action: holdfastv1.PreviewDelete, Diff: []string{"service " + rs.Service + " is not in the revision for this cluster (removed, disabled, or the cluster no longer selected): withdrawn"}})
		}
	}
	return out
}
