package index

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

func TestStatusKeys(t *testing.T) {
	css := &holdfastv1.ClusterServiceStatus{
		ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: "web-a"},
		Spec:       holdfastv1.ClusterServiceStatusSpec{MultiClusterService: "web", Cluster: "a"},
	}
	if got, want := statusServiceSetKeys(css), []string{"web"}; !slices.Equal(got, want) {
		t.Errorf("StatusByServiceSet keys = %q, want %q", got, want)
	}
	if got, want := statusClusterKeys(css), []string{"fleet/a"}; !slices.Equal(got, want) {
		t.Errorf("StatusByCluster keys = %q, want %q", got, want)
	}
}

func TestServiceSetTemplateKeys(t *testing.T) {
	service := func(name, namespace, template string) holdfastv1.Service {
		return holdfastv1.Service{Name: name, Template: holdfastv1.TemplateReference{Namespace: namespace, Name: template}}
	}
	for _, tt := range []struct {
		name     string
		services []holdfastv1.Service
		want     []string
	}{
		{"no services", nil, nil},
		{"one service", []holdfastv1.Service{service("web", "templates", "nginx")}, []string{"templates/nginx"}},
		{"templates in several namespaces, in service order",
			[]holdfastv1.Service{service("web", "team-a", "nginx"), service("db", "team-b", "postgres"), service("cache", "team-a", "redis")},
			[]string{"team-a/nginx", "team-b/postgres", "team-a/redis"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mcs := &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: "web"},
				Spec: holdfastv1.MultiClusterServiceSpec{Services: tt.services}}
			if got := serviceSetTemplateKeys(mcs); !slices.Equal(got, tt.want) {
				t.Errorf("ServiceSetByTemplate keys = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestTemplateSourceKeys(t *testing.T) {
	for _, tt := range []struct {
		name string
		spec holdfastv1.ServiceTemplateSpec
		want []string
	}{
		{"inline manifests read nothing", holdfastv1.ServiceTemplateSpec{Inline: "apiVersion: v1\nkind: Namespace\n"}, nil},
		{"resources from ConfigMaps and Secrets, in declaration order",
			holdfastv1.ServiceTemplateSpec{Resources: []holdfastv1.ManifestReference{
				{Kind: holdfastv1.ManifestSourceConfigMap, Name: "manifests"},
				{Kind: holdfastv1.ManifestSourceSecret, Name: "tls", Key: "cert.yaml"},
			}},
			[]string{"ConfigMap/manifests", "Secret/tls"}},
		{"kustomize files are ConfigMaps",
			holdfastv1.ServiceTemplateSpec{Kustomize: &holdfastv1.KustomizeSource{
				Files: []holdfastv1.KustomizeFiles{{ConfigMap: "base", Directory: "base"}, {ConfigMap: "overlay", Directory: "overlay"}},
				Path:  "overlay",
			}},
			[]string{"ConfigMap/base", "ConfigMap/overlay"}},
		{"a chart without credentials reads nothing",
			holdfastv1.ServiceTemplateSpec{Helm: &holdfastv1.HelmSource{RepoURL: "https://charts.example", Chart: "hello"}}, nil},
		{"a chart's credentials Secret",
			holdfastv1.ServiceTemplateSpec{Helm: &holdfastv1.HelmSource{RepoURL: "oci://registry.example/charts", Chart: "hello",
				CredentialsSecretRef: &holdfastv1.LocalObjectReference{Name: "registry-login"}}},
			[]string{"Secret/registry-login"}},
		{"an artifact's decryption Secret",
			holdfastv1.ServiceTemplateSpec{Artifact: &holdfastv1.ArtifactSource{URL: "oci://registry.example/app:v1"},
				Decryption: &holdfastv1.Decryption{Provider: holdfastv1.DecryptionSOPS, SecretRef: holdfastv1.LocalObjectReference{Name: "sops-keys"}}},
			[]string{"Secret/sops-keys"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tpl := &holdfastv1.ServiceTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: "templates", Name: "t"}, Spec: tt.spec}
			if got := templateSourceKeys(tpl); !slices.Equal(got, tt.want) {
				t.Errorf("TemplateBySource keys = %q, want %q", got, tt.want)
			}
			if got := SourceKeys(tpl); !slices.Equal(got, tt.want) {
				t.Errorf("SourceKeys = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestLookupKeys checks the keys the lookups (StatusesOfCluster, ServiceSetsUsingTemplate,
// TemplatesReading) ask for: the same strings the extractors above are checked to index by.
func TestLookupKeys(t *testing.T) {
	if got := namespacedKey("fleet", "a"); got != "fleet/a" {
		t.Errorf("namespacedKey = %q, want fleet/a", got)
	}
	if got := sourceKey("Secret", "registry-login"); got != "Secret/registry-login" {
		t.Errorf("sourceKey = %q, want Secret/registry-login", got)
	}
}

func TestServiceSetDependencyKeys(t *testing.T) {
	mcs := &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: holdfastv1.MultiClusterServiceSpec{Services: []holdfastv1.Service{
			{Name: "app", DependsOn: []string{"db", "storage/db", "web/cache"}},
			{Name: "cache", DependsOn: []string{"network/cni", "storage/bucket"}},
			{Name: "db"},
		}}}
	if got, want := serviceSetDependencyKeys(mcs), []string{"network", "storage"}; !slices.Equal(got, want) {
		t.Errorf("ServiceSetByDependency keys = %q, want %q", got, want)
	}
}
