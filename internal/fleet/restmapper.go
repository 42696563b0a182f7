package fleet

import (
	"fmt"
	"net/http"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// leanMapper is the REST mapper of one target cluster. It learns a group version's kinds with one
// discovery request (/apis/<group>/<version>) the first time one of them is asked for, and keeps
// only their mappings, shared with every other cluster that serves them the same way.
//
// controller-runtime's dynamic mapper, which the cache and clients of a cluster use by default,
// loads the cluster's whole discovery on its first question (aggregated discovery) and indexes
// every resource of every group: some 270 KiB per cluster, 270 MiB for a fleet of a thousand
// clusters, for the few kinds a service set declares. The questions Holdfast does not ask in
// normal work (KindFor, ResourcesFor, …) go to such a mapper, built the first time one is asked.
//
// A kind not found is looked up again on the next question (as controller-runtime's mapper
// does), so that a CRD's kind resolves once it is served; Reset forgets what was learnt.
type leanMapper struct {
	discovery discovery.DiscoveryInterface
	newFull   func() (meta.RESTMapper, error)

	mu        sync.RWMutex
	mappings  map[schema.GroupVersionKind]*meta.RESTMapping
	preferred map[string]string // group → preferred version, for questions without a version
	full      meta.RESTMapper
}

var _ meta.ResettableRESTMapper = &leanMapper{}

// NewRESTMapper returns the REST mapper of a target cluster (see leanMapper); it is a
// cluster.Options.MapperProvider.
func NewRESTMapper(cfg *rest.Config, httpClient *http.Client) (meta.RESTMapper, error) {
	d, err := discovery.NewDiscoveryClientForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("building the discovery client: %w", err)
	}
	return &leanMapper{
		discovery: d,
		newFull:   func() (meta.RESTMapper, error) { return apiutil.NewDynamicRESTMapper(cfg, httpClient) },
		mappings:  map[schema.GroupVersionKind]*meta.RESTMapping{},
		preferred: map[string]string{},
	}, nil
}

// RESTMapping returns the mapping of gk in the first of versions the cluster serves it in, or, with
// no version, in its group's preferred version.
func (m *leanMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	versions = nonEmpty(versions)
	if len(versions) == 0 {
		v, err := m.preferredVersion(gk.Group)
		if err != nil {
			return nil, err
		}
		if v == "" {
			return nil, &meta.NoKindMatchError{GroupKind: gk}
		}
		versions = []string{v}
	}
	for _, v := range versions {
		gvk := gk.WithVersion(v)
		m.mu.RLock()
		mapping, ok := m.mappings[gvk]
		m.mu.RUnlock()
		if ok {
			return mapping, nil
		}
		if err := m.learn(gvk.GroupVersion()); err != nil {
			return nil, err
		}
		m.mu.RLock()
		mapping, ok = m.mappings[gvk]
		m.mu.RUnlock()
		if ok {
			return mapping, nil
		}
	}
	return nil, &meta.NoKindMatchError{GroupKind: gk, SearchedVersions: versions}
}

// RESTMappings returns the mapping of RESTMapping: a kind has one resource.
func (m *leanMapper) RESTMappings(gk schema.GroupKind, versions ...string) ([]*meta.RESTMapping, error) {
	mapping, err := m.RESTMapping(gk, versions...)
	if err != nil {
		return nil, err
	}
	return []*meta.RESTMapping{mapping}, nil
}

// learn asks the cluster for the resources of gv and keeps the mappings of its kinds. A group
// version the cluster does not serve is no error: its kinds are not found.
func (m *leanMapper) learn(gv schema.GroupVersion) error {
	list, err := m.discovery.ServerResourcesForGroupVersion(gv.String())
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("discovering the resources of %s: %w", gv, err)
	}
	learnt := map[schema.GroupVersionKind]*meta.RESTMapping{}
	for _, r := range list.APIResources {
		if r.Kind == "" || strings.Contains(r.Name, "/") {
			continue // a subresource
		}
		scope := meta.RESTScopeRoot
		if r.Namespaced {
			scope = meta.RESTScopeNamespace
		}
		mapping := shared(meta.RESTMapping{Resource: gv.WithResource(r.Name), GroupVersionKind: gv.WithKind(r.Kind), Scope: scope})
		learnt[mapping.GroupVersionKind] = mapping
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for gvk, mapping := range learnt {
		m.mappings[gvk] = mapping
	}
	return nil
}

// preferredVersion returns the version the cluster prefers for group, or "" when it does not
// serve the group.
func (m *leanMapper) preferredVersion(group string) (string, error) {
	m.mu.RLock()
	v, ok := m.preferred[group]
	m.mu.RUnlock()
	if ok {
		return v, nil
	}
	groups, err := m.discovery.ServerGroups()
	if err != nil {
		return "", fmt.Errorf("discovering the API groups: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, g := range groups.Groups {
		m.preferred[g.Name] = g.PreferredVersion.Version
	}
	return m.preferred[group], nil
}

// Reset forgets every mapping learnt, so that changed CRDs are discovered again.
func (m *leanMapper) Reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mappings = map[schema.GroupVersionKind]*meta.RESTMapping{}
	m.preferred = map[string]string{}
	m.full = nil
}

// fullMapper returns the controller-runtime mapper for the questions RESTMapping does not answer.
func (m *leanMapper) fullMapper() (meta.RESTMapper, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.full == nil {
		full, err := m.newFull()
		if err != nil {
			return nil, fmt.Errorf("building the REST mapper: %w", err)
		}
		m.full = full
	}
	return m.full, nil
}

// KindFor is answered by the full mapper.
func (m *leanMapper) KindFor(resource schema.GroupVersionResource) (schema.GroupVersionKind, error) {
	full, err := m.fullMapper()
	if err != nil {
		return schema.GroupVersionKind{}, err
	}
	return full.KindFor(resource)
}

// KindsFor is answered by the full mapper.
func (m *leanMapper) KindsFor(resource schema.GroupVersionResource) ([]schema.GroupVersionKind, error) {
	full, err := m.fullMapper()
	if err != nil {
		return nil, err
	}
	return full.KindsFor(resource)
}

// ResourceFor is answered by the full mapper.
func (m *leanMapper) ResourceFor(input schema.GroupVersionResource) (schema.GroupVersionResource, error) {
	full, err := m.fullMapper()
	if err != nil {
		return schema.GroupVersionResource{}, err
	}
	return full.ResourceFor(input)
}

// ResourcesFor is answered by the full mapper.
func (m *leanMapper) ResourcesFor(input schema.GroupVersionResource) ([]schema.GroupVersionResource, error) {
	full, err := m.fullMapper()
	if err != nil {
		return nil, err
	}
	return full.ResourcesFor(input)
}

// ResourceSingularizer is answered by the full mapper.
func (m *leanMapper) ResourceSingularizer(resource string) (string, error) {
	full, err := m.fullMapper()
	if err != nil {
		return "", err
	}
	return full.ResourceSingularizer(resource)
}

func nonEmpty(versions []string) []string {
	out := versions[:0:0]
	for _, v := range versions {
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}

// sharedMappings holds one copy of each mapping any cluster served: a fleet's clusters mostly
// serve the same kinds the same way. Mappings are never changed once made, so they can be shared;
// the set grows with the distinct kinds of the fleet, not with its clusters.
var sharedMappings sync.Map // mappingKey → *meta.RESTMapping

func shared(m meta.RESTMapping) *meta.RESTMapping {
	key := mappingKey{resource: m.Resource, gvk: m.GroupVersionKind, scope: m.Scope.Name()}
	if p, ok := sharedMappings.Load(key); ok {
		return p.(*meta.RESTMapping)
	}
	p, _ := sharedMappings.LoadOrStore(key, &m)
	return p.(*meta.RESTMapping)
}

type mappingKey struct {
	resource schema.GroupVersionResource
	gvk      schema.GroupVersionKind
	scope    meta.RESTScopeName
}
