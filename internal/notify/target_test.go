package notify

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

func TestTargetFromSecret(t *testing.T) {
	const (
		secretURL = "https://hooks.example.com/services/T000/B000/XXXXsecretpath"
		key       = "k3y-material"
	)
	spec := func(typ holdfastv1.NotificationType) holdfastv1.NotificationTarget {
		return holdfastv1.NotificationTarget{
			Name: "ops", Type: typ,
			SecretRef: holdfastv1.SecretReference{Namespace: "holdfast-system", Name: "ops-hook"},
		}
	}
	secret := func(data map[string]string) *corev1.Secret {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "holdfast-system", Name: "ops-hook"}, Data: map[string][]byte{}}
		for k, v := range data {
			s.Data[k] = []byte(v)
		}
		return s
	}
	cases := []struct {
		name    string
		spec    holdfastv1.NotificationTarget
		secret  *corev1.Secret
		want    Target
		wantErr string // part of the error; the Secret is named in every error
	}{
		{name: "webhook with key", spec: spec(holdfastv1.NotificationWebhook),
			secret: secret(map[string]string{"url": secretURL + "\n", "hmacKey": key}),
			want:   Target{Name: "ops", Type: holdfastv1.NotificationWebhook, URL: secretURL, HMACKey: []byte(key)}},
		{name: "type defaults to Webhook, key optional", spec: spec(""),
			secret: secret(map[string]string{"url": "http://receiver.local/hook"}),
			want:   Target{Name: "ops", Type: holdfastv1.NotificationWebhook, URL: "http://receiver.local/hook"}},
		{name: "slack", spec: spec(holdfastv1.NotificationSlack),
			secret: secret(map[string]string{"url": secretURL}),
			want:   Target{Name: "ops", Type: holdfastv1.NotificationSlack, URL: secretURL}},
		{name: "no Secret", spec: spec(""), wantErr: "Secret holdfast-system/ops-hook not found"},
		{name: "no url key", spec: spec(""), secret: secret(map[string]string{"hmacKey": key}),
			wantErr: `Secret holdfast-system/ops-hook has no key "url"`},
		{name: "not http", spec: spec(""), secret: secret(map[string]string{"url": "ftp://" + key + "@example.com/x"}),
			wantErr: `key "url" of Secret holdfast-system/ops-hook is not an http or https URL`},
		{name: "unparseable", spec: spec(""), secret: secret(map[string]string{"url": "https://exa mple.com/%zz" + key}),
			wantErr: `key "url" of Secret holdfast-system/ops-hook is not an http or https URL`},
		{name: "no host", spec: spec(""), secret: secret(map[string]string{"url": "https:///" + key}),
			wantErr: `key "url" of Secret holdfast-system/ops-hook is not an http or https URL`},
		{name: "empty key", spec: spec(""), secret: secret(map[string]string{"url": secretURL, "hmacKey": ""}),
			wantErr: `key "hmacKey" of Secret holdfast-system/ops-hook is empty`},
		{name: "unknown type", spec: spec("Pigeon"), secret: secret(map[string]string{"url": secretURL}),
			wantErr: `unknown type "Pigeon"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := TargetFromSecret(c.spec, c.secret)
			if c.wantErr == "" {
				if err != nil {
					t.Fatalf("TargetFromSecret: %v", err)
				}
				if got.Name != c.want.Name || got.Type != c.want.Type || got.URL != c.want.URL || string(got.HMACKey) != string(c.want.HMACKey) {
					t.Fatalf("TargetFromSecret = %#v %q %q, want %#v %q %q", got, got.URL, got.HMACKey, c.want, c.want.URL, c.want.HMACKey)
				}
				return
			}
			if err == nil {
				t.Fatalf("TargetFromSecret succeeded, want an error containing %q", c.wantErr)
			}
			if !strings.Contains(err.Error(), c.wantErr) || !strings.Contains(err.Error(), `"ops"`) {
				t.Errorf("error %q does not name the target and contain %q", err, c.wantErr)
			}
			if !errors.Is(err, ErrInvalidTarget) {
				t.Errorf("error %q does not wrap ErrInvalidTarget", err)
			}
			for _, secret := range []string{key, "secretpath", "exa mple", "example.com", "hooks."} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error %q contains the Secret's value %q", err, secret)
				}
			}
		})
	}
}

func TestTargetPrintsNoSecrets(t *testing.T) {
	tgt := Target{Name: "ops", Type: holdfastv1.NotificationWebhook, URL: "https://hooks.example.com/XXXXsecretpath", HMACKey: []byte("k3y-material")}
	var logs logBuffer
	logs.logger().Info("Resolved", "target", tgt)
	for _, s := range []string{fmt.Sprint(tgt), fmt.Sprintf("%+v", tgt), fmt.Sprintf("%#v", tgt), logs.String()} {
		if strings.Contains(s, "secretpath") || strings.Contains(s, "k3y") {
			t.Errorf("%q shows the URL or key", s)
		}
		if !strings.Contains(s, "ops") {
			t.Errorf("%q does not name the target", s)
		}
	}
}
