package install

import (
	"context"
	"fmt"
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling"
	"github.com/fluxcd/pkg/ssa"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// FieldManager owns the fields `holdfast install` applies, as Helm's own field manager owns
// those of a `helm install`.
const FieldManager = "holdfast-install"

// Apply applies objs to the cluster with server-side apply, in stages as `kubectl apply` of the
// export cannot: CRDs and Namespaces first, waited for until they are established, then the
// rest. It returns one line per object saying what changed ("Deployment/ns/name created").
func Apply(ctx context.Context, cfg *rest.Config, objs []*unstructured.Unstructured, timeout time.Duration) ([]string, error) {
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return nil, fmt.Errorf("connecting to the cluster: %w", err)
	}
	poller := polling.NewStatusPoller(c, c.RESTMapper(), polling.Options{})
	m := ssa.NewResourceManager(c, poller, ssa.Owner{Field: FieldManager, Group: "holdfast.dev"})
	opts := ssa.DefaultApplyOptions()
	opts.WaitTimeout = timeout
	cs, err := m.ApplyAllStaged(ctx, objs, opts)
	var lines []string
	if cs != nil {
		for _, e := range cs.Entries {
			lines = append(lines, e.String())
		}
	}
	if err != nil {
		return lines, fmt.Errorf("applying the manifests: %w", err)
	}
	return lines, nil
}
