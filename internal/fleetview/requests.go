package fleetview

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/naming"
)

// NewCorrectionRequestList is the document `holdfast correct -o json` prints for req.
func NewCorrectionRequestList(req CorrectionRequest) CorrectionRequestList {
	return CorrectionRequestList{Header: Header{cliAPIVersion, KindCorrectionRequest}, Items: []CorrectionRequest{req}}
}

// NewPauseRequestList is the document `holdfast pause|resume -o json` prints for res.
func NewPauseRequestList(res PauseRequest) PauseRequestList {
	return PauseRequestList{Header: Header{cliAPIVersion, KindPauseRequest}, Items: []PauseRequest{res}}
}

// NamespacedName is "namespace/name", or the name of a cluster-scoped object.
func (t TargetRef) NamespacedName() string {
	if t.Namespace == "" {
		return t.Name
	}
	return t.Namespace + "/" + t.Name
}

// FindStatus returns the ClusterServiceStatus of serviceSet on the Cluster; namespace may be
// empty when only one Cluster of that name has one.
func FindStatus(ctx context.Context, c client.Client, serviceSet, namespace, cluster string) (*holdfastv1.ClusterServiceStatus, error) {
	if namespace != "" {
		css := &holdfastv1.ClusterServiceStatus{}
		key := client.ObjectKey{Namespace: namespace, Name: naming.StatusName(serviceSet, cluster)}
		err := c.Get(ctx, key, css)
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("service set %s is not deployed to cluster %s/%s (no ClusterServiceStatus %s)", serviceSet, namespace, cluster, key)
		}
		if err != nil {
			return nil, fmt.Errorf("reading ClusterServiceStatus %s: %w", key, err)
		}
		return css, nil
	}
	found, err := ListStatuses(ctx, c, Filter{ServiceSet: serviceSet, Cluster: cluster})
	if err != nil {
		return nil, err
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("service set %s is not deployed to a cluster named %s", serviceSet, cluster)
	case 1:
		return &found[0], nil
	}
	var names []string
	for i := range found {
		names = append(names, found[i].Namespace+"/"+cluster)
	}
	return nil, fmt.Errorf("clusters %s all have service set %s: give --cluster NAMESPACE/NAME", strings.Join(names, ", "), serviceSet)
}

// PendingClusters names, for a timed-out request to a service set, the clusters that have not
// handled it yet: "; not handled yet by ns/a, ns/b", or "" when it cannot tell or there are none.
func PendingClusters(ctx context.Context, c client.Client, serviceSet, value string) string {
	statuses, err := ListStatuses(ctx, c, Filter{ServiceSet: serviceSet})
	if err != nil {
		return ""
	}
	var pending []string
	for i := range statuses {
		if statuses[i].Status.LastHandledReconcileAt != value {
			pending = append(pending, statuses[i].Namespace+"/"+statuses[i].Spec.Cluster)
		}
	}
	if len(pending) == 0 {
		return ""
	}
	sort.Strings(pending)
	if len(pending) > 10 {
		pending = append(pending[:10], fmt.Sprintf("and %d more", len(pending)-10))
	}
	return "; not handled yet by " + strings.Join(pending, ", ")
}

// PrintCorrectionRequest says what `holdfast correct` asked for and, once the request was
// handled (took after it was made), by how many clusters and how much is still drifted.
func PrintCorrectionRequest(w io.Writer, req CorrectionRequest, took time.Duration) error {
	what := "service set " + req.ServiceSet
	if req.Cluster != "" {
		what += " on cluster " + req.ClusterNamespace + "/" + req.Cluster
	}
	if _, err := fmt.Fprintf(w, "Requested a full reconcile of %s (%s %s: %s=%s).\n", what, req.Target.Kind, req.Target.NamespacedName(),
		holdfastv1.ReconcileRequestedAtAnnotation, req.RequestedAt); err != nil {
		return err
	}
	if !req.Handled {
		return nil
	}
	_, err := fmt.Fprintf(w, "Handled by %s after %s: %s still drifted.\n", Count(*req.Clusters, "cluster"), RoundDuration(took),
		Count(int(*req.DriftedObjects), "object"))
	return err
}

// PrintPauseRequest says what `holdfast pause` or `holdfast resume` did.
func PrintPauseRequest(w io.Writer, res PauseRequest) error {
	var msg string
	switch {
	case !res.Changed && res.Paused:
		msg = "Service set %s was already paused.\n"
	case !res.Changed:
		msg = "Service set %s was not paused.\n"
	case res.Paused:
		msg = "Paused service set %[1]s: Holdfast changes nothing on its clusters until `holdfast resume %[1]s`.\n"
	default:
		msg = "Resumed service set %s.\n"
	}
	_, err := fmt.Fprintf(w, msg, res.ServiceSet)
	return err
}

// RequestReconcile asks for a full reconcile of target, a MultiClusterService or a
// ClusterServiceStatus: it sets holdfast.dev/reconcile-requested-at to the current time with a
// merge patch, made with c's credentials, and returns the value set. It is what `holdfast
// correct` and the web view's "Correct now" and "Resume" do; the API server's refusal (RBAC
// among them) is returned wrapped, its reason intact.
func RequestReconcile(ctx context.Context, c client.Client, target client.Object) (string, error) {
	at := time.Now().UTC().Format(time.RFC3339Nano)
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{
		holdfastv1.ReconcileRequestedAtAnnotation: at,
	}}})
	if err != nil {
		return "", err
	}
	if err := c.Patch(ctx, target, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return "", fmt.Errorf("requesting a reconcile of %s %s: %w", kindOf(target), client.ObjectKeyFromObject(target), err)
	}
	return at, nil
}

// kindOf names the kind of a Holdfast object for messages, whether or not its TypeMeta is set.
func kindOf(obj client.Object) string {
	switch obj.(type) {
	case *holdfastv1.MultiClusterService:
		return "MultiClusterService"
	case *holdfastv1.ClusterServiceStatus:
		return "ClusterServiceStatus"
	}
	return fmt.Sprintf("%T", obj)
}

// SetPaused sets or clears spec.paused of a MultiClusterService with a merge patch, with c's
// credentials: `holdfast pause|resume` and the web view's pause and resume.
func SetPaused(ctx context.Context, c client.Client, serviceSet string, paused bool) (PauseRequest, error) {
	mcs := &holdfastv1.MultiClusterService{}
	if err := c.Get(ctx, client.ObjectKey{Name: serviceSet}, mcs); err != nil {
		return PauseRequest{}, fmt.Errorf("reading MultiClusterService %s: %w", serviceSet, err)
	}
	res := PauseRequest{ServiceSet: serviceSet, Paused: paused, Changed: mcs.Spec.Paused != paused}
	var value any // null removes the field
	if paused {
		value = true
	}
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"paused": value}})
	if err != nil {
		return PauseRequest{}, err
	}
	if err := c.Patch(ctx, mcs, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return PauseRequest{}, fmt.Errorf("setting spec.paused of MultiClusterService %s: %w", serviceSet, err)
	}
	return res, nil
}
