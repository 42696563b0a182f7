// Command hubcache measures what a tenant's ConfigMaps and Secrets on the hub cost the Holdfast
// controller's memory (issue 27, finding 3). It starts a hub and -clusters (1) target
// (internal/localfleet, without kube-controller-manager) and the controller in this process,
// then creates in a tenant namespace, which no service set uses:
//
//   - -configmaps (300) ConfigMaps of -size (900 KiB) of data each, one key "cm.yaml" holding a
//     small ConfigMap manifest and the rest padding;
//   - -secrets (300) Secrets of -secret-size (100 KiB) of data each, created as client-side
//     `kubectl apply` does: with the annotation kubectl.kubernetes.io/last-applied-configuration
//     holding the Secret, data included;
//   - then a ServiceTemplate reading "cm.yaml" of -referenced (20) of those ConfigMaps and a
//     MultiClusterService deploying it to every target, until Ready.
//
// After each step, once -settle (10s) passed (the last ConfigMap seen by a template first, so
// that the controller's informers hold every one), it reports the Go heap after a forced GC
// (HeapAlloc, HeapInuse) and the process RSS, and each minus the baseline taken with the
// controller running and every Cluster Ready. The program builds with the tree it is in; run it
// from a copy of an older commit (git archive) to compare.
//
// Usage: go run ./bench/hubcache
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/measure"
)

const (
	tenantNamespace = "tenant-a"
	targetNamespace = "bench-hubcache"
	setName         = "bench-hubcache"
	lastApplied     = "kubectl.kubernetes.io/last-applied-configuration"
)

type config struct {
	clusters, configMaps, secrets, referenced int
	size, secretSize                          int
	settle, timeout                           time.Duration
}

func main() {
	var cfg config
	flag.IntVar(&cfg.clusters, "clusters", 1, "number of target clusters")
	flag.IntVar(&cfg.configMaps, "configmaps", 300, "ConfigMaps created in the tenant namespace")
	flag.IntVar(&cfg.size, "size", 900<<10, "bytes of data of each ConfigMap (the API server allows 1 MiB)")
	flag.IntVar(&cfg.secrets, "secrets", 300, "Secrets created in the tenant namespace, with kubectl's last-applied annotation")
	flag.IntVar(&cfg.secretSize, "secret-size", 100<<10, "bytes of data of each Secret (its annotation, base64 in JSON, is a third larger; annotations may hold 256 KiB)")
	flag.IntVar(&cfg.referenced, "referenced", 20, "ConfigMaps a deployed template reads (one key each)")
	flag.DurationVar(&cfg.settle, "settle", 10*time.Second, "wait after each step, before measuring")
	flag.DurationVar(&cfg.timeout, "timeout", 10*time.Minute, "how long to wait for the controller")
	measure.ParseFlags(measure.AtLeast("clusters", 1), measure.AtLeast("configmaps", 1), measure.AtLeast("referenced", 1))
	if cfg.referenced > cfg.configMaps {
		cfg.referenced = cfg.configMaps
	}
	measure.Main(func(ctx context.Context) error { return run(ctx, cfg) })
}

func run(ctx context.Context, cfg config) (retErr error) {
	results := measure.NewTable("measure", "Go heap (HeapAlloc)", "Go heap (HeapInuse)", "process RSS",
		"HeapAlloc − baseline", "RSS − baseline")
	var base measure.Memory
	row := func(label string, s measure.Memory) {
		results.Row(label, measure.MiB(s.Alloc), measure.MiB(s.Inuse), measure.MiB(s.RSS),
			measure.MiB(s.Alloc-base.Alloc), measure.MiB(s.RSS-base.RSS))
	}

	h, err := measure.Start(ctx, measure.Setup{FleetOptions: measure.FleetOptions{Clusters: cfg.clusters}, ReadyTimeout: cfg.timeout})
	if err != nil {
		return err
	}
	defer func() { retErr = errors.Join(retErr, h.Stop()) }()
	if err := h.Hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tenantNamespace}}); err != nil {
		return fmt.Errorf("creating namespace %s: %w", tenantNamespace, err)
	}
	time.Sleep(cfg.settle)
	if base, err = measure.MemoryNow(); err != nil {
		return err
	}
	row("baseline: controller running, every Cluster Ready", base)

	fmt.Fprintf(os.Stderr, "Creating %d ConfigMaps of %d bytes\n", cfg.configMaps, cfg.size)
	if err := measure.Parallel(ctx, 4, cfg.configMaps, func(ctx context.Context, i int) error {
		return h.Hub.Create(ctx, configMap(i, cfg.size))
	}); err != nil {
		return fmt.Errorf("creating the ConfigMaps: %w", err)
	}
	// A template reading the last ConfigMap becomes available once the controller saw it, and
	// with it every ConfigMap created before.
	if err := h.CreateTemplate(ctx, tenantNamespace, "last", "", func(t *holdfastv1.ServiceTemplate) {
		t.Spec.Resources = []holdfastv1.ManifestReference{{Kind: holdfastv1.ManifestSourceConfigMap, Name: configMapName(cfg.configMaps - 1), Key: "cm.yaml"}}
	}); err != nil {
		return err
	}
	if err := waitTemplateAvailable(ctx, h, "last", cfg.timeout); err != nil {
		return err
	}
	time.Sleep(cfg.settle)
	withConfigMaps, err := measure.MemoryNow()
	if err != nil {
		return err
	}
	row(fmt.Sprintf("%d ConfigMaps of %s in namespace %s, none deployed", cfg.configMaps, measure.MiB(int64(cfg.size)), tenantNamespace), withConfigMaps)

	if cfg.secrets > 0 {
		fmt.Fprintf(os.Stderr, "Creating %d Secrets of %d bytes with kubectl's last-applied annotation\n", cfg.secrets, cfg.secretSize)
		if err := measure.Parallel(ctx, 4, cfg.secrets, func(ctx context.Context, i int) error {
			s, err := appliedSecret(i, cfg.secretSize)
			if err != nil {
				return err
			}
			return h.Hub.Create(ctx, s)
		}); err != nil {
			return fmt.Errorf("creating the Secrets: %w", err)
		}
		time.Sleep(cfg.settle)
		withSecrets, err := measure.MemoryNow()
		if err != nil {
			return err
		}
		row(fmt.Sprintf("and %d Secrets of %s with kubectl's last-applied annotation", cfg.secrets, measure.MiB(int64(cfg.secretSize))), withSecrets)
	}

	fmt.Fprintf(os.Stderr, "Deploying a template reading %d ConfigMaps\n", cfg.referenced)
	refs := make([]holdfastv1.ManifestReference, cfg.referenced)
	for i := range refs {
		refs[i] = holdfastv1.ManifestReference{Kind: holdfastv1.ManifestSourceConfigMap, Name: configMapName(i), Key: "cm.yaml"}
	}
	if err := h.CreateTemplate(ctx, tenantNamespace, "referenced", "", func(t *holdfastv1.ServiceTemplate) { t.Spec.Resources = refs }); err != nil {
		return err
	}
	h.ExpectServiceSet(setName)
	if err := h.CreateServiceSet(ctx, setName, holdfastv1.SyncModeContinuous, "referenced",
		holdfastv1.TemplateReference{Name: "referenced", Namespace: tenantNamespace}, targetNamespace); err != nil {
		return err
	}
	if _, err := h.WaitStatuses(ctx, cfg.timeout, measure.ReadyInSync(cfg.referenced)); err != nil {
		return fmt.Errorf("waiting for the deployment: %w", err)
	}
	time.Sleep(cfg.settle)
	deployed, err := measure.MemoryNow()
	if err != nil {
		return err
	}
	row(fmt.Sprintf("and a service set deploying a template that reads %d of the ConfigMaps to %d targets, Ready", cfg.referenced, cfg.clusters), deployed)

	fmt.Println("#### Hub cache")
	fmt.Println()
	fmt.Println(results)
	return nil
}

func configMapName(i int) string { return fmt.Sprintf("big-%04d", i) }

// configMap is the ConfigMap numbered i with size bytes of data: a ConfigMap manifest under
// "cm.yaml" and padding.
func configMap(i, size int) *corev1.ConfigMap {
	manifest := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: %s\ndata:\n  n: %q\n",
		configMapName(i), targetNamespace, fmt.Sprint(i))
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: tenantNamespace, Name: configMapName(i)},
		Data:       map[string]string{"cm.yaml": manifest, "padding": strings.Repeat("x", max(size-len(manifest), 0))},
	}
}

// appliedSecret is the Secret numbered i with size bytes of data, annotated as client-side
// kubectl apply does.
func appliedSecret(i, size int) (*corev1.Secret, error) {
	s := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Namespace: tenantNamespace, Name: fmt.Sprintf("applied-%04d", i)},
		Data:       map[string][]byte{"token": []byte(strings.Repeat("s", size))},
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	s.Annotations = map[string]string{lastApplied: string(b)}
	return s, nil
}

// waitTemplateAvailable waits until the ServiceTemplate named name is SourceAvailable.
func waitTemplateAvailable(ctx context.Context, h *measure.Harness, name string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		t := &holdfastv1.ServiceTemplate{}
		err := h.Hub.Get(ctx, client.ObjectKey{Namespace: tenantNamespace, Name: name}, t)
		if err == nil && t.Status.ObservedGeneration == t.Generation && meta.IsStatusConditionTrue(t.Status.Conditions, holdfastv1.SourceAvailableCondition) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for ServiceTemplate %s/%s to be available: %w (last read: %v)", tenantNamespace, name, ctx.Err(), err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
