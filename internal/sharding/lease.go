package sharding

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
)

// The member Leases: one per replica, named LeaseName(identity), labelled MemberLabel=group.
const (
	// MemberLabel marks a member Lease; its value is the group (Options.Group).
	MemberLabel = "holdfast.dev/shard-member"
	// ViewAnnotation holds the view the member acts on (View.String).
	ViewAnnotation = "holdfast.dev/shard-view"
	// InstanceAnnotation tells apart two processes started with the same identity.
	InstanceAnnotation = "holdfast.dev/shard-instance"
	leasePrefix        = "holdfast-shard-"
)

// LeaseName is the name of the member Lease of the replica identity.
func LeaseName(identity string) string { return leasePrefix + identity }

// leaseRecord is the replica's Lease as last written.
type leaseRecord = coordinationv1.Lease

// renew writes the replica's Lease with view, creating it if needed. A Lease of the same
// identity renewed by another process within its duration is not taken over: two replicas
// with one identity would handle the same clusters.
func (c *Coordinator) renew(ctx context.Context, view View) error {
	now := metav1.NewMicroTime(c.opts.Clock.Now())
	if c.lease == nil {
		l := &coordinationv1.Lease{}
		err := c.opts.Reader.Get(ctx, client.ObjectKey{Namespace: c.opts.Namespace, Name: LeaseName(c.opts.Identity)}, l)
		switch {
		case apierrors.IsNotFound(err):
			l = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: c.opts.Namespace, Name: LeaseName(c.opts.Identity)}}
			c.fill(l, view, now)
			l.Spec.AcquireTime = &now
			if err := c.opts.Writer.Create(ctx, l); err != nil {
				return fmt.Errorf("creating member Lease %s/%s: %w", l.Namespace, l.Name, err)
			}
			c.lease = l
			return nil
		case err != nil:
			return fmt.Errorf("reading member Lease %s: %w", LeaseName(c.opts.Identity), err)
		}
		if other := l.Annotations[InstanceAnnotation]; other != "" && other != c.instance && l.Spec.RenewTime != nil &&
			now.Sub(l.Spec.RenewTime.Time) < c.opts.LeaseDuration {
			return fmt.Errorf("member Lease %s is renewed by another process with identity %q (instance %s): give each replica its own --shard-id",
				l.Name, c.opts.Identity, other)
		}
		c.lease = l
	}
	l := c.lease.DeepCopy()
	c.fill(l, view, now)
	if err := c.opts.Writer.Update(ctx, l); err != nil {
		c.lease = nil
		return fmt.Errorf("renewing member Lease %s: %w", l.Name, err)
	}
	c.lease = l
	return nil
}

// fill sets what the replica publishes in its Lease.
func (c *Coordinator) fill(l *coordinationv1.Lease, view View, now metav1.MicroTime) {
	if l.Labels == nil {
		l.Labels = map[string]string{}
	}
	l.Labels[MemberLabel] = c.opts.Group
	if l.Annotations == nil {
		l.Annotations = map[string]string{}
	}
	l.Annotations[ViewAnnotation] = view.String()
	l.Annotations[InstanceAnnotation] = c.instance
	l.Spec.HolderIdentity = ptr.To(c.opts.Identity)
	l.Spec.LeaseDurationSeconds = ptr.To(int32(c.opts.LeaseDuration.Round(time.Second) / time.Second))
	l.Spec.RenewTime = &now
}

// read lists the member Leases and returns the live members other than this replica, with the
// views they published. Leases silent for several durations (replicas gone for good: a
// Deployment's pods get new names) are deleted.
func (c *Coordinator) read(ctx context.Context) ([]Member, error) {
	list := &coordinationv1.LeaseList{}
	if err := c.opts.Reader.List(ctx, list, client.InNamespace(c.opts.Namespace), client.MatchingLabels{MemberLabel: c.opts.Group}); err != nil {
		return nil, fmt.Errorf("listing member Leases in %s: %w", c.opts.Namespace, err)
	}
	now := c.opts.Clock.Now()
	names := make(map[string]bool, len(list.Items))
	var members []Member
	for i := range list.Items {
		l := &list.Items[i]
		names[l.Name] = true
		id := ptr.Deref(l.Spec.HolderIdentity, "")
		if id == "" || id == c.opts.Identity || l.DeletionTimestamp != nil {
			continue
		}
		duration := c.opts.LeaseDuration
		if s := ptr.Deref(l.Spec.LeaseDurationSeconds, 0); s > 0 {
			duration = time.Duration(s) * time.Second
		}
		live, silent := c.alive.observe(l.Name, l.ResourceVersion, duration, now)
		if live {
			members = append(members, Member{ID: id, View: ParseView(l.Annotations[ViewAnnotation])})
			continue
		}
		if silent > 3*duration {
			c.deleteExpired(ctx, l)
		}
	}
	c.alive.keep(names)
	return members, nil
}

// deleteExpired deletes a member Lease that has not changed since it was read.
func (c *Coordinator) deleteExpired(ctx context.Context, l *coordinationv1.Lease) {
	err := c.opts.Writer.Delete(ctx, l, client.Preconditions{UID: &l.UID, ResourceVersion: &l.ResourceVersion})
	if client.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) {
		logf.FromContext(ctx).Error(err, "Deleting an expired member Lease failed", "lease", l.Name)
		return
	}
	logf.FromContext(ctx).Info("Deleted the member Lease of a replica gone for good", "lease", l.Name)
}

// deleteLease deletes the replica's own Lease.
func (c *Coordinator) deleteLease(ctx context.Context) error {
	if c.lease == nil {
		return nil
	}
	l := c.lease
	c.lease = nil
	if err := c.opts.Writer.Delete(ctx, l, client.Preconditions{UID: &l.UID}); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting member Lease %s: %w", l.Name, err)
	}
	return nil
}
