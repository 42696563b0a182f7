package measure

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Mix is how many objects of each kind a bulk template declares (see MixOf).
type Mix struct {
	Namespaces, ConfigMaps, Secrets, Services, ServiceAccounts, Roles, RoleBindings int
}

// Total is the number of objects.
func (m Mix) Total() int {
	return m.Namespaces + m.ConfigMaps + m.Secrets + m.Services + m.ServiceAccounts + m.Roles + m.RoleBindings
}

func (m Mix) String() string {
	return fmt.Sprintf("%d Namespace, %d ConfigMaps, %d Secrets, %d Services, %d ServiceAccounts, %d Roles, %d RoleBindings",
		m.Namespaces, m.ConfigMaps, m.Secrets, m.Services, m.ServiceAccounts, m.Roles, m.RoleBindings)
}

// MixKinds are the kinds a Mix declares.
var MixKinds = []metav1.GroupVersionKind{
	{Version: "v1", Kind: "Namespace"}, {Version: "v1", Kind: "ConfigMap"}, {Version: "v1", Kind: "Secret"},
	{Version: "v1", Kind: "Service"}, {Version: "v1", Kind: "ServiceAccount"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role"}, {Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "RoleBinding"},
}

// Kinds are the kinds of MixKinds the mix declares objects of (a small mix has no Service,
// Secret or Role).
func (m Mix) Kinds() []metav1.GroupVersionKind {
	counts := []int{m.Namespaces, m.ConfigMaps, m.Secrets, m.Services, m.ServiceAccounts, m.Roles, m.RoleBindings}
	var kinds []metav1.GroupVersionKind
	for i, n := range counts {
		if n > 0 {
			kinds = append(kinds, MixKinds[i])
		}
	}
	return kinds
}

// MixOf splits n objects (n >= 10) into the target Namespace and a mix of kinds a real service
// set carries, all valid on a control plane without kube-controller-manager: mostly ConfigMaps,
// then Secrets, Services (ClusterIP, at most 200: the sandbox's service range is a /24),
// ServiceAccounts, and Roles each bound to a ServiceAccount.
func MixOf(n int) Mix {
	rest := n - 1
	m := Mix{Namespaces: 1}
	m.Services = min(rest*8/100, 200)
	m.Secrets = rest / 10
	m.ServiceAccounts = max(rest*6/100, 1)
	m.Roles = rest * 3 / 100
	m.RoleBindings = m.Roles
	m.ConfigMaps = rest - m.Services - m.Secrets - m.ServiceAccounts - m.Roles - m.RoleBindings
	return m
}

// Manifests renders the mix as multi-document YAML: ns is the Namespace it declares first.
// Namespaced objects carry no namespace: the service's target namespace (ns) applies, as it
// would for a reusable template.
func (m Mix) Manifests(ns string) string {
	b := NewDocs(ns)
	for i := range m.ConfigMaps {
		b.Add(configMapDoc, i, i%50, 1024+i, i%50, ns)
	}
	for i := range m.Secrets {
		b.Add(secretDoc, i, i%50, i, i)
	}
	for i := range m.Services {
		b.Add(serviceDoc, i, i, i)
	}
	for i := range m.ServiceAccounts {
		b.Add(serviceAccountDoc, i)
	}
	for i := range m.Roles {
		b.Add(roleDoc, i)
	}
	for i := range m.RoleBindings {
		b.Add(roleBindingDoc, i, i, i%m.ServiceAccounts, ns)
	}
	return b.String()
}

// The documents of a Mix, one per kind, as fmt formats.
const (
	configMapDoc = `apiVersion: v1
kind: ConfigMap
metadata:
  name: config-%04d
  labels:
    app.kubernetes.io/name: app-%02d
    app.kubernetes.io/part-of: bench
data:
  LOG_LEVEL: info
  FEATURE_FLAGS: "search,export,beta-ui"
  app.properties: |
    server.port=8080
    cache.size=%d
    upstream.url=http://app-%02d.%s.svc:8080
`
	secretDoc = `apiVersion: v1
kind: Secret
metadata:
  name: secret-%04d
  labels:
    app.kubernetes.io/name: app-%02d
    app.kubernetes.io/part-of: bench
type: Opaque
stringData:
  username: svc-%04d
  password: not-a-real-password-%04d
`
	serviceDoc = `apiVersion: v1
kind: Service
metadata:
  name: app-%02d
  labels:
    app.kubernetes.io/name: app-%02d
    app.kubernetes.io/part-of: bench
spec:
  type: ClusterIP
  selector:
    app.kubernetes.io/name: app-%02d
  ports:
  - name: http
    port: 80
    targetPort: 8080
`
	serviceAccountDoc = `apiVersion: v1
kind: ServiceAccount
metadata:
  name: sa-%02d
  labels:
    app.kubernetes.io/part-of: bench
`
	roleDoc = `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: reader-%02d
  labels:
    app.kubernetes.io/part-of: bench
rules:
- apiGroups: [""]
  resources: ["configmaps", "services"]
  verbs: ["get", "list", "watch"]
`
	roleBindingDoc = `apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: reader-%02d
  labels:
    app.kubernetes.io/part-of: bench
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: reader-%02d
subjects:
- kind: ServiceAccount
  name: sa-%02d
  namespace: %s
`
)

// Docs builds the multi-document YAML of a benchmark's template.
type Docs struct{ b strings.Builder }

// NewDocs starts with the Namespace ns, labelled as part of the benchmarks; with ns "", it starts
// empty (a template whose objects go to namespaces that exist already).
func NewDocs(ns string) *Docs {
	d := &Docs{}
	if ns == "" {
		return d
	}
	d.Add(`apiVersion: v1
kind: Namespace
metadata:
  name: %s
  labels:
    app.kubernetes.io/part-of: bench
`, ns)
	return d
}

// Add appends one document, formatted as fmt.Sprintf does.
func (d *Docs) Add(format string, args ...any) {
	if d.b.Len() > 0 {
		d.b.WriteString("---\n")
	}
	fmt.Fprintf(&d.b, format, args...)
}

func (d *Docs) String() string { return d.b.String() }
