package cluster

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/fleet"
)

// scope is what one reconcile learnt; computeStatus turns it into conditions.
type scope struct {
	cluster *holdfastv1.Cluster
	before  *holdfastv1.Cluster
	now     time.Time

	paused bool
	// connectErr is a problem with the declaration (Secret or kubeconfig); it waits for a change.
	connectErr *reasonError
	// probed is set when a probe ran; probeErr when it failed.
	probed   bool
	probe    fleet.ProbeResult
	probeErr *fleet.ProbeError
	// leaseGrace, for a Pull cluster, is how long after its agent's last renewal it stays
	// Connected: the connection grace, or the duration its Lease claims when longer (an agent
	// run with a longer --heartbeat).
	leaseGrace time.Duration
	// lastConnected is the time of the last successful probe, from memory or, after a restart,
	// from status.
	lastConnected time.Time
	// agentNote says what the Connected condition adds about a Pull cluster's agent's version.
	agentNote string
	// admission is what the cluster serves of the admission policy APIs, read after a successful
	// probe (once per connection, fleet.Connection.Identity); admissionErr when that failed.
	admission    *fleet.Identity
	admissionErr error
	// clusterID is the cluster's identity (fleet.Identity.ClusterID, else what status recorded);
	// duplicates are the other Clusters with the same one, "namespace/name", sorted.
	clusterID  string
	duplicates []string
}

// reasonError is an error with the condition reason it maps to. Its message never holds secret data.
type reasonError struct {
	reason  string
	message string
}

func (e *reasonError) Error() string { return e.message }

// reconcileConnection makes sure the registry holds a connection built from the current
// kubeconfig and probes it.
func (r *Reconciler) reconcileConnection(ctx context.Context, s *scope) {
	key := client.ObjectKeyFromObject(s.cluster)
	conn, err := r.connect(ctx, s.cluster)
	if err != nil {
		var re *reasonError
		if !errors.As(err, &re) {
			re = &reasonError{reason: holdfastv1.ProbingReason, message: err.Error()}
		}
		s.connectErr = re
		r.Fleet.Remove(key)
		return
	}
	s.probed = true
	s.probe, err = conn.Probe(ctx)
	if err == nil {
		// Dated when the probe came back, not when the reconcile began: a recovery is then never
		// dated before requests that still failed.
		conn.MarkConnected(r.Clock.Now())
	} else {
		conn.MarkProbeFailed()
	}
	s.lastConnected = conn.LastConnected()
	if st := s.cluster.Status.LastConnectedTime; st != nil && st.After(s.lastConnected) {
		s.lastConnected = st.Time
	}
	if err != nil {
		var pe *fleet.ProbeError
		if !errors.As(err, &pe) {
			pe = &fleet.ProbeError{Reason: holdfastv1.UnreachableReason, Err: err}
		}
		s.probeErr = pe
		return
	}
	// The connection asks the cluster once and keeps the answer; the service sets' attribution
	// and prevention read the same answer.
	id, err := conn.Identity(ctx)
	if err != nil {
		s.admissionErr = fleet.Redact(err)
		return
	}
	s.admission = &id
}

// connect returns the cluster's connection, reading the kubeconfig Secret only when its metadata
// shows that it changed since the connection was built.
func (r *Reconciler) connect(ctx context.Context, c *holdfastv1.Cluster) (*fleet.Connection, error) {
	key := client.ObjectKeyFromObject(c)
	ref := c.Spec.KubeconfigSecretRef
	secretKey := client.ObjectKey{Namespace: c.Namespace, Name: ref.Name}

	meta := &metav1.PartialObjectMetadata{}
	meta.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	if err := r.Client.Get(ctx, secretKey, meta); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, &reasonError{reason: holdfastv1.SecretNotFoundReason,
				message: fmt.Sprintf("kubeconfig Secret %q not found in namespace %q; create it or fix spec.kubeconfigSecretRef.name", ref.Name, c.Namespace)}
		}
		return nil, fmt.Errorf("reading the metadata of Secret %s: %w", secretKey, err)
	}
	origin := string(meta.UID) + "/" + ref.KeyOrDefault() + "/" + meta.ResourceVersion
	if conn := r.Fleet.Get(key); conn != nil && conn.Origin() == origin {
		return conn, nil
	}

	secret := &corev1.Secret{}
	if err := r.APIReader.Get(ctx, secretKey, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, &reasonError{reason: holdfastv1.SecretNotFoundReason,
				message: fmt.Sprintf("kubeconfig Secret %q not found in namespace %q; create it or fix spec.kubeconfigSecretRef.name", ref.Name, c.Namespace)}
		}
		return nil, fmt.Errorf("reading Secret %s: %w", secretKey, err)
	}
	data, ok := secret.Data[ref.KeyOrDefault()]
	if !ok {
		return nil, &reasonError{reason: holdfastv1.SecretKeyNotFoundReason,
			message: fmt.Sprintf("Secret %q has no key %q (keys: %v); fix spec.kubeconfigSecretRef.key or the Secret", ref.Name, ref.KeyOrDefault(), sortedKeys(secret.Data))}
	}
	conn, err := r.Fleet.Connect(key, origin, data)
	if err != nil {
		reason := holdfastv1.InvalidKubeconfigReason
		if errors.Is(err, fleet.ErrNoCurrentContext) {
			reason = holdfastv1.NoCurrentContextReason
		}
		var ke *fleet.KubeconfigError
		if !errors.As(err, &ke) {
			return nil, err
		}
		return nil, &reasonError{reason: reason,
			message: fmt.Sprintf("key %q of Secret %q: %s", ref.KeyOrDefault(), ref.Name, ke.Error())}
	}
	return conn, nil
}

func sortedKeys(m map[string][]byte) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
