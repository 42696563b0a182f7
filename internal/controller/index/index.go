package index

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/dependency"
)

// Field index names.
const (
	// StatusByServiceSet indexes ClusterServiceStatuses by spec.multiClusterService.
	StatusByServiceSet = ".spec.multiClusterService"
	// StatusByCluster indexes ClusterServiceStatuses by "<namespace>/<spec.cluster>".
	StatusByCluster = ".spec.cluster"
	// ServiceSetByTemplate indexes MultiClusterServices by "<namespace>/<name>" of each template.
	ServiceSetByTemplate = ".spec.services.template"
	// ServiceSetByDependency indexes MultiClusterServices by the name of each other service set
	// their services depend on (spec.services[].dependsOn "<multiclusterservice>/<service>").
	ServiceSetByDependency = ".spec.services.dependsOn"
	// TemplateBySource indexes ServiceTemplates by "ConfigMap/<name>" and "Secret/<name>" of each
	// object they read (in their own namespace).
	TemplateBySource = ".spec.sources"
)

// Setup registers every index with the manager's cache.
func Setup(ctx context.Context, mgr ctrl.Manager) error {
	return setup(ctx, mgr, append(statusIndexes(),
		index{&holdfastv1.MultiClusterService{}, ServiceSetByTemplate, serviceSetTemplateKeys},
		index{&holdfastv1.MultiClusterService{}, ServiceSetByDependency, serviceSetDependencyKeys},
		index{&holdfastv1.ServiceTemplate{}, TemplateBySource, templateSourceKeys},
	))
}

// SetupStatuses registers the indexes of status objects only, for a manager that reads nothing
// else (a Pull cluster's agent's, package agent).
func SetupStatuses(ctx context.Context, mgr ctrl.Manager) error {
	return setup(ctx, mgr, statusIndexes())
}

// index is one field index.
type index struct {
	obj  client.Object
	name string
	fn   client.IndexerFunc
}

func statusIndexes() []index {
	return []index{
		{&holdfastv1.ClusterServiceStatus{}, StatusByServiceSet, statusServiceSetKeys},
		{&holdfastv1.ClusterServiceStatus{}, StatusByCluster, statusClusterKeys},
	}
}

func setup(ctx context.Context, mgr ctrl.Manager, indexes []index) error {
	idx := mgr.GetFieldIndexer()
	for _, i := range indexes {
		if err := idx.IndexField(ctx, i.obj, i.name, i.fn); err != nil {
			return fmt.Errorf("indexing %T by %s: %w", i.obj, i.name, err)
		}
	}
	return nil
}

// statusServiceSetKeys is the StatusByServiceSet key of a ClusterServiceStatus.
func statusServiceSetKeys(o client.Object) []string {
	return []string{o.(*holdfastv1.ClusterServiceStatus).Spec.MultiClusterService}
}

// statusClusterKeys is the StatusByCluster key of a ClusterServiceStatus: its Cluster, which is
// in its own namespace.
func statusClusterKeys(o client.Object) []string {
	return []string{namespacedKey(o.GetNamespace(), o.(*holdfastv1.ClusterServiceStatus).Spec.Cluster)}
}

// serviceSetTemplateKeys are the ServiceSetByTemplate keys of a MultiClusterService: each
// service's template.
func serviceSetTemplateKeys(o client.Object) []string {
	var keys []string
	for _, s := range o.(*holdfastv1.MultiClusterService).Spec.Services {
		keys = append(keys, namespacedKey(s.Template.Namespace, s.Template.Name))
	}
	return keys
}

// serviceSetDependencyKeys are the ServiceSetByDependency keys of a MultiClusterService: the
// other service sets its services depend on, each once.
func serviceSetDependencyKeys(o client.Object) []string {
	mcs := o.(*holdfastv1.MultiClusterService)
	return dependency.OtherSets(mcs.Name, mcs.Spec.Services)
}

// templateSourceKeys are the TemplateBySource keys of a ServiceTemplate.
func templateSourceKeys(o client.Object) []string {
	return SourceKeys(o.(*holdfastv1.ServiceTemplate))
}

// SourceKeys returns the index keys of the ConfigMaps and Secrets a template reads.
func SourceKeys(t *holdfastv1.ServiceTemplate) []string {
	var keys []string
	for _, r := range t.Spec.Resources {
		keys = append(keys, sourceKey(string(r.Kind), r.Name))
	}
	if k := t.Spec.Kustomize; k != nil {
		for _, f := range k.Files {
			keys = append(keys, sourceKey("ConfigMap", f.ConfigMap))
		}
	}
	if h := t.Spec.Helm; h != nil && h.CredentialsSecretRef != nil {
		keys = append(keys, sourceKey("Secret", h.CredentialsSecretRef.Name))
	}
	if d := t.Spec.Decryption; d != nil {
		keys = append(keys, sourceKey("Secret", d.SecretRef.Name))
	}
	return keys
}

// namespacedKey is "<namespace>/<name>", the key of StatusByCluster and ServiceSetByTemplate.
func namespacedKey(namespace, name string) string { return namespace + "/" + name }

// sourceKey is "<kind>/<name>", the key of TemplateBySource.
func sourceKey(kind, name string) string { return kind + "/" + name }

// StatusesOfServiceSet lists the ClusterServiceStatuses of a MultiClusterService. They are the
// cache's own objects, not copies (a set spans every cluster of the fleet, and its status
// objects are listed on each change of any of them): read them, and DeepCopy one before changing
// it.
func StatusesOfServiceSet(ctx context.Context, c client.Reader, name string) ([]holdfastv1.ClusterServiceStatus, error) {
	list := &holdfastv1.ClusterServiceStatusList{}
	if err := c.List(ctx, list, client.MatchingFields{StatusByServiceSet: name}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing ClusterServiceStatuses of MultiClusterService %s: %w", name, err)
	}
	return list.Items, nil
}

// StatusesOfCluster lists the ClusterServiceStatuses about a Cluster.
func StatusesOfCluster(ctx context.Context, c client.Reader, cluster types.NamespacedName) ([]holdfastv1.ClusterServiceStatus, error) {
	list := &holdfastv1.ClusterServiceStatusList{}
	if err := c.List(ctx, list, client.InNamespace(cluster.Namespace),
		client.MatchingFields{StatusByCluster: namespacedKey(cluster.Namespace, cluster.Name)}); err != nil {
		return nil, fmt.Errorf("listing ClusterServiceStatuses of Cluster %s: %w", cluster, err)
	}
	return list.Items, nil
}

// ServiceSetsUsingTemplate lists the MultiClusterServices that reference a ServiceTemplate.
func ServiceSetsUsingTemplate(ctx context.Context, c client.Reader, template types.NamespacedName) ([]holdfastv1.MultiClusterService, error) {
	list := &holdfastv1.MultiClusterServiceList{}
	if err := c.List(ctx, list, client.MatchingFields{ServiceSetByTemplate: namespacedKey(template.Namespace, template.Name)}); err != nil {
		return nil, fmt.Errorf("listing MultiClusterServices using ServiceTemplate %s: %w", template, err)
	}
	return list.Items, nil
}

// ServiceSetsDependingOn lists the MultiClusterServices with a service that depends on a
// service of the MultiClusterService named name.
func ServiceSetsDependingOn(ctx context.Context, c client.Reader, name string) ([]holdfastv1.MultiClusterService, error) {
	list := &holdfastv1.MultiClusterServiceList{}
	if err := c.List(ctx, list, client.MatchingFields{ServiceSetByDependency: name}); err != nil {
		return nil, fmt.Errorf("listing MultiClusterServices depending on MultiClusterService %s: %w", name, err)
	}
	return list.Items, nil
}

// TemplatesReading lists the ServiceTemplates that read a ConfigMap or Secret (kind is
// "ConfigMap" or "Secret").
func TemplatesReading(ctx context.Context, c client.Reader, kind string, obj types.NamespacedName) ([]holdfastv1.ServiceTemplate, error) {
	list := &holdfastv1.ServiceTemplateList{}
	if err := c.List(ctx, list, client.InNamespace(obj.Namespace), client.MatchingFields{TemplateBySource: sourceKey(kind, obj.Name)}); err != nil {
		return nil, fmt.Errorf("listing ServiceTemplates reading %s %s: %w", kind, obj, err)
	}
	return list.Items, nil
}
