package notify

import (
	"encoding/base64"
	"net"
	"net/http"
	"strings"
	"testing"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// httpSecrets are Secrets of a target of each HTTP type, whose url is set by the test.
var httpSecrets = map[holdfastv1.NotificationType]map[string]string{
	holdfastv1.NotificationWebhook:      {"hmacKey": "k3y"},
	holdfastv1.NotificationSlack:        {},
	holdfastv1.NotificationMSTeams:      {},
	holdfastv1.NotificationDiscord:      {},
	holdfastv1.NotificationGoogleChat:   {},
	holdfastv1.NotificationMattermost:   {},
	holdfastv1.NotificationTelegram:     {"token": "1:T0KENsecret", "chatID": "42"},
	holdfastv1.NotificationPagerDuty:    {"routingKey": "R0UTINGsecret"},
	holdfastv1.NotificationOpsgenie:     {"apiKey": "GENIEsecret"},
	holdfastv1.NotificationAlertmanager: {"username": "u", "password": "PASSsecret"},
	holdfastv1.NotificationGrafana:      {"token": "GLSAsecret"},
	holdfastv1.NotificationCloudEvents:  {"mode": "structured"},
}

// TestEveryTypeIsTested: a type added to the API has a provider and is in the tables here.
func TestEveryTypeIsTested(t *testing.T) {
	for typ := range providers {
		// Email has tests of its own; the commit status types, which send rollout events
		// only, are in commitstatus_test.go.
		if _, ok := httpSecrets[typ]; !ok && typ != holdfastv1.NotificationEmail && !commitStatusTypes[typ] {
			t.Errorf("type %s is not in httpSecrets", typ)
		}
	}
	if len(providers) != 17 {
		t.Errorf("%d providers, want one per NotificationType (17)", len(providers))
	}
}

// TestSecretRedactedForEveryType sends an unredacted Secret drift to a receiver of each HTTP
// type and looks for its values, in every spelling the caller used, in what the receiver got.
func TestSecretRedactedForEveryType(t *testing.T) {
	const plain = "hunter2-s3cret"
	secrets := []string{plain, base64.StdEncoding.EncodeToString([]byte(plain)), "b2xkLXZhbHVl"}
	for typ, data := range httpSecrets {
		t.Run(string(typ), func(t *testing.T) {
			srv, got := receiver(t, http.StatusOK)
			data["url"] = srv.URL
			req := deliverTo(t, resolve(t, typ, data), secretDrift(plain), got)
			for _, s := range secrets {
				if strings.Contains(string(req.body), s) || strings.Contains(req.uri, s) {
					t.Errorf("the request contains the Secret value %q:\n%s", s, req.body)
				}
			}
		})
	}
}

// TestNoCredentialInErrors: a delivery that fails, with the connection refused or a rejection,
// reports and logs neither the URL nor the target's credential, for every HTTP type.
func TestNoCredentialInErrors(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/hooks/URLsecret"
	_ = l.Close()
	rejecting, _ := receiver(t, http.StatusBadRequest)
	for _, url := range []string{closed, rejecting.URL + "/hooks/URLsecret"} {
		for typ, data := range httpSecrets {
			t.Run(string(typ), func(t *testing.T) {
				data["url"] = url
				h := start(t, Options{MaxAttempts: 1})
				h.d.Send(resolve(t, typ, data), deploymentDrift())
				r := h.next(t)
				if r.err == nil {
					t.Fatal("delivered, want a failure")
				}
				for _, s := range []string{r.err.Error(), h.logs.String()} {
					if strings.Contains(s, "secret") || strings.Contains(s, "127.0.0.1") {
						t.Errorf("%q shows the URL or a credential", s)
					}
				}
			})
		}
	}
}
