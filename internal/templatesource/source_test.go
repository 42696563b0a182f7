package templatesource_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/render"
	"holdfast.dev/holdfast/internal/templatesource"
)

const ns = "templates"

func configMap(name string, data map[string]string, binary map[string][]byte) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data, BinaryData: binary}
}

func secret(name string, data map[string][]byte) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data}
}

// reader serves ConfigMaps' metadata from one client, and ConfigMaps and Secrets from another,
// as the hub's cache and the API server do: a Secret read through the cache is not found, and
// a ConfigMap's data comes from the API server.
func reader(configMaps []*corev1.ConfigMap, secrets []*corev1.Secret) templatesource.Reader {
	cache, api := fake.NewClientBuilder(), fake.NewClientBuilder()
	for _, cm := range configMaps {
		cache.WithObjects(cm.DeepCopy())
		api.WithObjects(cm)
	}
	for _, s := range secrets {
		api.WithObjects(s)
	}
	return templatesource.Reader{Client: cache.Build(), APIReader: api.Build()}
}

func template(spec holdfastv1.ServiceTemplateSpec) *holdfastv1.ServiceTemplate {
	return &holdfastv1.ServiceTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}, Spec: spec}
}

func TestChart(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   holdfastv1.HelmSource
		want render.Helm
	}{
		{"defaults include the CRDs",
			holdfastv1.HelmSource{RepoURL: "https://charts.example", Chart: "hello"},
			render.Helm{RepoURL: "https://charts.example", Chart: "hello", IncludeCRDs: true}},
		{"every field",
			holdfastv1.HelmSource{RepoURL: "oci://registry.example/charts", Chart: "hello", Version: "1.x", ReleaseName: "hi",
				SkipCRDs: true, PlainHTTP: true, InsecureSkipTLSVerify: true,
				CredentialsSecretRef: &holdfastv1.LocalObjectReference{Name: "login"}},
			render.Helm{RepoURL: "oci://registry.example/charts", Chart: "hello", Version: "1.x", ReleaseName: "hi",
				IncludeCRDs: false, PlainHTTP: true, InsecureSkipTLSVerify: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := templatesource.Chart(&tt.in); got != tt.want {
				t.Errorf("Chart = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestSource(t *testing.T) {
	r := reader(
		[]*corev1.ConfigMap{
			configMap("manifests", map[string]string{"b.yaml": "kind: B", "a.yaml": "kind: A"}, map[string][]byte{"c.yaml": []byte("kind: C")}),
			configMap("base", map[string]string{"kustomization.yaml": "resources: [cm.yaml]", "cm.yaml": "kind: ConfigMap"}, nil),
			configMap("overlay", map[string]string{"kustomization.yaml": "resources: [../base]"}, nil),
		},
		[]*corev1.Secret{
			secret("tls", map[string][]byte{"cert.yaml": []byte("kind: Secret"), "other.yaml": []byte("kind: Other")}),
			secret("login", map[string][]byte{"username": []byte("robot"), "password": []byte("s3cret")}),
		},
	)
	chart := holdfastv1.HelmSource{RepoURL: "https://charts.example", Chart: "hello", Version: "1.0.0"}
	withLogin := chart
	withLogin.CredentialsSecretRef = &holdfastv1.LocalObjectReference{Name: "login"}
	for _, tt := range []struct {
		name string
		spec holdfastv1.ServiceTemplateSpec
		want render.Source
	}{
		{"inline manifests",
			holdfastv1.ServiceTemplateSpec{Inline: "kind: A"},
			render.Source{Inline: "kind: A"}},
		{"inline manifests as a Go template",
			holdfastv1.ServiceTemplateSpec{Inline: "kind: {{ .Service }}", Templating: holdfastv1.TemplatingGoTemplate},
			render.Source{Inline: "kind: {{ .Service }}", GoTemplate: true}},
		{"every key of a ConfigMap in key order, then one key of a Secret",
			holdfastv1.ServiceTemplateSpec{Resources: []holdfastv1.ManifestReference{
				{Kind: holdfastv1.ManifestSourceConfigMap, Name: "manifests"},
				{Kind: holdfastv1.ManifestSourceSecret, Name: "tls", Key: "cert.yaml"},
			}},
			render.Source{Documents: []render.Document{
				{Origin: `ConfigMap templates/manifests key "a.yaml"`, Content: []byte("kind: A")},
				{Origin: `ConfigMap templates/manifests key "b.yaml"`, Content: []byte("kind: B")},
				{Origin: `ConfigMap templates/manifests key "c.yaml"`, Content: []byte("kind: C")},
				{Origin: `Secret templates/tls key "cert.yaml"`, Content: []byte("kind: Secret"), Sensitive: true},
			}}},
		{"kustomize files placed in their directories",
			holdfastv1.ServiceTemplateSpec{Kustomize: &holdfastv1.KustomizeSource{
				Files: []holdfastv1.KustomizeFiles{{ConfigMap: "base", Directory: "base"}, {ConfigMap: "overlay", Directory: "overlay"}},
				Path:  "overlay",
			}},
			render.Source{Kustomize: &render.Kustomize{Path: "overlay", Files: map[string][]byte{
				"base/kustomization.yaml":    []byte("resources: [cm.yaml]"),
				"base/cm.yaml":               []byte("kind: ConfigMap"),
				"overlay/kustomization.yaml": []byte("resources: [../base]"),
			}}}},
		{"a chart without credentials",
			holdfastv1.ServiceTemplateSpec{Helm: &chart},
			render.Source{Helm: &render.Helm{RepoURL: "https://charts.example", Chart: "hello", Version: "1.0.0", IncludeCRDs: true}}},
		{"a chart with the credentials from its Secret",
			holdfastv1.ServiceTemplateSpec{Helm: &withLogin},
			render.Source{Helm: &render.Helm{RepoURL: "https://charts.example", Chart: "hello", Version: "1.0.0", IncludeCRDs: true,
				Username: "robot", Password: "s3cret"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := r.Source(context.Background(), template(tt.spec))
			if err != nil {
				t.Fatalf("Source: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Source =\n%#v\nwant\n%#v", got, tt.want)
			}
		})
	}
}

func TestSourceErrors(t *testing.T) {
	boom := errors.New("connection refused")
	failing := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
		Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return boom
		},
	}).Build()
	// A Secret in the cache alone is not read: Secrets come from the API server. A ConfigMap
	// is read when the cache knows it, from the API server.
	cachedOnly := templatesource.Reader{
		Client: fake.NewClientBuilder().WithObjects(
			configMap("present", map[string]string{"a.yaml": "kind: A"}, nil), secret("cached", map[string][]byte{"a.yaml": []byte("kind: A")}),
			configMap("gone", map[string]string{"a.yaml": "kind: A"}, nil), configMap("broken", map[string]string{"a.yaml": "kind: A"}, nil),
		).Build(),
		APIReader: fake.NewClientBuilder().WithObjects(
			configMap("present", map[string]string{"a.yaml": "kind: A"}, nil), configMap("unseen", map[string]string{"a.yaml": "kind: A"}, nil),
		).WithInterceptorFuncs(interceptor.Funcs{
			Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				if key.Name == "broken" {
					return boom
				}
				return c.Get(ctx, key, obj, opts...)
			},
		}).Build(),
	}
	present := reader(nil, []*corev1.Secret{secret("tls", map[string][]byte{"cert.yaml": []byte("kind: Secret")})})

	for _, tt := range []struct {
		name     string
		reader   templatesource.Reader
		spec     holdfastv1.ServiceTemplateSpec
		want     templatesource.ReadError // Err compared with notFound and cause
		notFound bool
		cause    error
		message  string
	}{
		{name: "a missing ConfigMap of the manifests", reader: cachedOnly,
			spec: holdfastv1.ServiceTemplateSpec{Resources: []holdfastv1.ManifestReference{{Kind: holdfastv1.ManifestSourceConfigMap, Name: "absent"}}},
			want: templatesource.ReadError{Kind: "ConfigMap", Namespace: ns, Name: "absent", Field: "spec.resources"}, notFound: true,
			message: `reading ConfigMap templates/absent (spec.resources): configmaps "absent" not found`},
		{name: "a ConfigMap the cache knows and the API server no longer has", reader: cachedOnly,
			spec: holdfastv1.ServiceTemplateSpec{Resources: []holdfastv1.ManifestReference{{Kind: holdfastv1.ManifestSourceConfigMap, Name: "gone"}}},
			want: templatesource.ReadError{Kind: "ConfigMap", Namespace: ns, Name: "gone", Field: "spec.resources"}, notFound: true,
			message: `reading ConfigMap templates/gone (spec.resources): configmaps "gone" not found`},
		{name: "a ConfigMap the cache has not seen yet", reader: cachedOnly,
			spec: holdfastv1.ServiceTemplateSpec{Resources: []holdfastv1.ManifestReference{{Kind: holdfastv1.ManifestSourceConfigMap, Name: "unseen"}}},
			want: templatesource.ReadError{Kind: "ConfigMap", Namespace: ns, Name: "unseen", Field: "spec.resources"}, notFound: true,
			message: `reading ConfigMap templates/unseen (spec.resources): configmaps "unseen" not found`},
		{name: "a ConfigMap the API server fails to read", reader: cachedOnly,
			spec: holdfastv1.ServiceTemplateSpec{Resources: []holdfastv1.ManifestReference{{Kind: holdfastv1.ManifestSourceConfigMap, Name: "broken"}}},
			want: templatesource.ReadError{Kind: "ConfigMap", Namespace: ns, Name: "broken", Field: "spec.resources"}, cause: boom,
			message: `reading ConfigMap templates/broken (spec.resources): connection refused`},
		{name: "a Secret that is only in the cache", reader: cachedOnly,
			spec: holdfastv1.ServiceTemplateSpec{Resources: []holdfastv1.ManifestReference{{Kind: holdfastv1.ManifestSourceSecret, Name: "cached"}}},
			want: templatesource.ReadError{Kind: "Secret", Namespace: ns, Name: "cached", Field: "spec.resources"}, notFound: true,
			message: `reading Secret templates/cached (spec.resources): secrets "cached" not found`},
		{name: "a missing key", reader: present,
			spec: holdfastv1.ServiceTemplateSpec{Resources: []holdfastv1.ManifestReference{{Kind: holdfastv1.ManifestSourceSecret, Name: "tls", Key: "nope.yaml"}}},
			want: templatesource.ReadError{Kind: "Secret", Namespace: ns, Name: "tls", Field: "spec.resources", Key: "nope.yaml"}, notFound: true,
			message: `Secret templates/tls (spec.resources) has no key "nope.yaml"`},
		{name: "a missing ConfigMap of the kustomize files", reader: cachedOnly,
			spec: holdfastv1.ServiceTemplateSpec{Kustomize: &holdfastv1.KustomizeSource{Files: []holdfastv1.KustomizeFiles{{ConfigMap: "present"}, {ConfigMap: "base"}}}},
			want: templatesource.ReadError{Kind: "ConfigMap", Namespace: ns, Name: "base", Field: "spec.kustomize.files"}, notFound: true,
			message: `reading ConfigMap templates/base (spec.kustomize.files): configmaps "base" not found`},
		{name: "a missing credentials Secret", reader: cachedOnly,
			spec: holdfastv1.ServiceTemplateSpec{Helm: &holdfastv1.HelmSource{RepoURL: "https://charts.example", Chart: "hello",
				CredentialsSecretRef: &holdfastv1.LocalObjectReference{Name: "login"}}},
			want: templatesource.ReadError{Kind: "Secret", Namespace: ns, Name: "login", Field: "spec.helm.credentialsSecretRef"}, notFound: true,
			message: `reading Secret templates/login (spec.helm.credentialsSecretRef): secrets "login" not found`},
		{name: "an API server that fails", reader: templatesource.Reader{Client: failing, APIReader: failing},
			spec: holdfastv1.ServiceTemplateSpec{Resources: []holdfastv1.ManifestReference{{Kind: holdfastv1.ManifestSourceSecret, Name: "tls"}}},
			want: templatesource.ReadError{Kind: "Secret", Namespace: ns, Name: "tls", Field: "spec.resources"}, cause: boom,
			message: `reading Secret templates/tls (spec.resources): connection refused`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.reader.Source(context.Background(), template(tt.spec))
			var re *templatesource.ReadError
			if !errors.As(err, &re) {
				t.Fatalf("error = %v, want a *ReadError", err)
			}
			got := *re
			got.Err = nil
			if got != tt.want {
				t.Errorf("ReadError = %+v, want %+v", got, tt.want)
			}
			if re.NotFound() != tt.notFound {
				t.Errorf("NotFound = %t, want %t", re.NotFound(), tt.notFound)
			}
			switch {
			case tt.want.Key != "":
				if re.Err != nil {
					t.Errorf("Err = %v, want nil for a missing key", re.Err)
				}
			case tt.notFound:
				if !apierrors.IsNotFound(re.Err) {
					t.Errorf("Err = %v, want a NotFound error", re.Err)
				}
			default:
				if !errors.Is(err, tt.cause) {
					t.Errorf("error %v does not wrap %v", err, tt.cause)
				}
			}
			if err.Error() != tt.message {
				t.Errorf("message = %q, want %q", err.Error(), tt.message)
			}
		})
	}
}

// TestExists checks that a ConfigMap exists when the cache knows it, without its data being
// read from the API server, and a Secret when the API server has it.
func TestExists(t *testing.T) {
	apiReads := 0
	r := templatesource.Reader{
		Client: fake.NewClientBuilder().WithObjects(configMap("known", nil, nil), secret("cached", nil)).Build(),
		APIReader: fake.NewClientBuilder().WithObjects(configMap("unseen", nil, nil), secret("tls", nil)).
			WithInterceptorFuncs(interceptor.Funcs{
				Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					if _, ok := obj.(*corev1.ConfigMap); ok {
						apiReads++
					}
					return c.Get(ctx, key, obj, opts...)
				},
			}).Build(),
	}
	for _, tt := range []struct {
		kind   holdfastv1.ManifestSourceKind
		name   string
		exists bool
	}{
		{holdfastv1.ManifestSourceConfigMap, "known", true},
		{holdfastv1.ManifestSourceConfigMap, "unseen", false},
		{holdfastv1.ManifestSourceSecret, "tls", true},
		{holdfastv1.ManifestSourceSecret, "cached", false},
	} {
		err := r.Exists(context.Background(), template(holdfastv1.ServiceTemplateSpec{}), tt.kind, tt.name, templatesource.FieldResources)
		var re *templatesource.ReadError
		switch {
		case tt.exists && err != nil:
			t.Errorf("%s %s: %v, want it to exist", tt.kind, tt.name, err)
		case !tt.exists && (!errors.As(err, &re) || !re.NotFound()):
			t.Errorf("%s %s: %v, want a ReadError that is NotFound", tt.kind, tt.name, err)
		}
	}
	if apiReads != 0 {
		t.Errorf("%d ConfigMaps read from the API server, want none", apiReads)
	}
}
