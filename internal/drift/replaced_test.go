package drift

import (
	"testing"
)

func TestReplacedItems(t *testing.T) {
	const svcDeclared = `apiVersion: v1
kind: Service
metadata: {name: svc, namespace: demo}
spec:
  ports: [{name: http, port: 80, targetPort: 8080}]
`
	const deployDeclared = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: demo}
spec:
  template:
    spec:
      containers:
      - {name: app, image: "nginx:1", env: [{name: FOO, value: declared}]}
`
	cases := []struct {
		name, declared, live string
		want                 []string // pointers
	}{
		{name: "port key changed, a port added beside stays", declared: svcDeclared, live: `apiVersion: v1
kind: Service
metadata:
  name: svc
  namespace: demo
  managedFields:
  - {manager: holdfast, operation: Apply, apiVersion: v1, fieldsType: FieldsV1, fieldsV1: {"f:spec": {}}}
  - {manager: kubectl-edit, operation: Update, apiVersion: v1, fieldsType: FieldsV1, fieldsV1: {"f:spec": {"f:ports": {"k:{\"port\":8081,\"protocol\":\"TCP\"}": {".": {}, "f:name": {}, "f:port": {}, "f:protocol": {}, "f:targetPort": {}}}}}}
  - {manager: metrics, operation: Update, apiVersion: v1, fieldsType: FieldsV1, fieldsV1: {"f:spec": {"f:ports": {"k:{\"port\":9090,\"protocol\":\"TCP\"}": {".": {}, "f:name": {}, "f:port": {}, "f:protocol": {}}}}}}
spec:
  ports: [{name: metrics, port: 9090, protocol: TCP, targetPort: 9090}, {name: http, port: 8081, protocol: TCP, targetPort: 8080}]
`, want: []string{"/spec/ports/1"}},
		{name: "container renamed, a sidecar beside stays", declared: deployDeclared, live: `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: demo
  managedFields:
  - {manager: holdfast, operation: Apply, apiVersion: apps/v1, fieldsType: FieldsV1, fieldsV1: {"f:spec": {"f:template": {"f:spec": {}}}}}
  - {manager: injector, operation: Update, apiVersion: apps/v1, fieldsType: FieldsV1, fieldsV1: {"f:spec": {"f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"sidecar\"}": {".": {}, "f:name": {}, "f:image": {}}}}}}}}
  - {manager: kubectl-edit, operation: Update, apiVersion: apps/v1, fieldsType: FieldsV1, fieldsV1: {"f:spec": {"f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"app2\"}": {".": {}, "f:name": {}, "f:image": {}, "f:env": {}}}}}}}}
spec:
  template:
    spec:
      containers:
      - {name: app2, image: "nginx:1", imagePullPolicy: IfNotPresent, env: [{name: FOO, value: declared}]}
      - {name: sidecar, image: busybox}
`, want: []string{"/spec/template/spec/containers/0"}},
		{name: "env var renamed inside a declared container", declared: deployDeclared, live: `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: demo
  managedFields:
  - {manager: holdfast, operation: Apply, apiVersion: apps/v1, fieldsType: FieldsV1, fieldsV1: {"f:spec": {"f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"app\"}": {".": {}, "f:name": {}, "f:image": {}, "f:env": {}}}}}}}}
  - {manager: kubectl-edit, operation: Update, apiVersion: apps/v1, fieldsType: FieldsV1, fieldsV1: {"f:spec": {"f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"app\"}": {"f:env": {"k:{\"name\":\"BAR\"}": {".": {}, "f:name": {}, "f:value": {}}}}}}}}}}
spec:
  template:
    spec:
      containers:
      - {name: app, image: "nginx:1", env: [{name: BAR, value: declared}]}
`, want: []string{"/spec/template/spec/containers/0/env/0"}},
		{name: "a declared item deleted and an unrelated one added: nothing replaced", declared: deployDeclared, live: `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: demo
  managedFields:
  - {manager: holdfast, operation: Apply, apiVersion: apps/v1, fieldsType: FieldsV1, fieldsV1: {"f:spec": {"f:template": {"f:spec": {}}}}}
  - {manager: kubectl-edit, operation: Update, apiVersion: apps/v1, fieldsType: FieldsV1, fieldsV1: {"f:spec": {"f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"debug\"}": {".": {}, "f:name": {}, "f:image": {}}}}}}}}
spec:
  template:
    spec:
      containers:
      - {name: debug, image: busybox}
`},
		{name: "declared key, also held by another manager: not foreign", declared: svcDeclared, live: `apiVersion: v1
kind: Service
metadata:
  name: svc
  namespace: demo
  managedFields:
  - {manager: holdfast, operation: Apply, apiVersion: v1, fieldsType: FieldsV1, fieldsV1: {"f:spec": {}}}
  - {manager: other, operation: Update, apiVersion: v1, fieldsType: FieldsV1, fieldsV1: {"f:spec": {"f:ports": {"k:{\"port\":80,\"protocol\":\"TCP\"}": {".": {}, "f:name": {}, "f:port": {}, "f:protocol": {}, "f:targetPort": {}}}}}}
spec:
  ports: [{name: http, port: 80, protocol: TCP, targetPort: 9999}]
`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := ReplacedItems(parse(t, c.declared), parse(t, c.live))
			var pointers []string
			for _, r := range got {
				pointers = append(pointers, r.Pointer)
				if r.Declared == nil || r.Item == nil {
					t.Fatalf("item %+v lacks its declared or live value", r)
				}
			}
			if len(pointers) != len(c.want) || (len(pointers) > 0 && pointers[0] != c.want[0]) {
				t.Fatalf("replaced %v, want %v", pointers, c.want)
			}
		})
	}
}
