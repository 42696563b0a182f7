package clusterservicestatus

import (
	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/apply"
	"holdfast.dev/holdfast/internal/inventory"
)

// resourcesOf returns the status entries of one service.
func resourcesOf(all []holdfastv1.ResourceStatus, service string) []holdfastv1.ResourceStatus {
	var out []holdfastv1.ResourceStatus
	for _, rs := range all {
		if rs.Service == service {
			out = append(out, rs)
		}
	}
	return out
}

// inventoryOf returns the apply inventory held in status entries: the objects Holdfast applied
// (they carry digests), of one service or, with service "", of all. Conflicts and dry-run
// findings were never applied and are not in it.
func inventoryOf(all []holdfastv1.ResourceStatus, service string) []apply.InventoryEntry {
	var out []apply.InventoryEntry
	for _, rs := range all {
		if rs.Desired == "" || rs.State == holdfastv1.ResourceConflict || (service != "" && rs.Service != service) {
			continue
		}
		out = append(out, apply.InventoryEntry{Ref: toRef(rs.ResourceRef), DesiredDigest: rs.Desired, OwnedDigest: rs.Owned, Adopted: rs.Adopted})
	}
	return out
}

func toRef(r holdfastv1.ResourceRef) apply.Ref {
	return apply.Ref{Group: r.Group, Version: r.Version, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name}
}

func fromRef(r apply.Ref) holdfastv1.ResourceRef {
	return holdfastv1.ResourceRef{Group: r.Group, Version: r.Version, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name}
}

// resourcesFromResult turns an apply result into status entries: each object's state from its
// action, digests from the inventory the apply returned. Objects deleted or orphaned are gone.
func resourcesFromResult(service string, res *apply.Result, prev []holdfastv1.ResourceStatus) []holdfastv1.ResourceStatus {
	inv := map[apply.Ref]apply.InventoryEntry{}
	for _, e := range res.Inventory {
		inv[unversioned(e.Ref)] = e
	}
	prevState := inventory.IndexOf(prev)
	seen := map[apply.Ref]bool{}
	var out []holdfastv1.ResourceStatus
	for _, o := range res.Objects {
		k := unversioned(o.Ref)
		if seen[k] {
			continue
		}
		seen[k] = true
		rs := holdfastv1.ResourceStatus{ResourceRef: fromRef(o.Ref), Service: service, Message: o.Message}
		if e, ok := inv[k]; ok {
			// Corrections are applied without the inventory: the status entry keeps the mark.
			rs.Desired, rs.Owned, rs.Adopted = e.DesiredDigest, e.OwnedDigest, e.Adopted || prevState[driftRef(k)].Adopted
		} else if p, ok := prevState[driftRef(k)]; ok && o.Action.KeepsPrevious() {
			// Not applied now, but still in the cluster from before (apply.Result.Inventory
			// holds it, unless the apply was handed only corrections: see apply.Options).
			rs.Desired, rs.Owned, rs.Adopted = p.Desired, p.Owned, p.Adopted
		}
		// Health as the cluster showed the object now, or as it was last seen.
		rs.Health, rs.HealthMessage = prevState[driftRef(k)].Health, prevState[driftRef(k)].HealthMessage
		if o.Applied && o.Health.Status != "" {
			rs.Health, rs.HealthMessage = holdfastv1.HealthStatus(o.Health.Status), o.Health.Message
		}
		_, inInventory := inv[k]
		p, hadPrev := prevState[driftRef(k)]
		if rs, ok := withState(rs, o, p, hadPrev, inInventory); ok {
			out = append(out, rs)
		}
	}
	// Objects still in the inventory the results did not mention (none expected) keep their state.
	for _, e := range res.Inventory {
		k := unversioned(e.Ref)
		if seen[k] {
			continue
		}
		rs := holdfastv1.ResourceStatus{ResourceRef: fromRef(e.Ref), Service: service, State: holdfastv1.ResourceInSync,
			Desired: e.DesiredDigest, Owned: e.OwnedDigest}
		if p, ok := prevState[driftRef(k)]; ok {
			rs.State, rs.Message, rs.Health, rs.HealthMessage = p.State, p.Message, p.Health, p.HealthMessage
		}
		out = append(out, rs)
	}
	return out
}

// withState gives rs, the status entry of o, the state o's action says: from prev, the entry
// before (hadPrev), when nothing was done; false when the object has no entry any more (let go,
// or deleted and no longer in the inventory).
func withState(rs holdfastv1.ResourceStatus, o apply.ObjectResult, prev holdfastv1.ResourceStatus, hadPrev, inInventory bool) (holdfastv1.ResourceStatus, bool) {
	switch o.Action {
	case apply.Created, apply.Configured, apply.Unchanged:
		rs.State, rs.Message = holdfastv1.ResourceInSync, ""
	case apply.Failed:
		rs.State = holdfastv1.ResourceFailed
		if rs.Message == "" && o.Err != nil {
			rs.Message = apply.Message(o.Err)
		}
	case apply.Conflict:
		rs.State, rs.ConflictWith = holdfastv1.ResourceConflict, o.ConflictWith
		// What this side declares, for the other registration of the cluster to compare.
		rs.Desired, rs.Owned, rs.Adopted = o.DesiredDigest, "", false
		if o.Foreign {
			rs.Message = foreignAdvice(o.Message)
			break
		}
		if rs.Message == "" {
			rs.Message = "owned by MultiClusterService " + o.ConflictWith + ", which has the same or a higher priority"
		}
	case apply.WouldCreate:
		rs.State, rs.Diff = holdfastv1.ResourceWouldCreate, o.Diff
	case apply.WouldUpdate:
		rs.State, rs.Diff = holdfastv1.ResourceWouldUpdate, o.Diff
	case apply.WouldDelete:
		rs.State = holdfastv1.ResourceWouldDelete
	case apply.Ignored:
		rs.State = holdfastv1.ResourceIgnored
	case apply.Drifted:
		rs.State = holdfastv1.ResourceDrifted
	case apply.Missing:
		rs.State = holdfastv1.ResourceMissing
	case apply.Skipped:
		if !hadPrev {
			rs.State = holdfastv1.ResourcePending
			break
		}
		rs = prev
	case apply.Orphaned:
		if !inInventory || !hadPrev {
			return rs, false
		}
		// A dry run lets nothing go: the entry stays as it was, saying what would happen.
		rs = prev
		rs.Message = o.Message
	default: // Deleted
		if !inInventory {
			return rs, false
		}
		rs.State = holdfastv1.ResourceFailed
	}
	return rs, true
}

// foreignAdvice completes apply's message about an object Holdfast did not create with what to
// do about it.
func foreignAdvice(msg string) string {
	if msg == "" {
		msg = "exists on the cluster and Holdfast did not create it: left untouched"
	}
	return msg + ". Delete it on the cluster for Holdfast to create its own, or set spec.adoption to Adopt " +
		"to take it over (an adopted object is never deleted by Holdfast)"
}

// unversioned identifies an object regardless of the API version it is served at.
func unversioned(r apply.Ref) apply.Ref {
	r.Version = ""
	return r
}
