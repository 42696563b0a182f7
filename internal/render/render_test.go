package render_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"holdfast.dev/holdfast/internal/render"
)

var testCluster = render.Cluster{
	Name:        "prod-eu-1",
	Namespace:   "fleet",
	Labels:      map[string]string{"region": "eu-west", "tier": "gold"},
	Annotations: map[string]string{"holdfast.dev/owner": "team-a"},
}

// refs lists "apiVersion kind ns/name" of the objects, in order.
func refs(objs []*unstructured.Unstructured) []string {
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		name := o.GetName()
		if o.GetNamespace() != "" {
			name = o.GetNamespace() + "/" + name
		}
		out = append(out, o.GetAPIVersion()+" "+o.GetKind()+" "+name)
	}
	return out
}

func field(t *testing.T, o *unstructured.Unstructured, path ...string) any {
	t.Helper()
	v, ok, err := unstructured.NestedFieldNoCopy(o.Object, path...)
	if err != nil || !ok {
		t.Fatalf("%s: field %v not found (err %v)", o.GetName(), path, err)
	}
	return v
}

func TestRenderManifests(t *testing.T) {
	tests := []struct {
		name  string
		req   render.Request
		want  []string
		check func(t *testing.T, objs []*unstructured.Unstructured)
	}{
		{
			name: "inline multi-document with comments, empty documents, a List and status",
			req: render.Request{Service: "web", Source: render.Source{Inline: `
# leading comment
---
apiVersion: v1
kind: Namespace
metadata:
  name: web
---
---
# only a comment
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: web
  uid: 1234
  resourceVersion: "99"
  creationTimestamp: null
spec:
  replicas: 10000000
status:
  readyReplicas: 3
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: a, namespace: web}
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: b}
`}},
			want: []string{"v1 Namespace web", "apps/v1 Deployment web/web", "v1 ConfigMap web/a", "v1 ConfigMap b"},
			check: func(t *testing.T, objs []*unstructured.Unstructured) {
				d := objs[1]
				if _, ok := d.Object["status"]; ok {
					t.Errorf("status was not stripped")
				}
				for _, f := range []string{"uid", "resourceVersion", "creationTimestamp"} {
					if _, ok := d.Object["metadata"].(map[string]any)[f]; ok {
						t.Errorf("metadata.%s was not stripped", f)
					}
				}
				if got := field(t, d, "spec", "replicas"); got != int64(10000000) {
					t.Errorf("replicas = %#v, want int64 10000000", got)
				}
			},
		},
		{
			name: "documents from several origins keep their order",
			req: render.Request{Service: "web", Source: render.Source{Documents: []render.Document{
				{Origin: `ConfigMap team-a/web key "a.yaml"`, Content: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: one\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: two\n")},
				{Origin: `Secret team-a/web key "b.yaml"`, Content: []byte("apiVersion: v1\nkind: Service\nmetadata:\n  name: three\n")},
			}}},
			want: []string{"v1 ConfigMap one", "v1 ConfigMap two", "v1 Service three"},
		},
		{
			name: "GoTemplate off leaves {{ untouched",
			req: render.Request{Service: "mon", Source: render.Source{Inline: `apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: rules
spec:
  groups:
  - name: g
    rules:
    - alert: High
      annotations:
        summary: "{{ $labels.instance }} is down on {{ .Cluster.Name }}"
`}},
			want: []string{"monitoring.coreos.com/v1 PrometheusRule rules"},
			check: func(t *testing.T, objs []*unstructured.Unstructured) {
				rule := field(t, objs[0], "spec", "groups").([]any)[0].(map[string]any)["rules"].([]any)[0].(map[string]any)
				got := rule["annotations"].(map[string]any)["summary"]
				if got != "{{ $labels.instance }} is down on {{ .Cluster.Name }}" {
					t.Errorf("summary = %q, want it untouched", got)
				}
			},
		},
		{
			name: "GoTemplate on: cluster name, labels, annotations and merged values in manifests",
			req: render.Request{
				Service:         "web",
				Cluster:         testCluster,
				TargetNamespace: "apps",
				TemplateValues: `replicas: 1
region: {{ .Cluster.Labels.region }}
image: {repo: nginx, tag: "1.0"}
zone: {{ .Cluster.Labels.zone | default "none" }}
`,
				ServiceValues: `replicas: 3
image: {tag: "{{ .Cluster.Labels.tier }}"}
`,
				Source: render.Source{GoTemplate: true, Inline: `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web-{{ .Cluster.Name }}
  namespace: {{ .TargetNamespace }}
  labels:
    region: {{ .Values.region }}
    owner: {{ index .Cluster.Annotations "holdfast.dev/owner" | quote }}
    zone: {{ .Values.zone }}
    missing: "{{ .Values.nothing }}"
spec:
  replicas: {{ .Values.replicas }}
  template:
    spec:
      containers:
      - name: web
        image: {{ .Values.image.repo }}:{{ .Values.image.tag }}
{{- with .Values.image }}
        env:
{{ toYaml (list (dict "name" "REPO" "value" .repo)) | indent 8 }}
{{- end }}
`},
			},
			want: []string{"apps/v1 Deployment apps/web-prod-eu-1"},
			check: func(t *testing.T, objs []*unstructured.Unstructured) {
				d := objs[0]
				labels := d.GetLabels()
				want := map[string]string{"region": "eu-west", "owner": "team-a", "zone": "none", "missing": ""}
				for k, v := range want {
					if labels[k] != v {
						t.Errorf("label %s = %q, want %q", k, labels[k], v)
					}
				}
				if got := field(t, d, "spec", "replicas"); got != int64(3) {
					t.Errorf("replicas = %#v, want 3 (service values win)", got)
				}
				c := field(t, d, "spec", "template", "spec", "containers").([]any)[0].(map[string]any)
				if c["image"] != "nginx:gold" {
					t.Errorf("image = %v, want nginx:gold (deep merge keeps repo, service overrides tag)", c["image"])
				}
				if env := c["env"].([]any); len(env) != 1 || env[0].(map[string]any)["value"] != "nginx" {
					t.Errorf("env = %v", env)
				}
			},
		},
		{
			name: "namespace is not defaulted",
			req:  render.Request{Service: "web", TargetNamespace: "apps", Source: render.Source{Inline: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"}},
			want: []string{"v1 ConfigMap c"},
		},
		{
			name: "null in service values removes a default",
			req: render.Request{Service: "web", TemplateValues: "a: 1\nb: 2\n", ServiceValues: "b: null\n",
				Source: render.Source{GoTemplate: true, Inline: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  keys: \"{{ keys .Values | sortAlpha | join \",\" }}\"\n"}},
			want: []string{"v1 ConfigMap c"},
			check: func(t *testing.T, objs []*unstructured.Unstructured) {
				if got := field(t, objs[0], "data", "keys"); got != "a" {
					t.Errorf("keys = %v, want a", got)
				}
			},
		},
		{
			name: "empty inline stream renders nothing",
			req:  render.Request{Service: "web", Source: render.Source{Inline: "# nothing yet\n"}},
			want: []string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := render.Render(context.Background(), tt.req, nil)
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			if got := refs(res.Objects); strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Fatalf("objects = %q, want %q", got, tt.want)
			}
			if !strings.HasPrefix(res.Digest, "sha256:") || len(res.Digest) != 71 {
				t.Errorf("digest = %q", res.Digest)
			}
			if tt.check != nil {
				tt.check(t, res.Objects)
			}
		})
	}
}

func TestDigest(t *testing.T) {
	render1 := func(inline string, labels map[string]string) string {
		t.Helper()
		c := testCluster
		c.Labels = labels
		res, err := render.Render(context.Background(), render.Request{Service: "s", Cluster: c,
			Source: render.Source{Inline: inline, GoTemplate: true}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res.Digest
	}
	a := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata: {x: \"{{ .Cluster.Labels.region }}\", y: \"1\"}\n"
	b := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata: {y: \"1\", x: \"{{ .Cluster.Labels.region }}\"}\n"
	eu := map[string]string{"region": "eu"}
	if render1(a, eu) != render1(b, eu) {
		t.Errorf("key order changed the digest")
	}
	if render1(a, eu) == render1(a, map[string]string{"region": "us"}) {
		t.Errorf("different content, same digest")
	}
	if first, again := render1(a, eu), render1(a, eu); first != again {
		t.Errorf("digest is not stable: %s, then %s", first, again)
	}
}

// TestDigestOfObjects: Digest gives the rendered set's digest, so a rendering kept elsewhere
// can be checked when it is read back.
func TestDigestOfObjects(t *testing.T) {
	res, err := render.Render(context.Background(), render.Request{Service: "s", Cluster: testCluster, Source: render.Source{
		Inline: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {n: \"1\"}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: b}\nspec: {replicas: 2}\n",
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := render.Digest(res.Objects); err != nil || got != res.Digest {
		t.Errorf("Digest = %s, %v; the rendering's digest is %s", got, err, res.Digest)
	}
	if got, _ := render.Digest(res.Objects[:1]); got == res.Digest {
		t.Errorf("Digest of a part of the set is the digest of the whole")
	}
}

func TestRenderErrors(t *testing.T) {
	big := strings.Repeat("x", render.MaxObjectSize)
	tests := []struct {
		name   string
		req    render.Request
		reason string
		// every string must appear in the error message
		want []string
	}{
		{name: "no source", req: render.Request{Service: "web"}, reason: render.ReasonInvalidSource,
			want: []string{`service "web"`, "no source"}},
		{name: "two sources", req: render.Request{Service: "web", Source: render.Source{Inline: "a: b", Kustomize: &render.Kustomize{}}},
			reason: render.ReasonInvalidSource, want: []string{"several sources", "inline manifests, kustomize"}},
		{name: "invalid YAML names document and line",
			req:    render.Request{Service: "web", Source: render.Source{Inline: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ok\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bad\n   labels: x\n"}},
			reason: render.ReasonInvalidYAML, want: []string{`service "web": inline manifests, document 2 at line 6`, "invalid YAML at line 10"}},
		{name: "invalid YAML in a referenced ConfigMap names the origin",
			req: render.Request{Service: "web", Source: render.Source{Documents: []render.Document{
				{Origin: `ConfigMap team-a/m key "ok.yaml"`, Content: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")},
				{Origin: `ConfigMap team-a/m key "bad.yaml"`, Content: []byte("apiVersion: v1\nkind: [\n")},
			}}},
			reason: render.ReasonInvalidYAML, want: []string{`ConfigMap team-a/m key "bad.yaml", document 1 at line 1`}},
		{name: "document is a list", req: render.Request{Service: "web", Source: render.Source{Inline: "- a\n- b\n"}},
			reason: render.ReasonInvalidYAML, want: []string{"document is a list, not a Kubernetes object"}},
		{name: "missing kind", req: render.Request{Service: "web", Source: render.Source{Inline: "apiVersion: v1\nmetadata:\n  name: x\n"}},
			reason: render.ReasonMissingKindOrName, want: []string{"inline manifests, document 1 at line 1", "no apiVersion or kind"}},
		{name: "missing name", req: render.Request{Service: "web", Source: render.Source{Inline: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  namespace: x\n"}},
			reason: render.ReasonMissingKindOrName, want: []string{"v1 ConfigMap has no metadata.name"}},
		{name: "generateName refused", req: render.Request{Service: "web", Source: render.Source{Inline: "apiVersion: batch/v1\nkind: Job\nmetadata:\n  generateName: migrate-\n"}},
			reason: render.ReasonMissingKindOrName, want: []string{"batch/v1 Job uses metadata.generateName", "stable metadata.name"}},
		{name: "List item without name", req: render.Request{Service: "web", Source: render.Source{Inline: "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {}\n"}},
			reason: render.ReasonMissingKindOrName, want: []string{"document 1 at line 1, List item 1", "no metadata.name"}},
		{name: "manifest template does not parse", req: render.Request{Service: "web", Source: render.Source{GoTemplate: true, Inline: "a: b\nname: {{ .Cluster.Name \n"}},
			reason: render.ReasonTemplateFailed, want: []string{"inline manifests", "does not parse", "inline manifests:2"}},
		{name: "manifest template fails", req: render.Request{Service: "web", Source: render.Source{GoTemplate: true, Inline: "a: b\nname: {{ required \"set values.name\" .Values.name }}\n"}},
			reason: render.ReasonTemplateFailed, want: []string{"inline manifests:2", "set values.name"}},
		{name: "values template fails", req: render.Request{Service: "web", ServiceValues: "x: {{ .Cluster.Nope }}", Source: render.Source{Inline: "a: b"}},
			reason: render.ReasonTemplateFailed, want: []string{"service values", "Nope"}},
		{name: "values are not a map", req: render.Request{Service: "web", TemplateValues: "- a\n- b\n", Source: render.Source{Inline: "a: b"}},
			reason: render.ReasonInvalidValues, want: []string{"ServiceTemplate values", "must be a YAML map", "not a list"}},
		{name: "values are not YAML", req: render.Request{Service: "web", ServiceValues: "a: b\n  c: d\n", Source: render.Source{Inline: "a: b"}},
			reason: render.ReasonInvalidValues, want: []string{"service values", "not valid YAML at line 2"}},
		{name: "duplicate object", req: render.Request{Service: "web", TargetNamespace: "apps", Source: render.Source{Documents: []render.Document{
			{Origin: "ConfigMap a/x key \"1\"", Content: []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n")},
			{Origin: "ConfigMap a/x key \"2\"", Content: []byte("apiVersion: apps/v1beta2\nkind: Deployment\nmetadata: {name: web, namespace: apps}\n")},
		}}},
			reason: render.ReasonDuplicateObject, want: []string{"apps/v1beta2 Deployment apps/web", "declared twice", `key "1", document 1`, `key "2", document 1`}},
		{name: "object too large", req: render.Request{Service: "web", Source: render.Source{Inline: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: huge, namespace: a}\ndata: {x: " + big + "}\n"}},
			reason: render.ReasonObjectTooLarge, want: []string{"v1 ConfigMap a/huge", "1.00 MiB", "over the"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := render.Render(context.Background(), tt.req, nil)
			if err == nil {
				t.Fatalf("Render succeeded, want %s", tt.reason)
			}
			var re *render.Error
			if !errors.As(err, &re) {
				t.Fatalf("error %T is not a *render.Error: %v", err, err)
			}
			if re.Reason != tt.reason {
				t.Errorf("reason = %s, want %s (%v)", re.Reason, tt.reason, err)
			}
			if render.Transient(err) {
				t.Errorf("Transient = true for %s", re.Reason)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error message spans lines: %q", err)
			}
		})
	}
}

// TestSecretDataNeverInErrors renders Secrets that fail in every way a Secret
// can and checks that none of their data reaches the message.
func TestSecretDataNeverInErrors(t *testing.T) {
	const secret = "hunter2-s3cr3t-value"
	const encoded = "aHVudGVyMi1zM2NyM3QtdmFsdWU="
	docs := map[string]string{
		"invalid YAML": "apiVersion: v1\nkind: Secret\nmetadata: {name: db}\nstringData:\n  password: " + secret + "\n  {" + secret + ": [\n",
		"bad map key":  "apiVersion: v1\nkind: Secret\nmetadata: {name: db}\nstringData:\n  ? [" + secret + "]\n  : x\n",
		"no name":      "apiVersion: v1\nkind: Secret\nmetadata: {}\ndata: {password: " + encoded + "}\nstringData: {p: " + secret + "}\n",
		"duplicate":    "apiVersion: v1\nkind: Secret\nmetadata: {name: db}\ndata: {password: " + encoded + "}\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: db}\nstringData: {password: " + secret + "}\n",
		"too large":    "apiVersion: v1\nkind: Secret\nmetadata: {name: db}\nstringData: {password: " + secret + ", pad: " + strings.Repeat("y", render.MaxObjectSize) + "}\n",
	}
	for name, doc := range docs {
		t.Run(name, func(t *testing.T) {
			_, err := render.Render(context.Background(), render.Request{Service: "db", Source: render.Source{Inline: doc}}, nil)
			if err == nil {
				t.Fatal("Render succeeded")
			}
			if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), encoded) {
				t.Fatalf("error leaks Secret data: %v", err)
			}
		})
	}
}

func TestTransient(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{nil, false},
		{&render.Error{Reason: render.ReasonChartFetchFailed}, true},
		{&render.Error{Reason: render.ReasonChartNotFound}, false},
		{&render.Error{Reason: render.ReasonInvalidValues}, false},
		{context.DeadlineExceeded, true},
		{errors.New("unknown"), true},
	}
	for _, tt := range tests {
		if got := render.Transient(tt.err); got != tt.want {
			t.Errorf("Transient(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}
