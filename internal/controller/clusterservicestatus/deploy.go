package clusterservicestatus

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/apply"
	"holdfast.dev/holdfast/internal/conditions"
	"holdfast.dev/holdfast/internal/drift"
	"holdfast.dev/holdfast/internal/inventory"
	"holdfast.dev/holdfast/internal/naming"
)

// reconcileDeploy carries out what plan decides from the facts gatherFacts gathers: nothing
// until the next full reconcile, the drifts watches saw put back on their own (correctDrifts),
// first or alone, or a full reconcile (deploy).
func (r *Reconciler) reconcileDeploy(ctx context.Context, s *scope) (ctrl.Result, error) {
	r.loadAdmission(ctx, s)
	f, declared := r.gatherFacts(ctx, s)
	s.requested, s.handled = requestedToken(s.mcs, s.css), handledRequests(s.mcs, s.css)
	switch plan(f) {
	case stepWait:
		return ctrl.Result{RequeueAfter: nextFullReconcile(s.mcs, s.css, s.now).Sub(s.now)}, nil
	case stepCorrect:
		return r.correctDrifts(ctx, s, declared)
	case stepCorrectThenFull:
		return r.correctBeforeDeploy(ctx, s, declared)
	}
	r.takeMarks(s)
	if f.declarations == fromMemory {
		// Memory holds only the drifted objects of each service.
		declared = r.services(ctx, s)
	}
	return r.deploy(ctx, s, declared)
}

// deploy is a full reconcile: it applies every service rendered, in dependency order, prunes
// what a service no longer declares, withdraws the services removed, and watches what it
// applied.
func (r *Reconciler) deploy(ctx context.Context, s *scope, rendered []renderedService) (ctrl.Result, error) {
	if err := r.readWhole(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	css, mcs := s.css, s.mcs
	applier, err := s.applier()
	if err != nil {
		return ctrl.Result{}, err
	}
	s.deployed = true
	previous := css.Status.Resources
	s.previous = inventory.IndexOf(previous)
	var inventory []holdfastv1.ResourceStatus
	var transient []error
	declared, ready := map[string]bool{}, map[string]bool{}
	ordered, dependencyProblems := dependencyOrder(mcs.Name, rendered)
	otherProblems, others := r.setDependencies(ctx, s, ordered)
	for _, rs := range ordered {
		declared[rs.svc.Name] = true
		waiting := cmp.Or(dependencyProblems[rs.svc.Name], otherProblems[rs.svc.Name])
		if waiting == nil {
			if why := dependencyWait(rs.svc, mcs.Name, ready, others); why != "" {
				waiting = &problem{holdfastv1.WaitingForDependenciesReason, why}
			}
		}
		out, entries, err := r.deployService(ctx, s, applier, rs, resourcesOf(previous, rs.svc.Name), waiting)
		if err != nil {
			transient = append(transient, err)
		}
		inventory = append(inventory, entries...)
		ready[rs.svc.Name] = s.readyForDependents(out, entries)
		s.services = append(s.services, out)
	}
	inventory = append(inventory, r.withdrawRemoved(ctx, s, applier, previous, declared)...)
	s.resources = inventory
	r.registerInventory(css, inventory)
	if mcs.Spec.SyncMode == holdfastv1.SyncModeContinuousWithDriftDetection {
		r.watchInventory(ctx, s)
	}
	s.ran = len(transient) == 0
	if len(transient) > 0 {
		return ctrl.Result{}, errors.Join(transient...)
	}
	r.memory.setCompared(client.ObjectKeyFromObject(css), css.Spec.Cluster, s.now)
	return ctrl.Result{RequeueAfter: r.comeBackAfter(s, interval(mcs))}, nil
}

// serviceApplied is the outcome of one service applied (applyService), in a full reconcile or as
// drift corrections (corrections: res holds only the objects they looked at, and the others count
// as applied before), with its status entries from prev, its entries before.
func (r *Reconciler) serviceApplied(s *scope, rs renderedService, res *apply.Result, prev []holdfastv1.ResourceStatus, corrections bool) (serviceOutcome, []holdfastv1.ResourceStatus) {
	out := outcomeOf(rs)
	out.result, out.total = res, len(res.Objects)
	for _, o := range res.Objects {
		if o.Applied {
			out.applied++
		}
	}
	if corrections {
		left := max(rs.count-out.total, 0)
		out.applied, out.total = out.applied+left, out.total+left
	}
	return out, s.withDriftStates(resourcesFromResult(rs.svc.Name, res, prev), r.fights)
}

// deployService handles one service in a full reconcile: it waits for what it depends on, keeps
// what was deployed when it could not be rendered or, with SyncMode OneTime, once it was
// deployed, and otherwise applies it (applyService). It returns the service's outcome, its
// status entries (prev, what was deployed, unless applied), and a failure worth a retry.
func (r *Reconciler) deployService(ctx context.Context, s *scope, applier *apply.Applier, rs renderedService, prev []holdfastv1.ResourceStatus, waiting *problem) (serviceOutcome, []holdfastv1.ResourceStatus, error) {
	out := outcomeOf(rs)
	out.waiting = waiting
	switch {
	case waiting != nil:
		out.revision = ServiceRevision(s.css, rs.svc.Name)
		return out, prev, nil
	case rs.err != nil:
		out.renderErr = rs.err
		// Keep what was deployed; never prune on a render error.
		if rs.transient {
			return out, prev, errors.New(rs.err.message)
		}
		return out, prev, nil
	case s.mcs.Spec.SyncMode == holdfastv1.SyncModeOneTime && deployedOnce(s.css, rs.svc.Name):
		out.kept = true
		out.revision = ServiceRevision(s.css, rs.svc.Name)
		return out, prev, nil
	}
	res, err := r.applyService(ctx, s, applier, rs, prev, false)
	if err != nil {
		out.result, out.applyErr = res, err
		return out, prev, fmt.Errorf("applying service %q: %w", rs.svc.Name, err)
	}
	out, entries := r.serviceApplied(s, rs, res, prev, false)
	if ferr := transientFailures(res); ferr != nil {
		return out, entries, fmt.Errorf("service %q: %w", rs.svc.Name, ferr)
	}
	return out, entries, nil
}

// applyService applies one service's objects with its drift policy, in a full reconcile (every
// object, pruning what prev holds that is no longer declared, creating a missing namespace) or,
// with corrections, only the drifted objects rendered holds (nothing pruned or created but
// them; nil, nil when it holds none). It settles the corrections made and notes the next
// correction window; err is why nothing was applied.
func (r *Reconciler) applyService(ctx context.Context, s *scope, applier *apply.Applier, rs renderedService, prev []holdfastv1.ResourceStatus, corrections bool) (*apply.Result, error) {
	pol := s.policy(rs.svc)
	s.policyProblems = append(s.policyProblems, pol.Problems...)
	if corrections && len(rs.objects) == 0 {
		return nil, nil
	}
	opts := r.applyOptions(ctx, s, rs.svc, prev)
	opts.Correct, opts.IgnoredFields = r.correctFunc(s, rs.svc.Name, pol), pol.IgnoredPaths
	// The immutable policy carries out declared changes too, in any mode: whoever chose Recreate
	// expects their own change of an immutable field made the same way.
	opts.Recreate = pol.Recreates
	if corrections {
		opts.Prune, opts.Corrections, opts.EnsureNamespace = false, true, ""
		opts.Live = r.liveCopy(s)
		if !pol.Detect {
			opts.Recreate = nil
		}
	}
	r.registerApplying(s.css, rs.objects, opts.DefaultNamespace)
	res, err := applier.Apply(ctx, rs.objects, opts)
	if err != nil {
		return res, err
	}
	s.settleCorrections(res, r.fights)
	if pol.WaitsForWindows() {
		s.noteNextWindow(pol.Windows)
	}
	return res, nil
}

// ensuredNamespace is the namespace apply creates for svc when missing: its target namespace,
// unless createNamespace is false.
func ensuredNamespace(svc holdfastv1.Service) string {
	if svc.CreateNamespace != nil && !*svc.CreateNamespace {
		return ""
	}
	return svc.Namespace
}

// withDriftStates gives the drifted objects of entries the state drift handling decided, with
// the drift that put them there. An object in sync whose fight is not over (fights.Live: the
// other manager may change it back any moment) stays Contested, with the drift and the message
// it had: a fight is visible for as long as it lasts, not only between a change and its
// correction.
func (s *scope) withDriftStates(entries []holdfastv1.ResourceStatus, fights *drift.Fights) []holdfastv1.ResourceStatus {
	for i := range entries {
		ref := unversioned(toRef(entries[i].ResourceRef))
		od, ok := s.decisions.get(ref)
		if ok && od.keepsState() {
			entries[i].State, entries[i].Message, entries[i].LastDrift = od.state, od.message, od.detail
			continue
		}
		prev := s.previous[driftRef(ref)]
		if entries[i].State == holdfastv1.ResourceInSync && prev.State == holdfastv1.ResourceContested && fights.Live(s.objectKey(ref), s.now) {
			entries[i].State, entries[i].Message, entries[i].LastDrift = prev.State, prev.Message, prev.LastDrift
		}
	}
	return entries
}

// applyOptions labels every object with Holdfast's marks and its owner, resolves conflicts
// with other MultiClusterServices by priority, and takes over objects Holdfast did not create
// only as the adoption policy says.
func (r *Reconciler) applyOptions(ctx context.Context, s *scope, svc holdfastv1.Service, prev []holdfastv1.ResourceStatus) apply.Options {
	return apply.Options{
		DefaultNamespace: svc.Namespace,
		Labels: map[string]string{
			holdfastv1.ManagedByLabel: holdfastv1.ManagedByValue,
			holdfastv1.OwnerLabel:     naming.LabelValue(s.mcs.Name),
			holdfastv1.ServiceLabel:   svc.Name,
		},
		Annotations: map[string]string{holdfastv1.OwnerAnnotation: s.mcs.Name},
		// Claim refuses only objects another service set manages, and those carry this label.
		ClaimSelector: map[string]string{holdfastv1.ManagedByLabel: holdfastv1.ManagedByValue},
		Previous:      inventoryOf(prev, ""),
		Prune:         true,
		DryRun:        s.mcs.Spec.SyncMode == holdfastv1.SyncModeDryRun,
		Claim:         r.claim(ctx, s),
		Contend:       r.contend(ctx, s),
		Foreign:       notCreatedByHoldfast,
		Adopt:         adoptionOf(s.mcs) == holdfastv1.AdoptionAdopt,
		// Adopted objects say so on the cluster, for other service sets and later declarations.
		AdoptedAnnotation: holdfastv1.AdoptedAnnotation,
		// A missing target namespace is created unless the service says otherwise.
		EnsureNamespace: ensuredNamespace(svc),
		Ignore:          func(live *unstructured.Unstructured) bool { return drift.Exempt(live) },
		Health:          s.healthChecks().Health,
	}
}

// notCreatedByHoldfast reports whether a live object lacks the marks Holdfast applies to what it
// creates (the managed-by label and an owner annotation) or carries the one it sets on what it
// adopted. It is asked only about objects not in this inventory (see apply.Options.Foreign):
// one another service set adopted must be adopted here too, whatever the priorities.
func notCreatedByHoldfast(live *unstructured.Unstructured) bool {
	return live.GetLabels()[holdfastv1.ManagedByLabel] != holdfastv1.ManagedByValue ||
		live.GetAnnotations()[holdfastv1.OwnerAnnotation] == "" ||
		live.GetAnnotations()[holdfastv1.AdoptedAnnotation] != ""
}

// adoptionOf is the adoption policy of mcs, defaulted.
func adoptionOf(mcs *holdfastv1.MultiClusterService) holdfastv1.AdoptionPolicy {
	if mcs.Spec.Adoption == "" {
		return holdfastv1.AdoptionNever
	}
	return mcs.Spec.Adoption
}

// claim decides, for an object another MultiClusterService may own, who keeps it: the higher
// priority wins; on a tie the current owner keeps it, so two equal claims never flap. An
// owner that no longer declares the object (its status does not list it) gives it up.
func (r *Reconciler) claim(ctx context.Context, s *scope) func(live *unstructured.Unstructured) (string, bool) {
	return func(live *unstructured.Unstructured) (string, bool) {
		owner := live.GetAnnotations()[holdfastv1.OwnerAnnotation]
		if owner == "" || owner == s.mcs.Name || live.GetLabels()[holdfastv1.ManagedByLabel] != holdfastv1.ManagedByValue {
			return "", true
		}
		other, _, err := r.serviceSet(ctx, s.css, owner)
		if err != nil || !other.DeletionTimestamp.IsZero() {
			return "", true
		}
		if other.Spec.Priority < s.mcs.Spec.Priority {
			if s.takenFrom == nil {
				s.takenFrom = map[string]bool{}
			}
			s.takenFrom[owner] = true
			return "", true
		}
		otherStatus := &holdfastv1.ClusterServiceStatus{}
		key := client.ObjectKey{Namespace: s.css.Namespace, Name: naming.StatusName(owner, s.css.Spec.Cluster)}
		if err := r.APIReader.Get(ctx, key, otherStatus); err != nil || !otherStatus.DeletionTimestamp.IsZero() {
			return "", true
		}
		if c := conditions.Get(otherStatus, holdfastv1.AppliedCondition); c == nil ||
			(c.Status != metav1.ConditionTrue && c.Reason != holdfastv1.ConflictReason) {
			// Its status may not list the object yet: assume it still declares it.
			return owner, false
		}
		entries, err := r.inventoryOfStatus(ctx, otherStatus)
		if err != nil {
			// Its inventory cannot be read whole: assume it still declares the object.
			return owner, false
		}
		ref := apply.RefOf(live)
		for _, rs := range entries {
			if rs.State != holdfastv1.ResourceConflict && unversioned(toRef(rs.ResourceRef)) == unversioned(ref) {
				return owner, false
			}
		}
		return "", true
	}
}

// transientFailures joins the errors of objects that failed for reasons worth retrying as is.
func transientFailures(res *apply.Result) error {
	var errs []error
	for _, o := range res.Failed() {
		if o.Transient {
			errs = append(errs, fmt.Errorf("%s: %w", o.Ref, o.Err))
		}
	}
	return errors.Join(errs...)
}

func deployedOnce(css *holdfastv1.ClusterServiceStatus, service string) bool {
	s := serviceStatus(css, service)
	return s != nil && s.LastAppliedTime != nil
}

// ServiceRevision is the revision (digest of the rendered objects) a status object records for
// one of its services, or "" if it records none.
func ServiceRevision(css *holdfastv1.ClusterServiceStatus, service string) string {
	if s := serviceStatus(css, service); s != nil {
		return s.Revision
	}
	return ""
}

func serviceStatus(css *holdfastv1.ClusterServiceStatus, service string) *holdfastv1.ServiceStatus {
	for i := range css.Status.Services {
		if css.Status.Services[i].Name == service {
			return &css.Status.Services[i]
		}
	}
	return nil
}
