package main

import (
	"fmt"

	"holdfast.dev/holdfast/internal/measure"
)

// Kinds of managed objects the benchmark drifts.
const (
	kindConfigMap  = "ConfigMap"
	kindSecret     = "Secret"
	kindService    = "Service"
	kindDeployment = "Deployment"
)

// objKey names a managed object in the target namespace.
type objKey struct{ Kind, Name string }

func (k objKey) String() string { return k.Kind + " " + k.Name }

// mix is how many objects of each kind the template declares (besides the Namespace).
type mix struct{ ConfigMaps, Secrets, Services, Deployments int }

func (m mix) total() int { return 1 + m.ConfigMaps + m.Secrets + m.Services + m.Deployments }

func (m mix) String() string {
	return fmt.Sprintf("1 Namespace, %d ConfigMaps, %d Secrets, %d Services, %d Deployments (%d replicas each)",
		m.ConfigMaps, m.Secrets, m.Services, m.Deployments, declaredReplicas)
}

// objects lists the drift candidates, kind by kind.
func (m mix) objects() map[string][]objKey {
	out := map[string][]objKey{}
	for i := range m.ConfigMaps {
		out[kindConfigMap] = append(out[kindConfigMap], objKey{kindConfigMap, fmt.Sprintf("config-%02d", i)})
	}
	for i := range m.Secrets {
		out[kindSecret] = append(out[kindSecret], objKey{kindSecret, fmt.Sprintf("secret-%02d", i)})
	}
	for i := range m.Services {
		out[kindService] = append(out[kindService], objKey{kindService, fmt.Sprintf("app-%02d", i)})
	}
	for i := range m.Deployments {
		out[kindDeployment] = append(out[kindDeployment], objKey{kindDeployment, fmt.Sprintf("web-%02d", i)})
	}
	return out
}

// declaredValue is the value of the ConfigMap key "value" or the Secret key "token" of an object
// as the template declares it.
func declaredValue(name string) string { return "declared-" + name }

// manifests renders the template. Every drifted object carries the tierLabel label and a value
// the benchmark edits (ConfigMap data.value, Secret data.token) or replicas it scales
// (Deployments). Namespaced objects carry no namespace: the service's applies.
func manifests(m mix, ns string) string {
	b := measure.NewDocs(ns)
	doc := b.Add
	objs := m.objects()
	for _, o := range objs[kindConfigMap] {
		doc(`apiVersion: v1
kind: ConfigMap
metadata:
  name: %s
  labels:
    app.kubernetes.io/part-of: bench
    %s: %s
data:
  value: %s
  LOG_LEVEL: info
  app.properties: |
    server.port=8080
    upstream.url=http://app-00.%s.svc:80
`, o.Name, tierLabel, tierDeclared, declaredValue(o.Name), ns)
	}
	for _, o := range objs[kindSecret] {
		doc(`apiVersion: v1
kind: Secret
metadata:
  name: %s
  labels:
    app.kubernetes.io/part-of: bench
    %s: %s
type: Opaque
stringData:
  token: %s
  username: svc-%s
`, o.Name, tierLabel, tierDeclared, declaredValue(o.Name), o.Name)
	}
	for _, o := range objs[kindService] {
		doc(`apiVersion: v1
kind: Service
metadata:
  name: %s
  labels:
    app.kubernetes.io/part-of: bench
    %s: %s
spec:
  type: ClusterIP
  selector:
    app.kubernetes.io/name: %s
  ports:
  - name: http
    port: 80
    targetPort: 8080
`, o.Name, tierLabel, tierDeclared, o.Name)
	}
	for _, o := range objs[kindDeployment] {
		doc(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %s
  labels:
    app.kubernetes.io/part-of: bench
    %s: %s
spec:
  replicas: %d
  selector:
    matchLabels:
      app.kubernetes.io/name: %s
  template:
    metadata:
      labels:
        app.kubernetes.io/name: %s
    spec:
      containers:
      - name: app
        image: registry.k8s.io/pause:3.10
        ports:
        - containerPort: 8080
`, o.Name, tierLabel, tierDeclared, declaredReplicas, o.Name, o.Name)
	}
	return b.String()
}
