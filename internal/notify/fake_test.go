package notify

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// call is a request a fake receiver got.
type call struct {
	method, uri string
	header      http.Header
	body        []byte
}

// resolve makes the target of type typ named name from a Secret holding data, as the controller
// does, failing the test when it is invalid.
func resolve(t *testing.T, typ holdfastv1.NotificationType, data map[string]string) Target {
	t.Helper()
	tgt, err := TargetFromSecret(targetSpec(typ), targetSecret(data))
	if err != nil {
		t.Fatalf("TargetFromSecret: %v", err)
	}
	return tgt
}

func targetSpec(typ holdfastv1.NotificationType) holdfastv1.NotificationTarget {
	return holdfastv1.NotificationTarget{
		Name: "ops", Type: typ,
		SecretRef: holdfastv1.SecretReference{Namespace: "holdfast-system", Name: "ops-hook"},
	}
}

func targetSecret(data map[string]string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "holdfast-system", Name: "ops-hook"}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

// deliverTo sends e to tgt through a Dispatcher and returns the request the receiver got.
func deliverTo(t *testing.T, tgt Target, e Event, got chan call) call {
	t.Helper()
	h := start(t, Options{MaxAttempts: 1})
	if !h.d.Send(tgt, e) {
		t.Fatal("Send dropped the event")
	}
	if r := h.next(t); r.err != nil {
		t.Fatalf("%s delivery failed: %v", tgt.Type, r.err)
	}
	return <-got
}

// decode unmarshals c's JSON body into v, failing the test when it is not JSON of v's shape, and
// checks that the request was a POST of JSON to path.
func (c call) decode(t *testing.T, path string, v any) {
	t.Helper()
	if c.method != http.MethodPost || c.uri != path {
		t.Errorf("request = %s %s, want POST %s", c.method, c.uri, path)
	}
	if ct := c.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	if err := jsonUnmarshalStrict(c.body, v); err != nil {
		t.Fatalf("body %s: %v", c.body, err)
	}
}

// jsonUnmarshalStrict decodes b into v, refusing fields v does not have: a fake's v is the
// receiver's documented shape, so an unknown field is a mistake.
func jsonUnmarshalStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
