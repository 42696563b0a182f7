package rendercache

import (
	"bytes"
	"compress/gzip"
	"context"
	"reflect"
	"strings"
	"testing"

	"holdfast.dev/holdfast/internal/render"
)

func rendered(t *testing.T) *render.Result {
	t.Helper()
	res, err := render.Render(context.Background(), render.Request{Service: "s", Source: render.Source{Inline: `
apiVersion: v1
kind: Secret
metadata: {name: creds, namespace: apps, labels: {app: db}}
data: {password: c2VjcmV0}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: db}
spec: {replicas: 3, template: {spec: {terminationGracePeriodSeconds: 30, containers: [{name: db, image: db:1, resources: {limits: {cpu: 0.5}}}]}}}
`}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func gz(t *testing.T, raw string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write([]byte(raw)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestEntryRoundTrip: what is kept decodes to the very objects rendered (integers stay
// integers), with the same digest, and encoding is deterministic.
func TestEntryRoundTrip(t *testing.T) {
	res := rendered(t)
	res.ChartVersion = "1.2.3"
	data, err := encode("sha256:in", res)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := encode("sha256:in", res)
	if !bytes.Equal(data, again) {
		t.Errorf("encoding the same rendering twice gave different bytes")
	}
	in, got, err := decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if in != "sha256:in" || got.Digest != res.Digest || got.ChartVersion != "1.2.3" {
		t.Errorf("decoded input %q, digest %q, chart version %q", in, got.Digest, got.ChartVersion)
	}
	if len(got.Objects) != len(res.Objects) {
		t.Fatalf("decoded %d objects, want %d", len(got.Objects), len(res.Objects))
	}
	for i := range res.Objects {
		if !reflect.DeepEqual(got.Objects[i].Object, res.Objects[i].Object) {
			t.Errorf("object %d decoded as %v, want %v", i, got.Objects[i].Object, res.Objects[i].Object)
		}
	}
}

// TestDecodeRefuses: anything but what encode wrote is refused, without quoting it.
func TestDecodeRefuses(t *testing.T) {
	good, err := encode("sha256:in", rendered(t))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := decompress(good)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"not gzip", []byte("c2VjcmV0 is not compressed")},
		{"truncated", good[:len(good)/2]},
		{"flipped byte", func() []byte { b := bytes.Clone(good); b[len(b)/2] ^= 0xff; return b }()},
		{"not JSON", gz(t, "c2VjcmV0 {")},
		{"no input digest", gz(t, `{"digest":"sha256:x","objects":[]}`)},
		{"an object that is not one", gz(t, `{"input":"i","digest":"sha256:x","objects":[{"data":"c2VjcmV0"}]}`)},
		{"objects changed", gz(t, strings.Replace(string(raw), "c2VjcmV0", "b3RoZXI=", 1))},
		{"an object left out", gz(t, `{"input":"sha256:in","digest":"`+rendered(t).Digest+`","objects":[]}`)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := decode(tt.data)
			if err == nil {
				t.Fatal("decoded")
			}
			if strings.Contains(err.Error(), "c2VjcmV0") {
				t.Errorf("the error quotes the content: %v", err)
			}
		})
	}
}
