package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/agentaccess"
	"holdfast.dev/holdfast/internal/fleet"
	"holdfast.dev/holdfast/internal/version"
)

// A Pull cluster is not probed: its agent connects to the hub, with the access this file keeps
// (package agentaccess decides what it is), and reports through its Lease, which stands for the
// probe (reconcileAgent). The hub holds no connection to it.

// reconcileAgent keeps the access of a Pull cluster's agent, and reads its heartbeat as a probe
// result: Connected while the agent renewed its Lease within the connection grace.
func (r *Reconciler) reconcileAgent(ctx context.Context, s *scope) error {
	c := s.cluster
	r.Fleet.Remove(client.ObjectKeyFromObject(c))
	other, err := r.namespaceSharedWith(ctx, c)
	if err != nil {
		return err
	}
	if other != "" {
		s.connectErr = &reasonError{reason: holdfastv1.NamespaceSharedReason, message: fmt.Sprintf(
			"Cluster %s shares namespace %s with Cluster %s: a Pull cluster's agent may read everything in its namespace, so it is alone there; move one of them. Its agent has no access meanwhile",
			c.Name, c.Namespace, other)}
		_, _, binding := agentaccess.Objects(c)
		return client.IgnoreNotFound(r.Client.Delete(ctx, binding))
	}
	if err := r.ensureAgentAccess(ctx, c); err != nil {
		return err
	}
	r.readHeartbeat(ctx, s)
	return nil
}

// namespaceSharedWith returns the name of another Cluster in c's namespace, or "".
func (r *Reconciler) namespaceSharedWith(ctx context.Context, c *holdfastv1.Cluster) (string, error) {
	list := &holdfastv1.ClusterList{}
	if err := r.Client.List(ctx, list, client.InNamespace(c.Namespace)); err != nil {
		return "", fmt.Errorf("listing the Clusters in namespace %s: %w", c.Namespace, err)
	}
	for _, o := range list.Items {
		if o.Name != c.Name {
			return o.Name, nil
		}
	}
	return "", nil
}

// ensureAgentAccess creates the agent's ServiceAccount, Role and RoleBinding, or puts them back
// as agentaccess declares them. A ServiceAccount deleted (holdfast cluster revoke) is created
// anew: tokens of the old one are refused from then on.
func (r *Reconciler) ensureAgentAccess(ctx context.Context, c *holdfastv1.Cluster) error {
	sa, role, binding := agentaccess.Objects(c)
	if err := r.Client.Get(ctx, client.ObjectKeyFromObject(sa), &corev1.ServiceAccount{}); apierrors.IsNotFound(err) {
		if err := r.Client.Create(ctx, sa); client.IgnoreAlreadyExists(err) != nil {
			return fmt.Errorf("creating the agent's ServiceAccount %s/%s: %w", sa.Namespace, sa.Name, err)
		}
		ctrl.LoggerFrom(ctx).Info("Created the agent's identity", "serviceAccount", sa.Name)
	} else if err != nil {
		return fmt.Errorf("reading the agent's ServiceAccount %s/%s: %w", sa.Namespace, sa.Name, err)
	}
	if err := keep(ctx, r.Client, role, &rbacv1.Role{}, func(live *rbacv1.Role) bool {
		return equality.Semantic.DeepEqual(live.Rules, role.Rules)
	}); err != nil {
		return err
	}
	return keep(ctx, r.Client, binding, &rbacv1.RoleBinding{}, func(live *rbacv1.RoleBinding) bool {
		return equality.Semantic.DeepEqual(live.Subjects, binding.Subjects) && live.RoleRef == binding.RoleRef
	})
}

// keep creates want, or replaces live when same says it differs (a RoleBinding's roleRef cannot
// change in place: it is deleted and created).
func keep[T client.Object](ctx context.Context, c client.Client, want T, live T, same func(T) bool) error {
	key := client.ObjectKeyFromObject(want)
	kind := want.GetObjectKind().GroupVersionKind().Kind
	err := c.Get(ctx, key, live)
	switch {
	case apierrors.IsNotFound(err):
		err = client.IgnoreAlreadyExists(c.Create(ctx, want))
	case err != nil:
	case same(live):
		return nil
	default:
		if err = c.Delete(ctx, live); client.IgnoreNotFound(err) == nil {
			err = client.IgnoreAlreadyExists(c.Create(ctx, want))
		}
	}
	if apierrors.IsForbidden(err) {
		err = fmt.Errorf("%w (the controller grants the agent only what it may do itself in the namespace: an admin gives it the Role %s there, as holdfast cluster add --pull does)", err, agentaccess.PublisherName)
	}
	if err != nil {
		return fmt.Errorf("keeping the agent's %s %s: %w", kind, key, err)
	}
	return nil
}

// readHeartbeat turns the agent's Lease into what a probe of a Push cluster gives: the
// cluster's version, identity and admission APIs, and connected as long as it renews the Lease.
func (r *Reconciler) readHeartbeat(ctx context.Context, s *scope) {
	c := s.cluster
	lease := &coordinationv1.Lease{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: agentaccess.LeaseName}, lease)
	s.probed = true
	if apierrors.IsNotFound(err) {
		s.probeErr = &fleet.ProbeError{Reason: holdfastv1.AgentNotReportingReason, Err: fmt.Errorf(
			"no agent has reported yet: apply on the cluster what `holdfast cluster add --pull %s` printed", c.Name)}
		return
	}
	if err != nil {
		s.probeErr = &fleet.ProbeError{Reason: holdfastv1.AgentNotReportingReason, Err: fmt.Errorf("reading the agent's Lease: %w", err)}
		return
	}
	hb, err := agentaccess.HeartbeatOf(lease)
	if err != nil {
		s.probeErr = &fleet.ProbeError{Reason: holdfastv1.AgentNotReportingReason, Err: err}
		return
	}
	supported, note := agentaccess.Support(hb.AgentVersion, r.hubVersion())
	if !supported {
		s.connectErr = &reasonError{reason: holdfastv1.AgentVersionUnsupportedReason, message: note}
		return
	}
	s.agentNote = note
	s.lastConnected = hb.Renewed
	s.leaseGrace = max(r.ConnectionGrace, hb.Duration)
	if s.now.Sub(hb.Renewed) >= s.leaseGrace {
		s.probeErr = &fleet.ProbeError{Reason: holdfastv1.AgentNotReportingReason, Err: errors.New(
			"the agent last reported at " + hb.Renewed.UTC().Format(time.RFC3339) + "; it is corrected for, not reached, from the hub: look at the agent on the cluster")}
		return
	}
	s.probe = fleet.ProbeResult{Version: hb.KubernetesVersion, User: hb.User}
	s.admission = &fleet.Identity{UserName: hb.User, ClusterID: hb.ClusterID,
		MutatingAdmissionPolicies: hb.MutatingAdmissionPolicies, ValidatingAdmissionPolicies: hb.ValidatingAdmissionPolicies}
}

// withdrawAgent ends the access of a deleted Pull cluster's agent, then lets the Cluster go:
// the hub may run no garbage collector to follow the owner references.
func (r *Reconciler) withdrawAgent(ctx context.Context, c *holdfastv1.Cluster) error {
	sa, role, binding := agentaccess.Objects(c)
	bootstrap := &corev1.Secret{}
	bootstrap.Namespace, bootstrap.Name = c.Namespace, agentaccess.BootstrapSecretName
	lease := &coordinationv1.Lease{}
	lease.Namespace, lease.Name = c.Namespace, agentaccess.LeaseName
	for _, o := range []client.Object{binding, role, sa, bootstrap, lease} {
		if err := r.Client.Delete(ctx, o); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("withdrawing the agent's access (%T %s): %w", o, o.GetName(), err)
		}
	}
	before := c.DeepCopy()
	if controllerutil.RemoveFinalizer(c, agentaccess.Finalizer) {
		if err := r.Client.Patch(ctx, c, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("removing the finalizer of Cluster %s: %w", client.ObjectKeyFromObject(c), err)
		}
	}
	return nil
}

// ensureAgentFinalizer makes sure a Pull cluster is held until its agent's access is withdrawn.
func (r *Reconciler) ensureAgentFinalizer(ctx context.Context, c *holdfastv1.Cluster) error {
	if controllerutil.ContainsFinalizer(c, agentaccess.Finalizer) {
		return nil
	}
	before := c.DeepCopy()
	controllerutil.AddFinalizer(c, agentaccess.Finalizer)
	if err := r.Client.Patch(ctx, c, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("adding the finalizer to Cluster %s: %w", client.ObjectKeyFromObject(c), err)
	}
	return nil
}

// hubVersion is the version agents are judged against (agentaccess.Support).
func (r *Reconciler) hubVersion() string {
	if r.Version != "" {
		return r.Version
	}
	return version.Get().Version
}
