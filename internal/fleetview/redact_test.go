package fleetview

import (
	"bytes"
	"strings"
	"testing"
	"time"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/drift"
	"holdfast.dev/holdfast/internal/fleetview/fleetviewtest"
)

// kubectl's last-applied annotation holds a Secret's data: a drift record that shows it, as a
// buggy or older controller may have written, is redacted in every output of every verb.
func TestLastAppliedOfSecretIsRedacted(t *testing.T) {
	const marker = "applied-s3cr3t-marker"
	applied := `"{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"stringData\":{\"password\":\"` + marker + `\"}}"`
	statuses := fleetviewtest.Statuses()
	c1 := &statuses[2]
	fields := []holdfastv1.FieldChange{
		{Path: ".metadata.annotations.kubectl.kubernetes.io/last-applied-configuration", Old: applied, New: applied},
		{Path: "/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration", Old: applied},
		{Path: ".metadata.annotations", Old: `{"kubectl.kubernetes.io/last-applied-configuration":` + applied + `}`},
		{Path: ".metadata.labels.tier", Old: `"gold"`, New: `"silver"`},
	}
	setDriftFields(c1, fields, func(r holdfastv1.ResourceRef) bool { return r == fleetviewtest.SecretRef })
	for i, out := range driftOutputs(t, statuses) {
		if strings.Contains(out, marker) {
			t.Errorf("output %d shows the Secret's last-applied annotation:\n%s", i, out)
		}
		if !strings.Contains(out, redactedValue) {
			t.Errorf("output %d does not say %s:\n%s", i, redactedValue, out)
		}
	}
}

// The CLI redacts exactly what the controller does, and only for a core/v1 Secret.
func TestSecretDataFollowsTheDriftRule(t *testing.T) {
	paths := []string{
		".data.password", "/stringData/token", "", ".metadata.annotations",
		".metadata.annotations.kubectl.kubernetes.io/last-applied-configuration",
		"/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration",
		".metadata.annotations.team", ".metadata.labels.tier", ".type", ".database",
	}
	for _, p := range paths {
		if got, want := secretData(fleetviewtest.SecretRef, p), drift.SecretValuePath(p); got != want {
			t.Errorf("secretData(Secret, %q) = %v, drift.SecretValuePath = %v", p, got, want)
		}
		for _, ref := range []holdfastv1.ResourceRef{fleetviewtest.ConfigMapRef, fleetviewtest.Ref("example.com", "Secret", "shop", "x")} {
			if secretData(ref, p) {
				t.Errorf("secretData(%s %s, %q) = true, want false: it is no core/v1 Secret", ref.Group, ref.Kind, p)
			}
		}
	}
	if !secretData(fleetviewtest.SecretRef, ".metadata.annotations.kubectl.kubernetes.io/last-applied-configuration") {
		t.Errorf("the last-applied annotation of a Secret is not redacted")
	}
}

// A binary value in a drift record, as a controller before binary values were shown as digests
// recorded it (its base64 text), is shown as its size and digest in every output of every verb.
func TestBinaryValuesAreShownAsDigests(t *testing.T) {
	const blob = "Zmlyb3dhcmUtYmxvYg==" // "firmware-blob"
	statuses := fleetviewtest.Statuses()
	c1 := &statuses[2]
	fields := []holdfastv1.FieldChange{{Path: ".binaryData.firmware", Old: `"` + blob + `"`, New: `"` + blob[:8] + `…`}}
	setDriftFields(c1, fields, func(holdfastv1.ResourceRef) bool { return true })
	for i, out := range driftOutputs(t, statuses) {
		if strings.Contains(out, blob[:8]) {
			t.Errorf("output %d shows the base64 text:\n%s", i, out)
		}
		if !strings.Contains(out, "binary") {
			t.Errorf("output %d does not show the binary value:\n%s", i, out)
		}
	}
}

// setDriftFields gives the drift records and last drifts of css's objects that match the fields.
func setDriftFields(css *holdfastv1.ClusterServiceStatus, fields []holdfastv1.FieldChange, match func(holdfastv1.ResourceRef) bool) {
	for i := range css.Status.Drifts {
		if match(css.Status.Drifts[i].ResourceRef) {
			css.Status.Drifts[i].Fields = fields
		}
	}
	for i := range css.Status.Resources {
		if d := css.Status.Resources[i].LastDrift; d != nil && match(css.Status.Resources[i].ResourceRef) {
			copied := *d
			copied.Fields = fields
			css.Status.Resources[i].LastDrift = &copied
		}
	}
}

// driftOutputs is every output of `holdfast drift --all` and `holdfast history` for statuses:
// JSON, table and wide table of each.
func driftOutputs(t *testing.T, statuses []holdfastv1.ClusterServiceStatus) []string {
	t.Helper()
	dl := BuildDriftList(statuses, Filter{}, true)
	h := BuildDriftHistory(statuses, Filter{}, time.Time{}, 0)
	var outputs []string
	var buf bytes.Buffer
	for _, write := range []func() error{
		func() error { return WriteJSON(&buf, dl) },
		func() error { return WriteJSON(&buf, h) },
		func() error { return PrintDriftList(&buf, dl, fleetviewtest.Now) },
		func() error { return PrintDriftListWide(&buf, dl, fleetviewtest.Now) },
		func() error { return PrintDriftHistory(&buf, h) },
		func() error { return PrintDriftHistoryWide(&buf, h) },
	} {
		buf.Reset()
		if err := write(); err != nil {
			t.Fatal(err)
		}
		outputs = append(outputs, buf.String())
	}
	return outputs
}
