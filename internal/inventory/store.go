package inventory

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/naming"
)

// Store reads and writes the inventories of status objects.
type Store struct {
	// Client writes shards; Reader reads them, straight from the API server (never through an
	// informer, which would hold every inventory in memory).
	Client client.Writer
	Reader client.Reader
	// ShardSize is how many entries stay inline, and about how many a shard holds;
	// DefaultShardSize when not positive.
	ShardSize int
}

// Shards are the shards of one status object as read, by name.
type Shards map[string]*holdfastv1.ClusterServiceInventory

// IncompleteError says that shards a status object names are missing or not what it says.
type IncompleteError struct {
	// Status is the status object's name; Problems say what is wrong with which shard.
	Status   string
	Problems []string
}

func (e *IncompleteError) Error() string {
	return fmt.Sprintf("the inventory of ClusterServiceStatus %s is incomplete: %s", e.Status, strings.Join(e.Problems, "; "))
}

// Load returns every entry of the inventory of css, whose status was read from the API server:
// status.resources when it holds them all, else the entries of the shards it names, in shard
// order, with the shards as read. It returns an *IncompleteError when a named shard is missing
// or not one of css's as named, and another error when the shards could not be read.
func (s Store) Load(ctx context.Context, css *holdfastv1.ClusterServiceStatus) ([]holdfastv1.ResourceStatus, Shards, error) {
	inv := css.Status.Inventory
	if inv == nil {
		return css.Status.Resources, nil, nil
	}
	read, err := s.list(ctx, css)
	if err != nil {
		return nil, nil, err
	}
	var entries []holdfastv1.ResourceStatus
	var problems []string
	for i, name := range inv.Names {
		sh := read[name]
		if sh == nil {
			problems = append(problems, fmt.Sprintf("shard %s is missing", name))
		} else if msg := misfit(sh, css, i); msg != "" {
			problems = append(problems, msg)
		} else {
			entries = append(entries, sh.Spec.Resources...)
		}
	}
	if len(problems) > 0 {
		return nil, nil, &IncompleteError{Status: css.Name, Problems: problems}
	}
	return entries, read, nil
}

// Save writes the shards of entries, css's whole inventory, whose content differs from read (the
// shards Load returned, nil when css was inline), and returns the status to write: a shallow copy
// of css.Status with status.resources and status.inventory as stored. Stale shards are left for
// Prune, after the status names the new ones.
func (s Store) Save(ctx context.Context, css *holdfastv1.ClusterServiceStatus, entries []holdfastv1.ResourceStatus, read Shards) (holdfastv1.ClusterServiceStatusStatus, error) {
	st := css.Status
	current := 0
	if st.Inventory != nil {
		current = len(st.Inventory.Names)
	}
	shards := Layout(entries, current, s.ShardSize)
	if shards == 0 {
		st.Resources, st.Inventory = entries, nil
		return st, nil
	}
	inv := &holdfastv1.InventoryShards{Names: make([]string, shards)}
	for i, part := range Split(entries, shards) {
		name := naming.InventoryName(css.Name, shards, i)
		inv.Names[i] = name
		want := shardSpec(css, i, shards, part)
		if upToDate(read[name], css, want) {
			continue
		}
		if err := s.write(ctx, css, name, want, read[name]); err != nil {
			return st, err
		}
	}
	st.Resources, inv.Omitted = Summary(entries)
	st.Inventory = inv
	return st, nil
}

// shardSpec is what shard i of shards of css holds with entries.
func shardSpec(css *holdfastv1.ClusterServiceStatus, i, shards int, entries []holdfastv1.ResourceStatus) holdfastv1.ClusterServiceInventorySpec {
	return holdfastv1.ClusterServiceInventorySpec{ClusterServiceStatus: css.Name, Shard: int32(i), Shards: int32(shards),
		Count: int32(len(entries)), Resources: entries}
}

// upToDate reports whether have, a shard as read (nil: none), holds want and names css its owner:
// then it is not written.
func upToDate(have *holdfastv1.ClusterServiceInventory, css *holdfastv1.ClusterServiceStatus, want holdfastv1.ClusterServiceInventorySpec) bool {
	return have != nil && equality.Semantic.DeepEqual(have.Spec, want) && ownedBy(have, css)
}

// write creates or updates one shard; have is the shard as read, nil when it was not.
func (s Store) write(ctx context.Context, css *holdfastv1.ClusterServiceStatus, name string, spec holdfastv1.ClusterServiceInventorySpec, have *holdfastv1.ClusterServiceInventory) error {
	sh := &holdfastv1.ClusterServiceInventory{
		ObjectMeta: metav1.ObjectMeta{Namespace: css.Namespace, Name: name,
			Labels: map[string]string{holdfastv1.StatusLabel: naming.LabelValue(css.Name)},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: holdfastv1.GroupVersion.String(), Kind: "ClusterServiceStatus",
				Name: css.Name, UID: css.UID, Controller: ptr.To(true)}}},
		Spec: spec,
	}
	if have == nil {
		err := s.Client.Create(ctx, sh)
		if !apierrors.IsAlreadyExists(err) {
			if err != nil {
				return fmt.Errorf("creating inventory shard %s: %w", klog.KObj(sh), err)
			}
			return nil
		}
		// A stray of an earlier write that the status object never named.
		have = &holdfastv1.ClusterServiceInventory{}
		if err := s.Reader.Get(ctx, client.ObjectKeyFromObject(sh), have); err != nil {
			return fmt.Errorf("reading inventory shard %s: %w", klog.KObj(sh), err)
		}
	}
	// The resourceVersion read makes this an optimistic update.
	sh.ResourceVersion = have.ResourceVersion
	if err := s.Client.Update(ctx, sh); err != nil {
		return fmt.Errorf("updating inventory shard %s: %w", klog.KObj(sh), err)
	}
	return nil
}

// Prune deletes the shards of css that keep does not name: those of an earlier layout, or all of
// them (keep nil) once the inventory is inline again or the status object goes.
func (s Store) Prune(ctx context.Context, css *holdfastv1.ClusterServiceStatus, keep []string) error {
	read, err := s.list(ctx, css)
	if err != nil {
		return err
	}
	kept := map[string]bool{}
	for _, name := range keep {
		kept[name] = true
	}
	var errs []error
	for name, sh := range read {
		if kept[name] {
			continue
		}
		if err := s.Client.Delete(ctx, sh, client.Preconditions{UID: &sh.UID}); client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("deleting inventory shard %s: %w", klog.KObj(sh), err))
		}
	}
	return errors.Join(errs...)
}

// list reads the shards of css in one List, by label, keeping those that name css.
func (s Store) list(ctx context.Context, css *holdfastv1.ClusterServiceStatus) (Shards, error) {
	list := &holdfastv1.ClusterServiceInventoryList{}
	if err := s.Reader.List(ctx, list, client.InNamespace(css.Namespace),
		client.MatchingLabels{holdfastv1.StatusLabel: naming.LabelValue(css.Name)}); err != nil {
		return nil, fmt.Errorf("listing the inventory shards of ClusterServiceStatus %s: %w", klog.KObj(css), err)
	}
	out := Shards{}
	for i := range list.Items {
		if sh := &list.Items[i]; sh.Spec.ClusterServiceStatus == css.Name {
			out[sh.Name] = sh
		}
	}
	return out, nil
}

// ownedBy reports whether sh names css as its owner.
func ownedBy(sh *holdfastv1.ClusterServiceInventory, css *holdfastv1.ClusterServiceStatus) bool {
	for _, ref := range sh.OwnerReferences {
		if ref.UID == css.UID {
			return true
		}
	}
	return false
}
