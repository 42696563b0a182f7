package demo

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// The sample fleet the demo deploys. It is written as the objects a platform lead would apply to
// the hub, so that reading this file shows what a declaration looks like.
const (
	// demoTemplateNamespace holds the ServiceTemplates on the hub.
	demoTemplateNamespace = "holdfast-demo"
	// demoAppNamespace is where the services land on the target clusters.
	demoAppNamespace = "demo"

	demoChartVersion = "1.0.0"

	// appsSet deploys web and greeter to every sandbox cluster; canarySet deploys the canary to
	// the clusters of one environment.
	appsSet   = "sandbox-apps"
	canarySet = "canary"

	webTemplate        = "web"
	helloHTTPTemplate  = "hello-http"
	helloOCITemplate   = "hello-oci"
	webSettingsName    = "web-settings"
	webChangeKey       = "feature"
	webChangeValue     = "new-checkout"
	sandboxFleetLabel  = "fleet"
	sandboxFleetValue  = "sandbox"
	envLabel           = "env"
	canaryStartEnv     = "dev"
	canaryPromotionEnv = "prod"
)

// webManifests are inline manifests rendered as a Go template for each cluster: the Namespace
// is the service's target namespace, the ConfigMap says which cluster it is on, and the values
// (defaults in the template, overrides in the service) pick the log level and the replicas.
const webManifests = `apiVersion: v1
kind: Namespace
metadata:
  name: {{ .TargetNamespace }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: ` + webSettingsName + `
data:
  cluster: {{ .Cluster.Name | quote }}
  env: {{ index .Cluster.Labels "env" | quote }}
  logLevel: {{ .Values.logLevel | quote }}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: {{ .Values.replicas }}
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: registry.k8s.io/pause:3.10
`

// webDefaults are the web template's default values.
const webDefaults = `logLevel: info
replicas: 1
`

// webOverrides are the service's values in the MultiClusterService: they depend on the cluster.
const webOverrides = `logLevel: '{{ if eq (index .Cluster.Labels "env") "prod" }}warn{{ else }}debug{{ end }}'
replicas: {{ if eq (index .Cluster.Labels "env") "prod" }}2{{ else }}1{{ end }}
`

// webManifestsChanged is webManifests with one more key in the ConfigMap: the change the demo
// rolls out.
func webManifestsChanged() string {
	anchor := "  logLevel: {{ .Values.logLevel | quote }}\n"
	return strings.Replace(webManifests, anchor, anchor+fmt.Sprintf("  %s: %q\n", webChangeKey, webChangeValue), 1)
}

// demoTemplates returns the ServiceTemplates: the inline web service, and the hello chart from
// the loopback HTTP chart repository and from the loopback OCI registry.
func demoTemplates(repoURL, registryURL string) []*holdfastv1.ServiceTemplate {
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: demoTemplateNamespace}
	}
	return []*holdfastv1.ServiceTemplate{
		{ObjectMeta: meta(webTemplate), Spec: holdfastv1.ServiceTemplateSpec{
			Inline: webManifests, Values: webDefaults, Templating: holdfastv1.TemplatingGoTemplate,
		}},
		{ObjectMeta: meta(helloHTTPTemplate), Spec: holdfastv1.ServiceTemplateSpec{
			Helm:   &holdfastv1.HelmSource{RepoURL: repoURL, Chart: "hello", Version: demoChartVersion},
			Values: `message: "hello from {{ .Cluster.Name }}"` + "\n",
		}},
		{ObjectMeta: meta(helloOCITemplate), Spec: holdfastv1.ServiceTemplateSpec{
			Helm: &holdfastv1.HelmSource{RepoURL: registryURL, Chart: "hello", Version: demoChartVersion, PlainHTTP: true},
		}},
	}
}

// demoServiceSets returns the MultiClusterServices: the apps for the whole sandbox fleet, and a
// canary for one environment only.
func demoServiceSets() []*holdfastv1.MultiClusterService {
	ref := func(name string) holdfastv1.TemplateReference {
		return holdfastv1.TemplateReference{Name: name, Namespace: demoTemplateNamespace}
	}
	return []*holdfastv1.MultiClusterService{
		{
			ObjectMeta: metav1.ObjectMeta{Name: appsSet},
			Spec: holdfastv1.MultiClusterServiceSpec{
				ClusterSelector: holdfastv1.ClusterSelector{LabelSelector: metav1.LabelSelector{
					MatchLabels: map[string]string{sandboxFleetLabel: sandboxFleetValue},
				}},
				Services: []holdfastv1.Service{
					{Name: "web", Template: ref(webTemplate), Namespace: demoAppNamespace, Values: webOverrides},
					{Name: "greeter", Template: ref(helloHTTPTemplate), Namespace: demoAppNamespace},
				},
				// Changes made by hand on a cluster are put back at once (the demo's drift section).
				SyncMode:          holdfastv1.SyncModeContinuousWithDriftDetection,
				ReconcileInterval: &metav1.Duration{Duration: holdfastv1.DefaultReconcileInterval},
			},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Name: canarySet},
			Spec: holdfastv1.MultiClusterServiceSpec{
				ClusterSelector: envSelector(canaryStartEnv),
				Services: []holdfastv1.Service{{
					Name: "canary", Template: ref(helloOCITemplate), Namespace: "default",
					Values: `message: 'canary on {{ .Cluster.Name }} ({{ index .Cluster.Labels "env" }})'` + "\n",
				}},
				SyncMode: holdfastv1.SyncModeContinuous,
			},
		},
	}
}

// envSelector selects the sandbox clusters of one environment.
func envSelector(env string) holdfastv1.ClusterSelector {
	return holdfastv1.ClusterSelector{LabelSelector: metav1.LabelSelector{
		MatchLabels: map[string]string{sandboxFleetLabel: sandboxFleetValue, envLabel: env},
	}}
}
