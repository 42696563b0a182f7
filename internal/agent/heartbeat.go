package agent

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"holdfast.dev/holdfast/internal/agentaccess"
	"holdfast.dev/holdfast/internal/fleet"
)

// DefaultHeartbeat is how often the agent renews its Lease: three times as long as a kubelet's
// 10 s, as a cluster whose agent stops reporting keeps its services and their corrections (a
// node whose kubelet stops loses its pods), and the renewals are most of what a large fleet
// asks of the hub while idle (1,000 agents: 33 writes a second instead of 100). The Lease
// claims three heartbeats (90 s), which the hub honours; OCM's klusterlet renews every 60 s.
const DefaultHeartbeat = 30 * time.Second

// Heartbeat renews the agent's Lease on the hub with what the hub learns of a Push cluster by
// probing it: the agent probes its own cluster with the same code (fleet.Connection's Probe and
// Identity).
type Heartbeat struct {
	// Hub is a client of the hub with the agent's credentials.
	Hub client.Client
	// Cluster is the agent's Cluster on the hub.
	Cluster types.NamespacedName
	// Own is the agent's connection to its own cluster.
	Own *fleet.Connection
	// AgentVersion is the agent's own version.
	AgentVersion string
	// Interval is DefaultHeartbeat when zero.
	Interval time.Duration
	Clock    clock.PassiveClock

	// written is the Lease as the last renewal left it: the next renews it without reading it
	// first (one request a beat, as a kubelet's), unless that is refused as stale.
	written *coordinationv1.Lease
}

// Run renews the Lease every Interval until ctx ends. A failure is logged and tried again at the
// next beat: the hub says the agent is not reporting once the grace is over.
func (h *Heartbeat) Run(ctx context.Context) {
	log := ctrl.LoggerFrom(ctx).WithValues("cluster", h.Cluster)
	reported := false
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		if err := h.Beat(ctx); err != nil {
			// Once per outage: the hub away, every beat fails alike.
			if reported {
				log.Error(err, "Reporting to the hub failed; trying again at every heartbeat")
			} else {
				log.V(1).Info("Reporting to the hub failed", "error", err.Error())
			}
			reported = false
			return
		}
		if !reported {
			log.Info("Reporting to the hub")
			reported = true
		}
	}, h.interval())
}

// Beat probes the agent's cluster and renews the Lease with what it found.
func (h *Heartbeat) Beat(ctx context.Context) error {
	now := metav1.NewMicroTime(h.now())
	probe, err := h.Own.Probe(ctx)
	if err != nil {
		return fmt.Errorf("probing the agent's own cluster: %w", err)
	}
	id, err := h.Own.Identity(ctx)
	if err != nil {
		return fmt.Errorf("reading the agent's own cluster's identity: %w", err)
	}
	report := agentaccess.Report{AgentVersion: h.AgentVersion, KubernetesVersion: probe.Version, User: probe.User, ClusterID: id.ClusterID,
		MutatingAdmissionPolicies: id.MutatingAdmissionPolicies, ValidatingAdmissionPolicies: id.ValidatingAdmissionPolicies}
	if h.written != nil {
		lease := h.written.DeepCopy()
		err := h.renew(ctx, lease, report, now)
		if err == nil || (!apierrors.IsConflict(err) && !apierrors.IsNotFound(err)) {
			return err
		}
		// Changed or deleted by someone else: read it again.
	}
	lease := &coordinationv1.Lease{}
	key := client.ObjectKey{Namespace: h.Cluster.Namespace, Name: agentaccess.LeaseName}
	err = h.Hub.Get(ctx, key, lease)
	if apierrors.IsNotFound(err) {
		lease = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	} else if err != nil {
		h.written = nil
		return fmt.Errorf("reading the agent's Lease on the hub: %w", err)
	}
	return h.renew(ctx, lease, report, now)
}

// renew writes lease (created when it has no resourceVersion) with report and the renewal time
// now, and keeps what the hub answered for the next beat.
func (h *Heartbeat) renew(ctx context.Context, lease *coordinationv1.Lease, report agentaccess.Report, now metav1.MicroTime) error {
	var err error
	lease.Labels = map[string]string{agentaccess.Label: h.Cluster.Name}
	lease.Annotations = report.Annotations()
	lease.Spec.HolderIdentity = ptr.To(agentaccess.Username(h.Cluster.Namespace))
	lease.Spec.LeaseDurationSeconds = ptr.To(int32(3 * h.interval() / time.Second))
	lease.Spec.RenewTime = &now
	if lease.ResourceVersion == "" {
		err = h.Hub.Create(ctx, lease)
	} else {
		err = h.Hub.Update(ctx, lease)
	}
	if err != nil {
		h.written = nil
		return fmt.Errorf("renewing the agent's Lease on the hub: %w", err)
	}
	h.written = lease
	return nil
}

func (h *Heartbeat) interval() time.Duration {
	if h.Interval <= 0 {
		return DefaultHeartbeat
	}
	return h.Interval
}

func (h *Heartbeat) now() time.Time {
	if h.Clock == nil {
		return time.Now()
	}
	return h.Clock.Now()
}
