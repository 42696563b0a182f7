package main

import (
	"fmt"
	"strings"
)

// mix is how many objects of each kind the template declares.
type mix struct {
	Namespaces, ConfigMaps, Secrets, Services, ServiceAccounts, Roles, RoleBindings int
}

func (m mix) total() int {
	return m.Namespaces + m.ConfigMaps + m.Secrets + m.Services + m.ServiceAccounts + m.Roles + m.RoleBindings
}

func (m mix) String() string {
	return fmt.Sprintf("%d Namespace, %d ConfigMaps, %d Secrets, %d Services, %d ServiceAccounts, %d Roles, %d RoleBindings",
		m.Namespaces, m.ConfigMaps, m.Secrets, m.Services, m.ServiceAccounts, m.Roles, m.RoleBindings)
}

// mixOf splits n objects (n >= 10) into the target Namespace and a mix of kinds a real service
// set carries, all valid on a control plane without kube-controller-manager: mostly ConfigMaps,
// then Secrets, Services (ClusterIP, at most 200: the sandbox's service range is a /24),
// ServiceAccounts, and Roles each bound to a ServiceAccount.
func mixOf(n int) mix {
	rest := n - 1
	m := mix{Namespaces: 1}
	m.Services = min(rest*8/100, 200)
	m.Secrets = rest / 10
	m.ServiceAccounts = max(rest*6/100, 1)
	m.Roles = rest * 3 / 100
	m.RoleBindings = m.Roles
	m.ConfigMaps = rest - m.Services - m.Secrets - m.ServiceAccounts - m.Roles - m.RoleBindings
	return m
}

// manifests renders the mix as multi-document YAML. Namespaced objects carry no namespace: the
// service's target namespace (ns) applies, as it would for a reusable template.
func manifests(m mix, ns string) string {
	var b strings.Builder
	doc := func(format string, args ...any) {
		if b.Len() > 0 {
			b.WriteString("---\n")
		}
		fmt.Fprintf(&b, format, args...)
	}
	doc(`apiVersion: v1
kind: Namespace
metadata:
  name: %s
  labels:
    app.kubernetes.io/part-of: bench
`, ns)
	for i := range m.ConfigMaps {
		doc(`apiVersion: v1
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
`, i, i%50, 1024+i, i%50, ns)
	}
	for i := range m.Secrets {
		doc(`apiVersion: v1
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
`, i, i%50, i, i)
	}
	for i := range m.Services {
		doc(`apiVersion: v1
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
`, i, i, i)
	}
	for i := range m.ServiceAccounts {
		doc(`apiVersion: v1
kind: ServiceAccount
metadata:
  name: sa-%02d
  labels:
    app.kubernetes.io/part-of: bench
`, i)
	}
	for i := range m.Roles {
		doc(`apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: reader-%02d
  labels:
    app.kubernetes.io/part-of: bench
rules:
- apiGroups: [""]
  resources: ["configmaps", "services"]
  verbs: ["get", "list", "watch"]
`, i)
	}
	for i := range m.RoleBindings {
		doc(`apiVersion: rbac.authorization.k8s.io/v1
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
`, i, i, i%m.ServiceAccounts, ns)
	}
	return b.String()
}
