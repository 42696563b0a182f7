package clusterservicestatus

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/apply"
	"holdfast.dev/holdfast/internal/metrics"
	"holdfast.dev/holdfast/internal/render"
	"holdfast.dev/holdfast/internal/rendercache"
)

// renderService renders one service for a full reconcile, and returns the digest of its inputs
// ("" if it has none: the declaration is then not kept). A service whose inputs have the digest
// of prev, its last rendering in this process, is not rendered: prev holds that rendering. A
// Helm service is always rendered through kept, which reads the hub's copy of its rendering:
// another replica may have rendered it again since (the Secret deleted while it held the
// cluster), and the hub's copy is what stays.
func (r *Reconciler) renderService(ctx context.Context, kept *rendercache.Session, prev *rendercache.Declaration, req render.Request) (*render.Result, string, error) {
	input, err := r.digestOf(ctx, req)
	if err != nil {
		input = ""
	}
	if req.Source.Helm == nil && prev != nil && input != "" && prev.Input() == input {
		res, err := prev.Rendering()
		if err == nil {
			metrics.RenderCacheRequest(metrics.RenderHit)
			return res, input, nil
		}
		ctrl.LoggerFrom(ctx).Info("Kept declaration unusable; rendering the service again", "service", req.Service, "reason", err.Error())
	}
	res, err := kept.Render(ctx, req.Service, req)
	switch {
	case err == nil && req.Source.Helm != nil && !kept.Fresh(req.Service):
		metrics.RenderCacheRequest(metrics.RenderKept)
	default:
		metrics.RenderCacheRequest(metrics.RenderMiss)
	}
	return res, input, err
}

// renderings keeps rendered Helm services on the hub between reconciles and restarts.
func (r *Reconciler) renderings() *rendercache.Store {
	return &rendercache.Store{Namespace: r.RenderingsNamespace, Client: r.Client, Reader: r.APIReader, Charts: r.Charts}
}

// keepRenderings keeps what was rendered anew and returns the services whose rendering is not
// kept. When the hub refuses to keep it, the services rendered anew fail with a transient
// problem instead of being applied: applied but not kept, their generated values would change
// again at the next reconcile.
func keepRenderings(ctx context.Context, kept *rendercache.Session, rendered []renderedService) []rendercache.Unkept {
	names := make([]string, 0, len(rendered))
	for _, rs := range rendered {
		names = append(names, rs.svc.Name)
	}
	log := ctrl.LoggerFrom(ctx)
	unkept, err := kept.Save(ctx, names)
	if err != nil {
		log.Error(err, "Cannot keep the renderings of Helm services; they are applied once kept")
		for i := range rendered {
			if rs := &rendered[i]; rs.err == nil && kept.Fresh(rs.svc.Name) {
				rs.objects, rs.digest, rs.transient = nil, "", true
				rs.err = &problem{holdfastv1.SourceUnavailableReason, fmt.Sprintf(
					"service %q: %v; it is applied once its rendering is kept, so that the values its chart generates stay", rs.svc.Name, err)}
			}
		}
	}
	for _, u := range unkept {
		log.Info("Rendering not kept; the service is rendered on every reconcile and values its chart generates change each time",
			"service", u.Service, "reason", u.Reason)
	}
	return unkept
}

// unkeptNote words the services whose rendering is not kept for the Rendered condition, "" if
// there are none.
func unkeptNote(unkept []rendercache.Unkept) string {
	if len(unkept) == 0 {
		return ""
	}
	notes := make([]string, 0, len(unkept))
	for _, u := range unkept {
		notes = append(notes, fmt.Sprintf("service %q is rendered on every reconcile, so values its chart generates change each time: %s", u.Service, u.Reason))
	}
	return "; " + strings.Join(notes, "; ")
}

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
	// overrides name the service's overrides that select the cluster, in order.
	overrides []string
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
	renderOne := func(svc holdfastv1.Service) (renderedService, string) {
		return r.renderOne(ctx, s, kept, before[svc.Name], svc)
	}
	return r.declareEach(ctx, s, renderOne, func(out []renderedService) { s.unkept = keepRenderings(ctx, kept, out) })
}

// renderOne renders svc for the scope's cluster (renderService, with prev, what memory declared
// for it), and returns it with the digest of its inputs.
func (r *Reconciler) renderOne(ctx context.Context, s *scope, kept *rendercache.Session, prev *rendercache.Declaration, svc holdfastv1.Service) (renderedService, string) {
	rs := renderedService{svc: svc}
	req, err := r.renderRequest(ctx, s, svc)
	for _, o := range req.Overrides {
		rs.overrides = append(rs.overrides, o.Name)
	}
	var in string
	if err == nil {
		var res *render.Result
		if res, in, err = r.renderService(ctx, kept, prev, req); err == nil {
			rs.objects, rs.count, rs.digest = res.Objects, len(res.Objects), res.Digest
		}
	}
	if err != nil {
		rs.err, rs.transient = renderProblem(err)
	}
	return rs, in
}

// declareEach declares every enabled service of the scope's service set, in declaration order,
// with declare (which returns its declaration and the digest of its inputs, "" when it has
// none), lets kept, if not nil, see them all, applies the admission policies and remembers what
// each declared (rememberDeclarations): the one loop of rendering on the hub and of taking the
// work in the agent.
func (r *Reconciler) declareEach(ctx context.Context, s *scope, declare func(holdfastv1.Service) (renderedService, string), kept func([]renderedService)) []renderedService {
	var out []renderedService
	inputs := map[string]string{}
	for _, svc := range s.mcs.Spec.Services {
		if svc.Disabled {
			continue
		}
		rs, in := declare(svc)
		if in != "" {
			inputs[svc.Name] = in
		}
		out = append(out, rs)
	}
	if kept != nil {
		kept(out)
	}
	out = s.withAdmission(out, nil, nil)
	r.rememberDeclarations(ctx, s, out, inputs)
	return out
}

// rememberDeclarations keeps in memory what each service rendered without error declared, made
// from inputs with the digest inputs holds for it, reusing what was kept of the same rendering.
func (r *Reconciler) rememberDeclarations(ctx context.Context, s *scope, rendered []renderedService, inputs map[string]string) {
	key := client.ObjectKeyFromObject(s.css)
	before := r.memory.declarations(key)
	declared := map[string]*rendercache.Declaration{}
	for _, rs := range rendered {
		in, ok := inputs[rs.svc.Name]
		if rs.err != nil || !ok {
			continue
		}
		if d := before[rs.svc.Name]; d != nil && d.Input() == in && d.Revision() == rs.digest {
			declared[rs.svc.Name] = d
			continue
		}
		d, err := rendercache.NewDeclaration(in, &render.Result{Objects: rs.objects, Digest: rs.digest}, rs.svc.Namespace)
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
	var keys []rendercache.ObjectKey
	for _, d := range s.drifts {
		ref := unversioned(toRef(d.ResourceRef))
		refs, keys = append(refs, ref), append(keys, declaredKey(ref))
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
			if d.Revision() != ServiceRevision(s.css, svc.Name) {
				return nil, false
			}
		} else if in, err := r.inputDigest(ctx, s, svc); err != nil || in != d.Input() {
			return nil, false
		}
		rs := renderedService{svc: svc, count: d.Count(), digest: d.Revision()}
		if len(refs) > 0 {
			objs, err := d.Find(keys, svc.Namespace)
			if err != nil {
				ctrl.LoggerFrom(ctx).Info("Kept declaration unusable; rendering the service again", "service", svc.Name, "reason", err.Error())
				return nil, false
			}
			for _, ref := range refs {
				if o, ok := objs[declaredKey(ref)]; ok && !found[ref] {
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

// declaredKey is ref's identity in a declaration kept in memory (rendercache.Declaration).
func declaredKey(ref apply.Ref) rendercache.ObjectKey {
	return rendercache.ObjectKey{Group: ref.Group, Kind: ref.Kind, Namespace: ref.Namespace, Name: ref.Name}
}

// digestOf is inputDigest of a render request built already.
func (r *Reconciler) digestOf(ctx context.Context, req render.Request) (string, error) {
	if req.Source.Helm == nil || r.Charts == nil {
		return rendercache.InputDigest(req, nil)
	}
	ch, err := r.Charts.Load(ctx, *req.Source.Helm)
	if err != nil {
		return "", fmt.Errorf("service %q: loading its chart: %w", req.Service, err)
	}
	return rendercache.InputDigest(req, ch)
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
