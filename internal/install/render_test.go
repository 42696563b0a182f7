package install_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/v2/lint"
	"helm.sh/helm/v4/pkg/chart/v2/lint/support"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"holdfast.dev/holdfast/config/crd"
	"holdfast.dev/holdfast/internal/install"
)

const chartDir = "../../charts/holdfast"

// nonDefault are values that change every part of the chart a platform team is likely to touch.
func nonDefault() map[string]any {
	return map[string]any{
		"replicas":        3,
		"createNamespace": true,
		"image":           map[string]any{"repository": "registry.example/platform/holdfast", "digest": "sha256:" + strings.Repeat("ab", 32)},
		"serviceAccount":  map[string]any{"name": "fleet-keeper", "annotations": map[string]any{"eks.amazonaws.com/role-arn": "arn:aws:iam::1:role/x"}},
		"controller": map[string]any{
			"leader-elect": true, "concurrency": 20, "target-qps": 50.5, "cluster-probe-interval": "30s", "leader-election-id": "fleet",
			"platform-namespaces": "holdfast-system,platform",
		},
		"logFormat": "console",
		"serviceMonitor": map[string]any{"enabled": true, "labels": map[string]any{"release": "prometheus"},
			"tlsConfig": map[string]any{"ca": map[string]any{"secret": map[string]any{"name": "holdfast-metrics-cert", "key": "ca.crt"}},
				"serverName": "holdfast-metrics.holdfast-system.svc"}},
		"metrics": map[string]any{"certSecret": "holdfast-metrics-cert", "readers": []any{
			map[string]any{"kind": "ServiceAccount", "name": "prometheus", "namespace": "monitoring"},
			map[string]any{"kind": "Group", "name": "metrics-scrapers"},
		}},
		"grafanaDashboard":    map[string]any{"namespace": "monitoring"},
		"podDisruptionBudget": map[string]any{"maxUnavailable": 1},
		"crds":                map[string]any{"install": false},
		"nodeSelector":        map[string]any{"kubernetes.io/os": "linux"},
	}
}

// TestChartLints runs Helm's linter (what `helm lint --strict` runs) with the default values and
// with non-default ones: no warning, no error.
func TestChartLints(t *testing.T) {
	kv, err := install.KubeVersion()
	if err != nil {
		t.Fatal(err)
	}
	for name, values := range map[string]map[string]any{"defaults": nil, "non-default values": nonDefault()} {
		t.Run(name, func(t *testing.T) {
			result := lint.RunAll(chartDir, values, install.DefaultNamespace, lint.WithKubeVersion(kv))
			for _, m := range result.Messages {
				if m.Severity >= support.WarningSev {
					t.Errorf("helm lint: %s", m)
				}
			}
		})
	}
}

// rendered renders the embedded chart and indexes the objects by kind/name.
func rendered(t *testing.T, values map[string]any) map[string]*unstructured.Unstructured {
	t.Helper()
	manifest, err := install.Render(t.Context(), install.Options{Values: values})
	if err != nil {
		t.Fatal(err)
	}
	objs, err := install.Objects(manifest)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		out[o.GetKind()+"/"+o.GetName()] = o
	}
	return out
}

func as[T any](t *testing.T, objs map[string]*unstructured.Unstructured, key string) *T {
	t.Helper()
	u, ok := objs[key]
	if !ok {
		keys := make([]string, 0, len(objs))
		for k := range objs {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		t.Fatalf("no %s rendered; got %v", key, keys)
	}
	out := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, out, true); err != nil {
		t.Fatalf("%s does not convert to %T: %v", key, out, err)
	}
	return out
}

// TestRenderDefaults checks the installation the chart's defaults describe.
func TestRenderDefaults(t *testing.T) {
	objs := rendered(t, nil)
	for _, absent := range []string{"Namespace/" + install.DefaultNamespace, "ServiceMonitor/holdfast", "ClusterRoleBinding/holdfast-metrics-reader"} {
		if _, ok := objs[absent]; ok {
			t.Errorf("%s is rendered by default", absent)
		}
	}
	for _, present := range []string{"ServiceAccount/holdfast", "ClusterRoleBinding/holdfast-controller", "RoleBinding/holdfast-leader-election",
		"Service/holdfast-metrics", "ClusterRole/holdfast-metrics-reader"} {
		if _, ok := objs[present]; !ok {
			t.Errorf("%s is not rendered", present)
		}
	}
	// The controller's namespace, its default platform namespace, comes from the downward API.
	dep := as[appsv1.Deployment](t, objs, "Deployment/holdfast-controller")
	if !slices.ContainsFunc(dep.Spec.Template.Spec.Containers[0].Env, func(e corev1.EnvVar) bool {
		return e.Name == "POD_NAMESPACE" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace"
	}) {
		t.Errorf("the controller is not told its namespace: env %+v", dep.Spec.Template.Spec.Containers[0].Env)
	}
	// It writes Secrets only in its own namespace (the Role), reads them everywhere.
	for key, kind := range map[string]string{"ClusterRole/holdfast-controller": "cluster-wide", "Role/holdfast-leader-election": "in its namespace"} {
		var rules []rbacv1.PolicyRule
		if kind == "cluster-wide" {
			rules = as[rbacv1.ClusterRole](t, objs, key).Rules
		} else {
			rules = as[rbacv1.Role](t, objs, key).Rules
		}
		writes := slices.ContainsFunc(rules, func(r rbacv1.PolicyRule) bool {
			return slices.Contains(r.Resources, "secrets") && slices.ContainsFunc(r.Verbs, func(v string) bool { return v != "get" && v != "list" && v != "watch" })
		})
		if writes != (kind == "in its namespace") {
			t.Errorf("%s: writes Secrets %s = %v", key, kind, writes)
		}
	}
	// Tenants get their own kinds and read status; never MultiClusterServices or another
	// namespace's objects (the role is bound per namespace).
	tenant := as[rbacv1.ClusterRole](t, objs, "ClusterRole/holdfast-tenant")
	var granted []string
	for _, r := range tenant.Rules {
		granted = append(granted, r.Resources...)
	}
	if !slices.Contains(granted, "servicesets") || slices.ContainsFunc(granted, func(r string) bool { return strings.HasPrefix(r, "multiclusterservices") }) {
		t.Errorf("tenant role grants %v: want servicesets and no multiclusterservices", granted)
	}
	for key, o := range objs {
		if o.GetLabels()["app.kubernetes.io/name"] != "holdfast" {
			t.Errorf("%s lacks the chart's labels: %v", key, o.GetLabels())
		}
	}

	d := as[appsv1.Deployment](t, objs, "Deployment/holdfast-controller")
	if d.Namespace != install.DefaultNamespace || *d.Spec.Replicas != 2 {
		t.Errorf("Deployment in %q with %d replicas, want %s and 2", d.Namespace, *d.Spec.Replicas, install.DefaultNamespace)
	}
	pod := d.Spec.Template.Spec
	c := pod.Containers[0]
	if c.Image != "ghcr.io/holdfast-dev/holdfast:v0.1.0" {
		t.Errorf("image %s, want the chart's appVersion", c.Image)
	}
	for _, arg := range []string{"controller", "--leader-elect=true", "--leader-election-namespace=" + install.DefaultNamespace,
		"--metrics-bind-address=:8443", "--metrics-secure=true", "--health-probe-bind-address=:8081"} {
		if !slices.Contains(c.Args, arg) {
			t.Errorf("args %q lack %s", c.Args, arg)
		}
	}
	if c.Args[0] != "controller" {
		t.Errorf("args %q do not start with the controller verb", c.Args)
	}
	expectRestricted(t, pod)
	if p := c.LivenessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/healthz" || p.HTTPGet.Port.String() != "health" {
		t.Errorf("liveness probe %+v, want GET /healthz on the health port", p)
	}
	if p := c.ReadinessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/readyz" || p.HTTPGet.Port.String() != "health" {
		t.Errorf("readiness probe %+v, want GET /readyz on the health port", p)
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("resources %+v, want CPU and memory requests and a memory limit", c.Resources)
	}
	if pod.ServiceAccountName != "holdfast" {
		t.Errorf("service account %q", pod.ServiceAccountName)
	}

	pdb := as[policyv1.PodDisruptionBudget](t, objs, "PodDisruptionBudget/holdfast-controller")
	if pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() != 1 || !reflect.DeepEqual(pdb.Spec.Selector.MatchLabels, d.Spec.Selector.MatchLabels) {
		t.Errorf("PodDisruptionBudget %+v, want minAvailable 1 over the Deployment's pods", pdb.Spec)
	}
	svc := as[corev1.Service](t, objs, "Service/holdfast-metrics")
	if !reflect.DeepEqual(svc.Spec.Selector, d.Spec.Selector.MatchLabels) || svc.Spec.Ports[0].Name != "https" ||
		svc.Spec.Ports[0].TargetPort.String() != "https" || c.Ports[0].Name != "https" || c.Ports[0].ContainerPort != 8443 {
		t.Errorf("metrics Service %+v does not select the controller's metrics port %+v, named https", svc.Spec, c.Ports)
	}
	reader := as[rbacv1.ClusterRole](t, objs, "ClusterRole/holdfast-metrics-reader")
	if want := []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}; !reflect.DeepEqual(reader.Rules, want) {
		t.Errorf("metrics reader rules %+v, want %+v", reader.Rules, want)
	}
	dash := as[corev1.ConfigMap](t, objs, "ConfigMap/holdfast-dashboard")
	if dash.Labels["grafana_dashboard"] != "1" || !json.Valid([]byte(dash.Data["holdfast.json"])) {
		t.Errorf("dashboard ConfigMap: labels %v, valid JSON %v", dash.Labels, json.Valid([]byte(dash.Data["holdfast.json"])))
	}
}

func expectRestricted(t *testing.T, pod corev1.PodSpec) {
	t.Helper()
	psc := pod.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod security context %+v, want runAsNonRoot and the RuntimeDefault seccomp profile", psc)
	}
	for _, c := range pod.Containers {
		sc := c.SecurityContext
		if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
			sc.Capabilities == nil || !reflect.DeepEqual(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
			t.Errorf("container %s security context %+v, want no privilege escalation, a read-only root filesystem, all capabilities dropped", c.Name, sc)
		}
	}
}

// TestRenderNonDefault checks that values reach the manifests.
func TestRenderNonDefault(t *testing.T) {
	objs := rendered(t, nonDefault())
	if _, ok := objs["Namespace/"+install.DefaultNamespace]; !ok {
		t.Error("createNamespace renders no Namespace")
	}
	for key := range objs {
		if strings.HasPrefix(key, "CustomResourceDefinition/") {
			t.Errorf("crds.install false still renders %s", key)
		}
	}
	d := as[appsv1.Deployment](t, objs, "Deployment/holdfast-controller")
	c := d.Spec.Template.Spec.Containers[0]
	if *d.Spec.Replicas != 3 || c.Image != "registry.example/platform/holdfast@sha256:"+strings.Repeat("ab", 32) ||
		d.Spec.Template.Spec.ServiceAccountName != "fleet-keeper" || d.Spec.Template.Spec.NodeSelector["kubernetes.io/os"] != "linux" {
		t.Errorf("Deployment: %d replicas, image %s, service account %s, node selector %v", *d.Spec.Replicas, c.Image,
			d.Spec.Template.Spec.ServiceAccountName, d.Spec.Template.Spec.NodeSelector)
	}
	for _, arg := range []string{"--concurrency=20", "--target-qps=50.5", "--cluster-probe-interval=30s", "--leader-election-id=fleet", "--log-format=console",
		"--platform-namespaces=holdfast-system,platform"} {
		if !slices.Contains(c.Args, arg) {
			t.Errorf("args %q lack %s", c.Args, arg)
		}
	}
	sa := as[corev1.ServiceAccount](t, objs, "ServiceAccount/fleet-keeper")
	if sa.Annotations["eks.amazonaws.com/role-arn"] == "" {
		t.Errorf("ServiceAccount annotations %v", sa.Annotations)
	}
	crb := as[rbacv1.ClusterRoleBinding](t, objs, "ClusterRoleBinding/holdfast-controller")
	if crb.Subjects[0].Name != "fleet-keeper" {
		t.Errorf("ClusterRoleBinding subjects %+v", crb.Subjects)
	}
	pdb := as[policyv1.PodDisruptionBudget](t, objs, "PodDisruptionBudget/holdfast-controller")
	if pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 1 || pdb.Spec.MinAvailable != nil {
		t.Errorf("PodDisruptionBudget %+v, want maxUnavailable 1 only", pdb.Spec)
	}
	sm, ok := objs["ServiceMonitor/holdfast"]
	if !ok {
		t.Fatal("serviceMonitor.enabled renders no ServiceMonitor")
	}
	if sm.GetLabels()["release"] != "prometheus" {
		t.Errorf("ServiceMonitor labels %v", sm.GetLabels())
	}
	endpoints, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	wantEndpoint := map[string]any{"port": "https", "path": "/metrics", "interval": "30s", "scrapeTimeout": "10s", "scheme": "https",
		"bearerTokenFile": "/var/run/secrets/kubernetes.io/serviceaccount/token",
		"tlsConfig": map[string]any{"ca": map[string]any{"secret": map[string]any{"name": "holdfast-metrics-cert", "key": "ca.crt"}},
			"serverName": "holdfast-metrics.holdfast-system.svc"}}
	if len(endpoints) != 1 || !reflect.DeepEqual(endpoints[0], wantEndpoint) {
		t.Errorf("ServiceMonitor endpoints %v, want [%v]", endpoints, wantEndpoint)
	}
	// The certificate Secret is mounted where --metrics-cert-dir looks.
	if !slices.Contains(c.Args, "--metrics-cert-dir=/etc/holdfast/metrics-certs") || !slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool {
		return m.MountPath == "/etc/holdfast/metrics-certs" && m.ReadOnly && slices.ContainsFunc(d.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool {
			return v.Name == m.Name && v.Secret != nil && v.Secret.SecretName == "holdfast-metrics-cert"
		})
	}) {
		t.Errorf("args %q, mounts %+v: the metrics certificate Secret is not mounted at --metrics-cert-dir", c.Args, c.VolumeMounts)
	}
	readers := as[rbacv1.ClusterRoleBinding](t, objs, "ClusterRoleBinding/holdfast-metrics-reader")
	wantReaders := []rbacv1.Subject{{Kind: "ServiceAccount", Name: "prometheus", Namespace: "monitoring"},
		{Kind: "Group", Name: "metrics-scrapers", APIGroup: rbacv1.GroupName}}
	if readers.RoleRef.Name != "holdfast-metrics-reader" || !reflect.DeepEqual(readers.Subjects, wantReaders) {
		t.Errorf("metrics reader binding %+v, want %+v bound to holdfast-metrics-reader", readers, wantReaders)
	}
	if ns := objs["ConfigMap/holdfast-dashboard"].GetNamespace(); ns != "monitoring" {
		t.Errorf("dashboard ConfigMap in %q, want monitoring", ns)
	}
}

// TestRenderMetricsEndpoint: the metrics port, its Service and the ServiceMonitor follow
// metrics.secure: HTTPS with Prometheus's token and, for the self-signed certificate, no
// verification by default; plain HTTP when it is false.
func TestRenderMetricsEndpoint(t *testing.T) {
	cases := map[string]struct {
		secure   bool
		arg      string
		port     string
		endpoint map[string]any
	}{
		"secure": {true, "--metrics-secure=true", "https", map[string]any{"port": "https", "path": "/metrics", "interval": "30s", "scrapeTimeout": "10s",
			"scheme": "https", "bearerTokenFile": "/var/run/secrets/kubernetes.io/serviceaccount/token", "tlsConfig": map[string]any{"insecureSkipVerify": true}}},
		"insecure": {false, "--metrics-secure=false", "http", map[string]any{"port": "http", "path": "/metrics", "interval": "30s", "scrapeTimeout": "10s",
			"scheme": "http"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objs := rendered(t, map[string]any{"metrics": map[string]any{"secure": tc.secure}, "serviceMonitor": map[string]any{"enabled": true}})
			c := as[appsv1.Deployment](t, objs, "Deployment/holdfast-controller").Spec.Template.Spec.Containers[0]
			if !slices.Contains(c.Args, tc.arg) || c.Ports[0].Name != tc.port || slices.ContainsFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "--metrics-cert-dir") }) {
				t.Errorf("args %q, ports %+v: want %s (and no --metrics-cert-dir) on a port named %s", c.Args, c.Ports, tc.arg, tc.port)
			}
			if svc := as[corev1.Service](t, objs, "Service/holdfast-metrics"); svc.Spec.Ports[0].Name != tc.port || svc.Spec.Ports[0].TargetPort.String() != tc.port {
				t.Errorf("metrics Service ports %+v, want %s", svc.Spec.Ports, tc.port)
			}
			endpoints, _, _ := unstructured.NestedSlice(objs["ServiceMonitor/holdfast"].Object, "spec", "endpoints")
			if len(endpoints) != 1 || !reflect.DeepEqual(endpoints[0], tc.endpoint) {
				t.Errorf("ServiceMonitor endpoints %v, want [%v]", endpoints, tc.endpoint)
			}
		})
	}
}

// TestRenderRefusesBadValues: values.schema.json and the templates refuse what would install a
// broken controller, with a message naming the value.
func TestRenderRefusesBadValues(t *testing.T) {
	cases := map[string]struct {
		values map[string]any
		want   string
	}{
		"unknown value":            {map[string]any{"replica": 2}, "replica"},
		"unknown controller flag":  {map[string]any{"controller": map[string]any{"leader-elect": true, "probe-interval": "1s"}}, "probe-interval"},
		"wrong type":               {map[string]any{"replicas": "two"}, "replicas"},
		"not a duration":           {map[string]any{"controller": map[string]any{"leader-elect": true, "cluster-connection-grace": "forty seconds"}}, "cluster-connection-grace"},
		"replicas without leaders": {map[string]any{"controller": map[string]any{"leader-elect": false}}, "leader-elect"},
		"certificate over HTTP":    {map[string]any{"metrics": map[string]any{"secure": false, "certSecret": "x"}}, "metrics.certSecret"},
		"reader without namespace": {map[string]any{"metrics": map[string]any{"readers": []any{map[string]any{"kind": "ServiceAccount", "name": "p"}}}}, "namespace"},
		"unknown reader kind":      {map[string]any{"metrics": map[string]any{"readers": []any{map[string]any{"kind": "Pod", "name": "p"}}}}, "kind"},
		"'*' among namespaces":     {map[string]any{"controller": map[string]any{"leader-elect": true, "platform-namespaces": "*,platform"}}, "platform-namespaces"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := install.Render(t.Context(), install.Options{Values: c.values})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("rendering with %v: error %v, want one naming %s", c.values, err, c.want)
			}
		})
	}
}

// TestChartFilesAreGenerated: the chart's CRDs and RBAC are `make generate`'s, byte for byte
// (run `make generate` when this fails), and the CRDs the chart renders are those, with only
// the chart's labels and the keep policy added.
func TestChartFilesAreGenerated(t *testing.T) {
	pairs := map[string]string{"../../config/rbac/role.yaml": chartDir + "/files/rbac/role.yaml"}
	bases, err := filepath.Glob("../../config/crd/bases/*.yaml")
	if err != nil || len(bases) == 0 {
		t.Fatalf("no CRDs in config/crd/bases: %v", err)
	}
	for _, b := range bases {
		pairs[b] = filepath.Join(chartDir, "files/crds", filepath.Base(b))
	}
	copies, _ := filepath.Glob(chartDir + "/files/crds/*.yaml")
	if len(copies) != len(bases) {
		t.Errorf("the chart has %d CRD files, config/crd/bases %d; run make generate", len(copies), len(bases))
	}
	for src, dst := range pairs {
		a, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(dst)
		if err != nil || string(a) != string(b) {
			t.Errorf("%s is not a copy of %s (%v); run make generate", dst, src, err)
		}
	}

	want, err := crd.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	objs := rendered(t, nil)
	for _, w := range want {
		got := as[apiextensionsv1.CustomResourceDefinition](t, objs, "CustomResourceDefinition/"+w.Name)
		if got.Annotations["helm.sh/resource-policy"] != "keep" {
			t.Errorf("CRD %s lacks helm.sh/resource-policy: keep", w.Name)
		}
		delete(got.Annotations, "helm.sh/resource-policy")
		got.Labels = nil
		if !reflect.DeepEqual(got.Spec, w.Spec) || !reflect.DeepEqual(got.ObjectMeta, w.ObjectMeta) {
			a, _ := yaml.Marshal(got)
			t.Errorf("the chart renders CRD %s differently from config/crd/bases:\n%s", w.Name, a)
		}
	}
}

// TestRBACIsGenerated: the chart grants exactly the rules the kubebuilder markers generate,
// cluster-wide ones in the ClusterRole and the controller's own namespace's in the Role.
func TestRBACIsGenerated(t *testing.T) {
	data, err := os.ReadFile("../../config/rbac/role.yaml")
	if err != nil {
		t.Fatal(err)
	}
	generated, err := install.Objects(string(data))
	if err != nil {
		t.Fatal(err)
	}
	objs := rendered(t, nil)
	kinds := map[string]string{"ClusterRole": "ClusterRole/holdfast-controller", "Role": "Role/holdfast-leader-election"}
	if len(generated) != len(kinds) {
		t.Fatalf("config/rbac/role.yaml has %d objects, the chart renders a ClusterRole and a Role", len(generated))
	}
	for _, g := range generated {
		key, ok := kinds[g.GetKind()]
		if !ok {
			t.Fatalf("config/rbac/role.yaml has a %s", g.GetKind())
		}
		rendered, ok := objs[key]
		if !ok {
			t.Fatalf("no %s rendered", key)
		}
		got, want := rendered.Object["rules"], g.Object["rules"]
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s rules differ from the generated %s:\n got %+v\nwant %+v", key, g.GetKind(), got, want)
		}
	}
}

// TestEmbeddedChartIsTheDirectory: what the binary embeds renders as charts/holdfast on disk
// does through Helm's own directory loader.
func TestEmbeddedChartIsTheDirectory(t *testing.T) {
	fromDisk, err := loader.LoadDir(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	for name, values := range map[string]map[string]any{"defaults": nil, "non-default values": nonDefault()} {
		want, err := install.RenderChart(t.Context(), fromDisk, install.Options{Values: values})
		if err != nil {
			t.Fatal(err)
		}
		got, err := install.Render(t.Context(), install.Options{Values: values})
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s: the embedded chart renders differently from %s", name, chartDir)
		}
	}
}

// TestDashboardShowsDocumentedMetrics: every Holdfast metric the dashboard queries is one
// docs/metrics.md documents (and internal/metrics' tests keep those registered), and every
// documented one is on the dashboard.
func TestDashboardShowsDocumentedMetrics(t *testing.T) {
	doc, err := os.ReadFile("../../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `(holdfast_[a-z_]+)` \\|").FindAllStringSubmatch(string(doc), -1) {
		documented[m[1]] = true
	}
	if len(documented) < 10 {
		t.Fatalf("found %d metrics in docs/metrics.md's tables", len(documented))
	}
	data, err := os.ReadFile(chartDir + "/files/dashboards/holdfast.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	shown := map[string]bool{}
	for _, p := range dash.Panels {
		for _, target := range p.Targets {
			for _, name := range regexp.MustCompile(`holdfast_[a-z_]+`).FindAllString(target.Expr, -1) {
				for _, suffix := range []string{"_bucket", "_sum", "_count"} {
					if n := strings.TrimSuffix(name, suffix); documented[n] {
						name = n
					}
				}
				if !documented[name] {
					t.Errorf("panel %q queries %s, which docs/metrics.md does not document", p.Title, name)
				}
				shown[name] = true
			}
		}
	}
	for name := range documented {
		if !shown[name] {
			t.Errorf("%s is documented but not on the dashboard", name)
		}
	}
}
