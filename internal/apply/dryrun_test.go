package apply_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"testing"

	. "github.com/onsi/gomega"

	"holdfast.dev/holdfast/internal/apply"
)

func TestDryRunReportsAndChangesNothing(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	fresh := ns + "-fresh"
	group := "dryrun.test.holdfast.dev"
	const oldSecret, newSecret, createdSecret = "old-s3cret-value", "new-s3cret-value", "created-s3cret-value"
	a, counter := newApplier(t)
	base := objects(t, `
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg}
data: {k: v1}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: gone}
---
apiVersion: v1
kind: Secret
metadata: {name: creds}
stringData: {password: %s}
---
%s
`, oldSecret, deployment)
	opts := apply.Options{DefaultNamespace: ns, Labels: ownerLabels, Prune: true}
	res, err := a.Apply(ctx, base, opts)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Err()).NotTo(HaveOccurred())
	versions := map[apply.Ref]string{}
	for _, e := range res.Inventory {
		versions[e.Ref] = live(t, apiVersion(e.Ref), e.Kind, ns, e.Name).GetResourceVersion()
	}

	desired := objects(t, `
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg, labels: {tier: web}}
data: {k: v2}
---
apiVersion: v1
kind: Secret
metadata: {name: creds}
stringData: {password: %[1]s}
---
apiVersion: v1
kind: Secret
metadata: {name: created}
data: {token: %[2]s}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: fresh}
---
apiVersion: v1
kind: Namespace
metadata: {name: %[3]s}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: inside, namespace: %[3]s}
---
apiVersion: %[4]s/v1
kind: Widget
metadata: {name: w}
---
%[5]s
---
%[6]s
`, newSecret, base64.StdEncoding.EncodeToString([]byte(createdSecret)), fresh, group, deployment, crd(group))
	counter.reset()
	opts.Previous, opts.DryRun = res.Inventory, true
	res, err = a.Apply(ctx, desired, opts)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Err()).NotTo(HaveOccurred())
	_, _, requests := counter.reset()
	g.Expect(actions(res)).To(Equal(map[string]apply.Action{
		"ConfigMap/cfg": apply.WouldUpdate, "Secret/creds": apply.WouldUpdate, "Secret/created": apply.WouldCreate,
		"ConfigMap/fresh": apply.WouldCreate, "Namespace/" + fresh: apply.WouldCreate, "ConfigMap/inside": apply.WouldCreate,
		"Widget/w": apply.WouldCreate, "CustomResourceDefinition/widgets." + group: apply.WouldCreate,
		"Deployment/web": apply.Unchanged, "ConfigMap/gone": apply.WouldDelete,
	}))
	for _, r := range requests {
		g.Expect(r).To(HavePrefix("PATCH"), "only dry-run applies: %v", requests)
	}
	g.Expect(res.Changed).To(BeZero())
	g.Expect(res.Inventory).To(ConsistOf(opts.Previous))

	cfg, _ := res.Object(apply.Ref{Kind: "ConfigMap", Namespace: ns, Name: "cfg"})
	g.Expect(cfg.Diff).To(ContainSubstring(`/data/k: "v1" -> "v2"`))
	g.Expect(cfg.Diff).To(ContainSubstring(`/metadata/labels/tier: <none> -> "web"`))
	creds, _ := res.Object(apply.Ref{Kind: "Secret", Namespace: ns, Name: "creds"})
	g.Expect(creds.Diff).To(ContainSubstring("/data/password"))
	g.Expect(creds.Diff).To(ContainSubstring("***"))
	created, _ := res.Object(apply.Ref{Kind: "Secret", Namespace: ns, Name: "created"})
	g.Expect(created.Diff).To(ContainSubstring("token: '***'"))
	inside, _ := res.Object(apply.Ref{Kind: "ConfigMap", Namespace: fresh, Name: "inside"})
	g.Expect(inside.Message).To(ContainSubstring("namespace"))
	w, _ := res.Object(apply.Ref{Group: group, Kind: "Widget", Namespace: ns, Name: "w"})
	g.Expect(w.Message).To(ContainSubstring("CustomResourceDefinition"))

	// No Secret value, plain or encoded, appears anywhere in the result.
	j, err := json.Marshal(res)
	g.Expect(err).NotTo(HaveOccurred())
	dump := string(j) + fmt.Sprintf("%+v", res)
	for _, s := range []string{oldSecret, newSecret, createdSecret} {
		g.Expect(dump).NotTo(ContainSubstring(s))
		g.Expect(dump).NotTo(ContainSubstring(base64.StdEncoding.EncodeToString([]byte(s))))
	}

	// Nothing changed.
	for ref, rv := range versions {
		g.Expect(live(t, apiVersion(ref), ref.Kind, ref.Namespace, ref.Name).GetResourceVersion()).To(Equal(rv), ref.String())
	}
	g.Expect(live(t, "v1", "ConfigMap", ns, "fresh")).To(BeNil())
	g.Expect(live(t, "v1", "Namespace", "", fresh)).To(BeNil())
	g.Expect(live(t, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "widgets."+group)).To(BeNil())
}
