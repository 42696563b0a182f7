package rendercache

import (
	"bytes"
	"context"
	"fmt"

	chart "helm.sh/helm/v4/pkg/chart/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/render"
)

// Session renders the services of one ClusterServiceStatus in one reconcile, using what is
// kept where the inputs did not change, and keeps what it rendered anew (Save). It is not safe
// for concurrent use.
type Session struct {
	store *Store
	owner *holdfastv1.ClusterServiceStatus
	key   types.NamespacedName

	// read is set once the Secret was read. secret is the Secret as read, nil if there is none;
	// kept is its data if it is this owner's.
	read   bool
	secret *corev1.Secret
	kept   map[string][]byte
	// foreign is a Secret of that name that is not Holdfast's; readErr a failure to read it.
	foreign *corev1.Secret
	readErr error

	// decided holds the services Render got to a verdict on, and next what to keep for each of
	// them (nothing for a service that is not kept); fresh those it rendered anew.
	decided map[string]bool
	next    map[string][]byte
	fresh   map[string]bool
}

// Unkept is a service whose rendering is not kept, so that it is rendered on every reconcile
// and values its chart generates change each time. Reason says why and what to do about it.
type Unkept struct {
	Service string
	Reason  string
}

// Render renders a service as render.Render does, except that a Helm service whose inputs are
// those of its kept rendering gets that rendering back instead of a new one.
func (s *Session) Render(ctx context.Context, service string, req render.Request) (*render.Result, error) {
	if req.Source.Helm == nil || s.store.Charts == nil {
		// Not Helm: the render is a function of its inputs already (see the package comment).
		s.decide(service, nil)
		return render.Render(ctx, req, s.store.Charts)
	}
	if s.load(ctx); s.readErr != nil {
		return nil, fmt.Errorf("service %q: %w", service, s.readErr)
	}
	ch, err := s.store.Charts.Load(ctx, *req.Source.Helm)
	if err != nil {
		// Render words the failure as it always does.
		return render.Render(ctx, req, loaded{err: err})
	}
	input, err := InputDigest(req, ch)
	if err != nil {
		s.decide(service, nil)
		return render.Render(ctx, req, loaded{chart: ch})
	}
	if data, ok := s.kept[service]; ok {
		in, res, err := decode(data)
		switch {
		case err != nil:
			ctrl.LoggerFrom(ctx).Info("Kept rendering unusable; rendering the service again",
				"service", service, "secret", klog.KRef(s.key.Namespace, s.key.Name), "reason", err.Error())
		case in == input:
			s.decide(service, data)
			return res, nil
		}
	}
	res, err := render.Render(ctx, req, loaded{chart: ch})
	if err != nil {
		// Undecided: what is kept stays, for when the inputs are fixed.
		return nil, err
	}
	data, err := encode(input, res)
	if err != nil {
		s.decide(service, nil)
		return res, nil
	}
	s.decide(service, data)
	s.fresh[service] = true
	return res, nil
}

// load reads the Secret, once. A Secret that cannot be read makes the Helm services fail with
// ErrUnavailable; one that is someone else's makes the session keep nothing.
func (s *Session) load(ctx context.Context) {
	if s.read {
		return
	}
	s.read = true
	secret := &corev1.Secret{}
	err := s.store.Reader.Get(ctx, s.key, secret)
	switch {
	case apierrors.IsNotFound(err):
		s.loadLegacy(ctx)
	case err != nil:
		s.readErr = fmt.Errorf("%w: reading Secret %s: %w", ErrUnavailable, s.key, err)
	case secret.Type != SecretType:
		s.foreign = secret
	default:
		s.secret = secret
		if ownedBy(secret, s.owner) {
			// A Secret left by an earlier status object of the same name is overwritten.
			s.kept = secret.Data
		}
	}
}

// loadLegacy reads what an earlier Holdfast kept beside the status object (legacyKey), when it is
// the status object's: Save writes it to the store's namespace. It stays there until the status
// object goes (the garbage collector removes it with its owner).
func (s *Session) loadLegacy(ctx context.Context) {
	key := legacyKey(s.owner)
	if key == s.key {
		return
	}
	secret := &corev1.Secret{}
	err := s.store.Reader.Get(ctx, key, secret)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		s.readErr = fmt.Errorf("%w: reading Secret %s: %w", ErrUnavailable, key, err)
	case secret.Type == SecretType && ownedBy(secret, s.owner):
		s.kept = secret.Data
	}
}

func (s *Session) decide(service string, data []byte) {
	s.decided[service], s.next[service] = true, data
}

// Fresh reports whether Render rendered service anew in this session (rather than reusing its
// kept rendering).
func (s *Session) Fresh(service string) bool { return s.fresh[service] }

// Save keeps what the session rendered for services, the declared services in declaration
// order, and drops what is kept for others. It writes only when something changed, and not at
// all when no Helm service was rendered (what is kept then stays, harmlessly: it is used only
// for the inputs it was rendered from). It returns
// the services whose rendering is not kept; an error (wrapping ErrUnavailable) means nothing
// new was kept, and the services rendered anew (Fresh) should not be applied.
func (s *Session) Save(ctx context.Context, services []string) ([]Unkept, error) {
	if !s.read || s.readErr != nil {
		return nil, nil
	}
	data := map[string][]byte{}
	var unkept []Unkept
	size := 0
	for _, name := range services {
		v := s.kept[name]
		if s.decided[name] {
			v = s.next[name]
		}
		switch {
		case v == nil:
		case s.foreign != nil:
			unkept = append(unkept, Unkept{Service: name, Reason: fmt.Sprintf(
				"Secret %s, where Holdfast keeps renderings, is not Holdfast's (type %q, not %q): rename or delete it", s.key, s.foreign.Type, SecretType)})
		case size+len(v) > MaxSize:
			unkept = append(unkept, Unkept{Service: name, Reason: fmt.Sprintf(
				"its rendering is %d bytes compressed, and with the services before it over the %d bytes Secret %s can keep", len(v), MaxSize, s.key)})
		default:
			data[name] = v
			size += len(v)
		}
	}
	if s.foreign != nil || (s.secret != nil && ownedBy(s.secret, s.owner) && sameData(s.kept, data)) {
		return unkept, nil
	}
	if s.secret == nil && len(data) == 0 {
		return unkept, nil
	}
	return unkept, s.store.write(ctx, s.owner, s.secret, data)
}

func sameData(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !bytes.Equal(v, w) {
			return false
		}
	}
	return true
}

// loaded is a render.ChartSource that returns a chart already loaded, or the error loading it
// gave, so that a service is rendered from the very chart its input digest covers.
type loaded struct {
	chart *chart.Chart
	err   error
}

func (l loaded) Load(context.Context, render.Helm) (*chart.Chart, error) { return l.chart, l.err }
