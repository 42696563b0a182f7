package clusterservicestatus_test

import (
	"fmt"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// TestBadInput declares, next to a good service, a bad one of each kind the issue lists: the
// bad one gets a condition naming the service, the object and what is wrong; the good one is
// deployed regardless.
func TestBadInput(t *testing.T) {
	cases := []struct {
		name      string
		template  func(ns string) holdfastv1.ServiceTemplateSpec
		values    string
		noTarget  bool
		condition string // Rendered or Applied
		reason    string
		mention   []string
		// resources are states the status must report for objects of the bad service.
		resources map[string]holdfastv1.ResourceState
	}{{
		name:      "invalid yaml",
		template:  inline("apiVersion: v1\nkind: ConfigMap\nmetadata: [\n"),
		condition: holdfastv1.RenderedCondition, reason: "InvalidYAML", mention: []string{"inline manifests"},
	}, {
		name:      "object without kind",
		template:  inline("apiVersion: v1\nmetadata:\n  name: kindless\n"),
		condition: holdfastv1.RenderedCondition, reason: "MissingKindOrName", mention: []string{"kind"},
	}, {
		name:      "object without name",
		template:  inline("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  generateName: x-\n"),
		condition: holdfastv1.RenderedCondition, reason: "MissingKindOrName", mention: []string{"name"},
	}, {
		name: "kind the cluster does not know",
		template: func(ns string) holdfastv1.ServiceTemplateSpec {
			return holdfastv1.ServiceTemplateSpec{Inline: configMapManifest("before-widget", ns, "v", "1") +
				"---\napiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n  namespace: " + ns + "\n"}
		},
		condition: holdfastv1.AppliedCondition, reason: holdfastv1.ApplyFailedReason,
		mention:   []string{"Widget", "CustomResourceDefinition", "3 of 4 objects applied"},
		resources: map[string]holdfastv1.ResourceState{"before-widget": holdfastv1.ResourceInSync, "w": holdfastv1.ResourceFailed},
	}, {
		name: "template that does not render",
		template: func(ns string) holdfastv1.ServiceTemplateSpec {
			return holdfastv1.ServiceTemplateSpec{Templating: holdfastv1.TemplatingGoTemplate,
				Inline: configMapManifest("t", ns, "v", "{{ .Cluster.Name ")}
		},
		condition: holdfastv1.RenderedCondition, reason: "TemplateFailed", mention: []string{"template"},
	}, {
		name: "chart not found",
		template: func(string) holdfastv1.ServiceTemplateSpec {
			return holdfastv1.ServiceTemplateSpec{Helm: &holdfastv1.HelmSource{RepoURL: repo.URL(), Chart: "nope"}}
		},
		condition: holdfastv1.RenderedCondition, reason: "ChartNotFound", mention: []string{"nope"},
	}, {
		name: "chart version not found",
		template: func(string) holdfastv1.ServiceTemplateSpec {
			return holdfastv1.ServiceTemplateSpec{Helm: &holdfastv1.HelmSource{RepoURL: repo.URL(), Chart: "hello", Version: "9.9.9"}}
		},
		condition: holdfastv1.RenderedCondition, reason: "ChartNotFound", mention: []string{"9.9.9", "1.1.0"},
	}, {
		name: "values of the wrong type",
		template: func(string) holdfastv1.ServiceTemplateSpec {
			return holdfastv1.ServiceTemplateSpec{Helm: &holdfastv1.HelmSource{RepoURL: repo.URL(), Chart: "hello", Version: "1.0.0"}}
		},
		values:    "replicaCount: lots\n",
		condition: holdfastv1.RenderedCondition, reason: "InvalidValues", mention: []string{"replicaCount"},
	}, {
		name: "referenced ConfigMap missing",
		template: func(string) holdfastv1.ServiceTemplateSpec {
			return holdfastv1.ServiceTemplateSpec{Resources: []holdfastv1.ManifestReference{{Kind: holdfastv1.ManifestSourceConfigMap, Name: "does-not-exist"}}}
		},
		condition: holdfastv1.RenderedCondition, reason: holdfastv1.SourceNotFoundReason, mention: []string{"does-not-exist", "create it"},
	}, {
		name: "object over 1 MiB",
		template: func(ns string) holdfastv1.ServiceTemplateSpec {
			return holdfastv1.ServiceTemplateSpec{Templating: holdfastv1.TemplatingGoTemplate,
				Inline: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: huge\n  namespace: " + ns + "\ndata:\n  v: '{{ repeat 600000 \"x\" }}'\n  w: '{{ repeat 600000 \"y\" }}'\n"}
		},
		condition: holdfastv1.RenderedCondition, reason: "ObjectTooLarge", mention: []string{"huge"},
	}, {
		name:      "namespaced object with no namespace and no target namespace",
		template:  inline("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: nowhere\ndata:\n  v: '1'\n"),
		noTarget:  true,
		condition: holdfastv1.AppliedCondition, reason: holdfastv1.ApplyFailedReason, mention: []string{"nowhere", "namespace"},
	}}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			name := fmt.Sprintf("bad-input-%d", i)
			ns := name + "-ns"
			createTemplate(t, name+"-good", holdfastv1.ServiceTemplateSpec{Inline: configMaps(ns, "good")})
			createTemplate(t, name+"-bad", c.template(ns))
			bad := service("bad", name+"-bad", ns)
			bad.Values = c.values
			if c.noTarget {
				bad.Namespace = ""
			}
			createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
				ClusterSelector: selectEnv("dev"),
				Services:        []holdfastv1.Service{service("good", name+"-good", ns), bad},
			})
			eventually(t, func(g Gomega) {
				getConfigMap(g, "cluster-1", ns, "good")
				css := statusOf(g, name, "cluster-1")
				cond := condition(css.Status.Conditions, c.condition)
				g.Expect(cond.Status).To(Equal(metav1.ConditionFalse), "%s: %+v", c.condition, css.Status.Conditions)
				g.Expect(cond.Reason).To(Equal(c.reason), cond.Message)
				g.Expect(cond.Message).To(ContainSubstring(`"bad"`), "the message names the service")
				for _, m := range c.mention {
					g.Expect(cond.Message).To(ContainSubstring(m))
				}
				for obj, state := range c.resources {
					g.Expect(css.Status.Resources).To(ContainElement(And(HaveField("Name", obj), HaveField("Service", "bad"), HaveField("State", state))))
				}
				ready := condition(css.Status.Conditions, holdfastv1.ReadyCondition)
				g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
				g.Expect(css.Status.Services).To(ContainElement(And(HaveField("Name", "good"), HaveField("Ready", metav1.ConditionTrue))))
				g.Expect(css.Status.Services).To(ContainElement(And(HaveField("Name", "bad"), HaveField("Ready", metav1.ConditionFalse))))
			})
		})
	}
}

func inline(text string) func(string) holdfastv1.ServiceTemplateSpec {
	return func(string) holdfastv1.ServiceTemplateSpec { return holdfastv1.ServiceTemplateSpec{Inline: text} }
}

// TestMissingConfigMapAppearsLater: a service waiting for its ConfigMap deploys by itself once
// the ConfigMap is created.
func TestMissingConfigMapAppearsLater(t *testing.T) {
	name, ns := objName(t, ""), objName(t, "ns")
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Resources: []holdfastv1.ManifestReference{{Kind: holdfastv1.ManifestSourceConfigMap, Name: name}}})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), Services: []holdfastv1.Service{service("web", name, ns)},
	})
	eventually(t, func(g Gomega) {
		css := statusOf(g, name, "cluster-1")
		g.Expect(condition(css.Status.Conditions, holdfastv1.RenderedCondition).Reason).To(Equal(holdfastv1.SourceNotFoundReason))
	})
	createHubObject(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: templateNamespace, Name: name},
		Data: map[string]string{"all.yaml": strings.TrimSpace(configMaps(ns, "late"))}})
	expectReady(t, name, "cluster-1")
	eventually(t, func(g Gomega) { getConfigMap(g, "cluster-1", ns, "late") })
}

// TestTemplateStatus: a template reports on itself whether its source is usable.
func TestTemplateStatus(t *testing.T) {
	name := objName(t, "")
	cases := map[string]struct {
		spec   holdfastv1.ServiceTemplateSpec
		status metav1.ConditionStatus
		reason string
	}{
		"chart":          {holdfastv1.ServiceTemplateSpec{Helm: &holdfastv1.HelmSource{RepoURL: repo.URL(), Chart: "hello", Version: "1.x"}}, metav1.ConditionTrue, holdfastv1.SourceAvailableReason},
		"missing-chart":  {holdfastv1.ServiceTemplateSpec{Helm: &holdfastv1.HelmSource{RepoURL: repo.URL(), Chart: "nope"}}, metav1.ConditionFalse, "ChartNotFound"},
		"missing-cm":     {holdfastv1.ServiceTemplateSpec{Resources: []holdfastv1.ManifestReference{{Kind: holdfastv1.ManifestSourceConfigMap, Name: "absent"}}}, metav1.ConditionFalse, holdfastv1.SourceNotFoundReason},
		"invalid-inline": {holdfastv1.ServiceTemplateSpec{Inline: "kind: [\n"}, metav1.ConditionFalse, "InvalidYAML"},
		"valid-inline":   {holdfastv1.ServiceTemplateSpec{Inline: configMaps("tpl-ns", "tpl-cm")}, metav1.ConditionTrue, holdfastv1.SourceAvailableReason},
	}
	for suffix, c := range cases {
		createTemplate(t, name+"-"+suffix, c.spec)
	}
	for suffix, c := range cases {
		eventually(t, func(g Gomega) {
			tpl := &holdfastv1.ServiceTemplate{}
			g.Expect(hub.Get(t.Context(), client.ObjectKey{Namespace: templateNamespace, Name: name + "-" + suffix}, tpl)).To(Succeed())
			g.Expect(condition(tpl.Status.Conditions, holdfastv1.ReadyCondition).Status).To(Equal(c.status), "%s: %+v", suffix, tpl.Status.Conditions)
			source := condition(tpl.Status.Conditions, holdfastv1.SourceAvailableCondition)
			g.Expect(source.Reason).To(Equal(c.reason), "%s: %s", suffix, source.Message)
		})
	}
}
