package clusterservicestatus

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/apply"
	"holdfast.dev/holdfast/internal/conditions"
	"holdfast.dev/holdfast/internal/drift"
	"holdfast.dev/holdfast/internal/naming"
	"holdfast.dev/holdfast/internal/render"
	"holdfast.dev/holdfast/internal/rendercache"
)

// renderedService is a service rendered for the cluster, or the reason it could not be.
type renderedService struct {
	svc holdfastv1.Service
	// objects are the rendered objects; remembered renderings (see rememberedDeclarations) hold only the
	// objects watches saw drift. count is how many the rendering holds.
	objects []*unstructured.Unstructured
	count   int
	digest  string
	err     *problem
	// transient errors are retried with backoff.
	transient bool
}

// reconcileDeploy carries out what plan decides from the facts gatherFacts gathers: nothing
// until the next full reconcile, the drifts watches saw put back on their own (correctDrifts),
// first or alone, or a full reconcile (deploy).
func (r *Reconciler) reconcileDeploy(ctx context.Context, s *scope) (ctrl.Result, error) {
	r.loadAdmission(ctx, s)
	f, declared := r.gatherFacts(ctx, s)
	s.requested = requestedToken(s.mcs, s.css)
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
		declared = r.renderAll(ctx, s)
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
	s.previous = byRef(previous)
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

// deployService handles one service in a full reconcile: it waits for what it depends on, keeps
// what was deployed when it could not be rendered or, with SyncMode OneTime, once it was
// deployed, and otherwise applies it (applyService). It returns the service's outcome, its
// status entries (prev, what was deployed, unless applied), and a failure worth a retry.
func (r *Reconciler) deployService(ctx context.Context, s *scope, applier *apply.Applier, rs renderedService, prev []holdfastv1.ResourceStatus, waiting *problem) (serviceOutcome, []holdfastv1.ResourceStatus, error) {
	out := serviceOutcome{name: rs.svc.Name, revision: rs.digest, objects: rs.count, waiting: waiting}
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
	out.result, out.applyErr = res, err
	if err != nil {
		return out, prev, fmt.Errorf("applying service %q: %w", rs.svc.Name, err)
	}
	entries := s.withDriftStates(resourcesFromResult(rs.svc.Name, res, prev), r.memory.fights)
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
		if !pol.Detect {
			opts.Recreate = nil
		}
	}
	r.registerApplying(s.css, rs.objects, opts.DefaultNamespace)
	res, err := applier.Apply(ctx, rs.objects, opts)
	if err != nil {
		return res, err
	}
	s.settleCorrections(res, r.memory.fights)
	if pol.WaitsForWindows() {
		s.noteNextWindow(pol.Windows)
	}
	return res, nil
}

// deletedContainers reports whether a drift is the deletion of a Namespace or a CRD: what was in
// it went with it, and watches may never report it (the watch of a CRD's kind ends with the
// CRD), so only a full reconcile puts everything back.
func deletedContainers(drifts []holdfastv1.DriftRecord) bool {
	for _, d := range drifts {
		if d.Type == holdfastv1.DriftDeleted && drift.Contains(d.Group, d.Kind) {
			return true
		}
	}
	return false
}

// namespaceRetry is how often objects waiting for their namespace to exist are tried again.
const namespaceRetry = 5 * time.Second

// ensuredNamespace is the namespace apply creates for svc when missing: its target namespace,
// unless createNamespace is false.
func ensuredNamespace(svc holdfastv1.Service) string {
	if svc.CreateNamespace != nil && !*svc.CreateNamespace {
		return ""
	}
	return svc.Namespace
}

// foreignRetry is how often a service whose objects exist on the cluster without Holdfast having
// created them (adoption Never) looks again: watches select only Holdfast's objects, so nothing
// tells when someone deletes such an object for Holdfast to create its own.
const foreignRetry = time.Minute

// waitsForForeign reports whether an object was left untouched because Holdfast did not create it.
func (s *scope) waitsForForeign() bool {
	for _, o := range s.services {
		if o.result == nil {
			continue
		}
		for _, r := range o.result.Objects {
			if r.Action == apply.Conflict && r.Foreign {
				return true
			}
		}
	}
	return false
}

// waitsForNamespace reports whether an object failed because its namespace does not exist.
func (s *scope) waitsForNamespace() bool {
	for _, o := range s.services {
		if o.result == nil {
			continue
		}
		for _, r := range o.result.Failed() {
			if apply.MissingNamespace(r.Err) != "" {
				return true
			}
		}
	}
	return false
}

// comeBackAfter shortens the wait until the next full reconcile to the opening of a correction
// window some drift waits for, the retry of a refused correction, the correction of a Contested
// object after its backoff, or the next look for a namespace objects wait for, for objects
// Holdfast did not create or for permissions the service set's ServiceAccount lacked, if sooner.
func (r *Reconciler) comeBackAfter(s *scope, nextFull time.Duration) time.Duration {
	after := nextFull
	if s.waitsForNamespace() && namespaceRetry < after {
		after = namespaceRetry
	}
	if s.waitsForForeign() && foreignRetry < after {
		after = foreignRetry
	}
	if s.waitsForPermission() && permissionRetry < after {
		after = permissionRetry
	}
	if !s.nextWindow.IsZero() && s.nextWindow.Sub(s.now) < after {
		after = s.nextWindow.Sub(s.now)
	}
	if wait := healthWait(s); wait > 0 && wait < after {
		after = wait
	}
	if retry := retryUncorrectable(s); retry > 0 && retry < after {
		after = retry
	}
	if next := r.memory.fights.Next(client.ObjectKeyFromObject(s.css)); !next.IsZero() && next.Sub(s.now) < after {
		after = max(next.Sub(s.now), 50*time.Millisecond)
	}
	return after
}

// comparisonDue reports whether, in drift-detection mode, the cluster must be compared with
// the declaration although nothing else is due: the first time in this process (drift made
// while the controller was down), after the cluster reconnected or its link recovered from a
// partition too short to disconnect it (drift made meanwhile, which a watch may not show: it
// may have hung on a dead connection), when the correction of a Contested object waited out its
// backoff, and when drift waiting for a correction window can now be corrected.
func (r *Reconciler) comparisonDue(s *scope) bool {
	if s.mcs.Spec.SyncMode != holdfastv1.SyncModeContinuousWithDriftDetection {
		return false
	}
	last, ok := r.memory.lastCompared(client.ObjectKeyFromObject(s.css))
	if !ok {
		return true
	}
	if c := conditions.Get(s.cluster, holdfastv1.ClusterConnectedCondition); c != nil &&
		!c.LastTransitionTime.Time.Before(last.Truncate(time.Second)) {
		return true
	}
	if s.conn != nil && s.conn.Recovered().After(last) {
		return true
	}
	if r.memory.fights.Due(client.ObjectKeyFromObject(s.css), s.now) {
		return true
	}
	if s.css.Status.DriftedCount > 0 {
		for _, svc := range s.mcs.Spec.Services {
			if pol := s.policy(svc); pol.Action == holdfastv1.DriftActionReport && drift.InWindow(pol.Windows, s.now) {
				return true
			}
		}
	}
	return false
}

// noteNextWindow remembers the earliest opening of windows after now.
func (s *scope) noteNextWindow(windows []holdfastv1.CorrectionWindow) {
	if next := drift.NextWindowStart(windows, s.now); !next.IsZero() && (s.nextWindow.IsZero() || next.Before(s.nextWindow)) {
		s.nextWindow = next
	}
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
		prev := s.previous[ref]
		if entries[i].State == holdfastv1.ResourceInSync && prev.State == holdfastv1.ResourceContested && fights.Live(s.objectKey(ref), s.now) {
			entries[i].State, entries[i].Message, entries[i].LastDrift = prev.State, prev.Message, prev.LastDrift
		}
	}
	return entries
}

// renderAll renders every enabled service, in declaration order, and remembers what each
// declared (see rememberedDeclarations). A service whose inputs did not change since its last rendering in
// this process is not rendered again: what it declared is that rendering (renderService). A
// Helm service is rendered once per revision of its inputs and its rendering kept on the hub
// (package rendercache), so values its chart generates do not change from one reconcile to the
// next.
func (r *Reconciler) renderAll(ctx context.Context, s *scope) []renderedService {
	kept := r.renderings().Open(s.css)
	before := r.memory.declarations(client.ObjectKeyFromObject(s.css))
	var out []renderedService
	inputs := map[string]string{}
	for _, svc := range s.mcs.Spec.Services {
		if svc.Disabled {
			continue
		}
		rs := renderedService{svc: svc}
		req, err := r.renderRequest(ctx, s, svc)
		if err == nil {
			var res *render.Result
			var in string
			if res, in, err = r.renderService(ctx, kept, before[svc.Name], req); err == nil {
				rs.objects, rs.count, rs.digest = res.Objects, len(res.Objects), res.Digest
				if in != "" {
					inputs[svc.Name] = in
				}
			}
		}
		if err != nil {
			rs.err, rs.transient = renderProblem(err)
		}
		out = append(out, rs)
	}
	s.unkept = keepRenderings(ctx, kept, out)
	out = s.withAdmission(out, nil, nil)
	r.rememberDeclarations(ctx, s, out, inputs)
	return out
}

// rememberDeclarations keeps in memory what each service rendered without error declared, made
// from inputs with the digest inputs holds for it, reusing what was kept of the same rendering.
func (r *Reconciler) rememberDeclarations(ctx context.Context, s *scope, rendered []renderedService, inputs map[string]string) {
	key := client.ObjectKeyFromObject(s.css)
	before := r.memory.declarations(key)
	declared := map[string]*declaration{}
	for _, rs := range rendered {
		in, ok := inputs[rs.svc.Name]
		if rs.err != nil || !ok {
			continue
		}
		if d := before[rs.svc.Name]; d != nil && d.input == in && d.revision == rs.digest {
			declared[rs.svc.Name] = d
			continue
		}
		d, err := newDeclaration(in, &render.Result{Objects: rs.objects, Digest: rs.digest}, rs.svc.Namespace)
		if err != nil {
			ctrl.LoggerFrom(ctx).V(1).Info("Not keeping the service's declaration; its drift is corrected after a full render",
				"service", rs.svc.Name, "reason", err.Error())
			continue
		}
		declared[rs.svc.Name] = d
	}
	r.memory.setDeclarations(key, s.css.Spec.Cluster, declared)
}

// rememberedDeclarations returns what every enabled service declares, in declaration order, from
// memory, without rendering anything, when every service's inputs are as at its last render (each
// service's objects are then only those watches saw drift); false when memory does not hold every
// enabled service as its inputs are now, or does not declare an object that drifted.
// asDeployed asks instead for the services as the status object records them applied (their
// revisions), whatever their inputs are now.
func (r *Reconciler) rememberedDeclarations(ctx context.Context, s *scope, asDeployed bool) ([]renderedService, bool) {
	kept := r.memory.declarations(client.ObjectKeyFromObject(s.css))
	if kept == nil {
		return nil, false
	}
	var refs []apply.Ref
	for _, d := range s.drifts {
		refs = append(refs, unversioned(toRef(d.ResourceRef)))
	}
	found := map[apply.Ref]bool{}
	var out []renderedService
	for _, svc := range s.mcs.Spec.Services {
		if svc.Disabled {
			continue
		}
		d := kept[svc.Name]
		if d == nil {
			return nil, false
		}
		if asDeployed {
			if d.revision != ServiceRevision(s.css, svc.Name) {
				return nil, false
			}
		} else if in, err := r.inputDigest(ctx, s, svc); err != nil || in != d.input {
			return nil, false
		}
		rs := renderedService{svc: svc, count: d.objects, digest: d.revision}
		if len(refs) > 0 {
			objs, err := d.find(refs, svc.Namespace)
			if err != nil {
				ctrl.LoggerFrom(ctx).Info("Kept declaration unusable; rendering the service again", "service", svc.Name, "reason", err.Error())
				return nil, false
			}
			for _, ref := range refs {
				if o, ok := objs[ref]; ok && !found[ref] {
					rs.objects, found[ref] = append(rs.objects, o), true
				}
			}
		}
		out = append(out, rs)
	}
	if s.admissionNotAsDeployed(asDeployed) {
		return nil, false
	}
	out = s.withAdmission(out, uniqueRefs(refs), found)
	return out, len(found) == len(uniqueRefs(refs))
}

// uniqueRefs returns refs without repeats.
func uniqueRefs(refs []apply.Ref) map[apply.Ref]bool {
	out := map[apply.Ref]bool{}
	for _, ref := range refs {
		out[ref] = true
	}
	return out
}

// renderProblem turns a rendering error into a condition reason and message.
func renderProblem(err error) (*problem, bool) {
	var se *sourceError
	if errors.As(err, &se) {
		return &problem{se.reason, se.message}, se.transient
	}
	if errors.Is(err, rendercache.ErrUnavailable) {
		return &problem{holdfastv1.SourceUnavailableReason, err.Error()}, true
	}
	if reason := render.ReasonOf(err); reason != "" {
		if render.Transient(err) {
			return &problem{holdfastv1.SourceUnavailableReason, err.Error()}, true
		}
		return &problem{reason, err.Error()}, false
	}
	return &problem{holdfastv1.RenderFailedReason, err.Error()}, false
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

// withdrawRemoved deletes (or, with UnmatchPolicy Leave, orphans) the objects of services that
// are no longer declared or are disabled. Adopted objects are never deleted: they are left in
// place without Holdfast's labels (see apply.Options.Adopt). It returns the entries still to be
// withdrawn.
func (r *Reconciler) withdrawRemoved(ctx context.Context, s *scope, applier *apply.Applier, previous []holdfastv1.ResourceStatus, declared map[string]bool) []holdfastv1.ResourceStatus {
	byService := map[string][]holdfastv1.ResourceStatus{}
	var order []string
	for _, rs := range previous {
		if declared[rs.Service] {
			continue
		}
		if _, ok := byService[rs.Service]; !ok {
			order = append(order, rs.Service)
		}
		byService[rs.Service] = append(byService[rs.Service], rs)
	}
	var left []holdfastv1.ResourceStatus
	for _, name := range order {
		prev := byService[name]
		if s.mcs.Spec.UnmatchPolicy == holdfastv1.UnmatchLeave && s.mcs.Spec.SyncMode != holdfastv1.SyncModeDryRun {
			ctrl.LoggerFrom(ctx).Info("Service removed; leaving its objects in place", "service", name, "objects", len(prev))
			continue
		}
		opts := r.applyOptions(ctx, s, holdfastv1.Service{Name: name}, prev)
		// Withdraw only what is still ours: another service set may have taken an object over
		// (for example while this one was being deleted), and its object must stay. Without an
		// owner annotation an object is deleted only if it still carries all of this service
		// set's labels (apply checks them) and was not adopted (apply lets those go).
		opts.Claim = func(live *unstructured.Unstructured) (string, bool) {
			owner := live.GetAnnotations()[holdfastv1.OwnerAnnotation]
			return owner, owner == "" || owner == s.mcs.Name
		}
		res, err := applier.Delete(ctx, opts.Previous, opts)
		if err != nil {
			s.withdrawErr = errors.Join(s.withdrawErr, fmt.Errorf("withdrawing service %q: %w", name, err))
			left = append(left, prev...)
			continue
		}
		left = append(left, resourcesFromResult(name, res, prev)...)
		if ferr := res.Err(); ferr != nil {
			s.withdrawErr = errors.Join(s.withdrawErr, fmt.Errorf("withdrawing service %q: %w", name, ferr))
		}
	}
	return left
}

// withdrawAll deletes everything in the inventory, for the deletion of the status object. It
// reports whether everything is gone.
func (r *Reconciler) withdrawAll(ctx context.Context, s *scope) (bool, error) {
	mcs := s.mcs
	if mcs == nil {
		// The MultiClusterService is gone; objects still carry its name.
		mcs = &holdfastv1.MultiClusterService{}
		mcs.Name = s.css.Spec.MultiClusterService
		s.mcs = mcs
	}
	applier, err := s.applier()
	if err != nil {
		return false, err
	}
	left := r.withdrawRemoved(ctx, s, applier, s.css.Status.Resources, map[string]bool{})
	s.resources = left
	if s.withdrawErr != nil {
		return false, s.withdrawErr
	}
	if len(inventoryOf(left, "")) > 0 {
		return false, fmt.Errorf("%d objects of ClusterServiceStatus %s not withdrawn yet", len(left), klog.KObj(s.css))
	}
	return true, nil
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
		other := &holdfastv1.MultiClusterService{}
		if err := r.Client.Get(ctx, client.ObjectKey{Name: owner}, other); err != nil || !other.DeletionTimestamp.IsZero() {
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

// declarationChanged reports whether what is declared for the cluster differs from what was
// last reconciled: a new generation, a service added or removed, or a different rendering.
// serviceSetChanged reports whether the service set changed (its generation or sync mode), or
// the rollout gave the status object another revision, since it was last reconciled completely.
func serviceSetChanged(css *holdfastv1.ClusterServiceStatus, mcs *holdfastv1.MultiClusterService) bool {
	return css.Status.ObservedServiceSetGeneration != mcs.Generation || css.Status.SyncMode != mcs.Spec.SyncMode ||
		css.Status.Revision != css.Spec.Revision
}

func declarationChanged(css *holdfastv1.ClusterServiceStatus, mcs *holdfastv1.MultiClusterService, rendered []renderedService) bool {
	if serviceSetChanged(css, mcs) {
		return true
	}
	if len(rendered) != len(css.Status.Services) {
		return true
	}
	for i, rs := range rendered {
		prev := css.Status.Services[i]
		if prev.Name != rs.svc.Name || rs.err != nil || prev.Revision != rs.digest {
			return true
		}
	}
	return false
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
