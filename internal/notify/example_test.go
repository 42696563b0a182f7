package notify_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/notify"
)

func Example() {
	key := []byte("shared-key")
	// The receiving end checks the signature of the raw body before it parses it.
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if err := notify.Verify(key, r.Header, body, time.Now(), notify.DefaultTolerance); err != nil {
			fmt.Println(err)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		fmt.Println("received", r.Header.Get(notify.HeaderEvent), "verified")
	}))
	defer receiver.Close()

	// A MultiClusterService's spec.notifications entry and the Secret it names.
	spec := holdfastv1.NotificationTarget{
		Name:      "ops",
		Type:      holdfastv1.NotificationWebhook,
		SecretRef: holdfastv1.SecretReference{Namespace: "holdfast-system", Name: "ops-webhook"},
	}
	secret := &corev1.Secret{Data: map[string][]byte{"url": []byte(receiver.URL), "hmacKey": key}}
	target, err := notify.TargetFromSecret(spec, secret)
	if err != nil {
		fmt.Println(err)
		return
	}

	done := make(chan struct{})
	d := notify.New(notify.Options{OnResult: func(target string, e notify.Event, err error) {
		fmt.Println("outcome", target, e.Type, err)
		close(done)
	}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = d.Start(ctx) }() // in the controller: mgr.Add(d)

	d.Send(target, notify.Event{
		Type:                notify.DriftDetected,
		MultiClusterService: "web",
		Cluster:             types.NamespacedName{Namespace: "fleet", Name: "eu-1"},
		Service:             "frontend",
		Object:              holdfastv1.ResourceRef{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "web", Name: "frontend"},
		Drift: &holdfastv1.DriftDetail{
			Type:         holdfastv1.DriftChanged,
			Fields:       []holdfastv1.FieldChange{{Path: ".spec.replicas", Old: "3", New: "5"}},
			Manager:      "kubectl-edit",
			DetectedTime: metav1.NewMicroTime(time.Now()),
		},
	})
	<-done
	// Output:
	// received DriftDetected verified
	// outcome ops DriftDetected <nil>
}
