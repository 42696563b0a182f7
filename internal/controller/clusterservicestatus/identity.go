package clusterservicestatus

import (
	"errors"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"holdfast.dev/holdfast/internal/apply"
	"holdfast.dev/holdfast/internal/fleet"
)

// permissionRetry is how often a service set whose ServiceAccount was refused something on the
// cluster looks again: its RBAC there is fixed out of band, and nothing tells Holdfast.
const permissionRetry = time.Minute

// targetClient is the client through which every read and write on the cluster for the service
// set's objects goes (deployment, drift correction, pruning, withdrawal and deletion): as the
// ServiceAccount spec.serviceAccount names, when it names one, else as Holdfast's own identity.
// Drift watches are not this: they read every service set's objects as Holdfast's identity.
//
// A status object whose service set is gone (its finalizer removed by hand) is withdrawn as
// Holdfast's identity: the ServiceAccount went with the declaration, and the inventory holds
// only objects the set applied.
//
// The second reader lists names straight from the cluster as the same identity, never through a
// cache: the cluster's own client would start a metadata informer of the kind.
//
// Every write through it is noted as Holdfast's own (drift.OwnWrites), so that a change made
// under Holdfast's field manager's name by anyone else is told from Holdfast's.
func (s *scope) targetClient() (client.Client, client.Reader, error) {
	c, names, err := s.targetClientUnnoted()
	if err != nil {
		return nil, nil, err
	}
	return s.ownWrites.Client(s.conn.Key(), c), names, nil
}

// targetClientUnnoted is targetClient without noting the writes: for dry runs, which change
// nothing a drift watch will see.
func (s *scope) targetClientUnnoted() (client.Client, client.Reader, error) {
	if s.mcs == nil || s.mcs.Spec.ServiceAccount == nil {
		return s.conn.Client(), s.conn.APIReader(), nil
	}
	sa := s.mcs.Spec.ServiceAccount
	c, err := s.conn.ClientAs(fleet.ServiceAccount{Namespace: sa.Namespace, Name: sa.Name})
	if err != nil {
		return nil, nil, err
	}
	return c, c, nil // an impersonating client has no cache
}

// applier is the Applier of this reconcile, writing through targetClient.
func (s *scope) applier() (*apply.Applier, error) {
	c, names, err := s.targetClient()
	if err != nil {
		return nil, err
	}
	return apply.New(c, apply.WithNameLister(names)), nil
}

// waitsForPermission reports whether an object failed to apply or to be withdrawn because the
// service set's ServiceAccount, or Holdfast acting as it, was refused on the cluster.
func (s *scope) waitsForPermission() bool {
	var ie *fleet.ImpersonationError
	if errors.As(s.withdrawErr, &ie) {
		return true
	}
	for _, o := range s.services {
		if o.result == nil {
			continue
		}
		for _, r := range o.result.Failed() {
			if errors.As(r.Err, &ie) {
				return true
			}
		}
	}
	return false
}
