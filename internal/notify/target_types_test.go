package notify

import (
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
	"testing"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// TestTargetFromSecretPerType: each type reads its own keys, defaults what has a public default,
// and refuses a Secret that lacks a key it needs or holds a bad value, naming the Secret and the
// key, never a value.
func TestTargetFromSecretPerType(t *testing.T) {
	const (
		hook  = "https://hooks.example.com/XXXXsecretpath"
		token = "s3cr3t-t0ken"
	)
	cases := []struct {
		name    string
		typ     holdfastv1.NotificationType
		data    map[string]string
		check   func(Target) bool // for a valid Secret
		wantErr string
	}{
		{name: "MSTeams", typ: holdfastv1.NotificationMSTeams, data: map[string]string{"url": hook},
			check: func(t Target) bool { return t.URL == hook }},
		{name: "MSTeams needs url", typ: holdfastv1.NotificationMSTeams, data: map[string]string{},
			wantErr: `Secret holdfast-system/ops-hook has no key "url"`},
		{name: "Discord with a name", typ: holdfastv1.NotificationDiscord, data: map[string]string{"url": hook, "username": "holdfast"},
			check: func(t Target) bool { return t.Username == "holdfast" }},
		{name: "GoogleChat not http", typ: holdfastv1.NotificationGoogleChat, data: map[string]string{"url": "ftp://" + token + "@chat.example.com"},
			wantErr: `key "url" of Secret holdfast-system/ops-hook is not an http or https URL`},
		{name: "Mattermost channel", typ: holdfastv1.NotificationMattermost, data: map[string]string{"url": hook, "channel": " town-square\n"},
			check: func(t Target) bool { return t.Channel == "town-square" }},
		{name: "Mattermost empty channel", typ: holdfastv1.NotificationMattermost, data: map[string]string{"url": hook, "channel": ""},
			wantErr: `key "channel" of Secret holdfast-system/ops-hook is empty`},
		{name: "Telegram defaults its url", typ: holdfastv1.NotificationTelegram, data: map[string]string{"token": "1:" + token, "chatID": "42"},
			check: func(t Target) bool { return t.URL == telegramURL && t.Token == "1:"+token && t.Channel == "42" }},
		{name: "Telegram needs a token", typ: holdfastv1.NotificationTelegram, data: map[string]string{"chatID": "42"},
			wantErr: `Secret holdfast-system/ops-hook has no key "token"`},
		{name: "Telegram needs a chat", typ: holdfastv1.NotificationTelegram, data: map[string]string{"token": "1:" + token},
			wantErr: `Secret holdfast-system/ops-hook has no key "chatID"`},
		{name: "Telegram token is a path segment", typ: holdfastv1.NotificationTelegram, data: map[string]string{"token": "1:" + token + "/../x", "chatID": "42"},
			wantErr: `key "token" of Secret holdfast-system/ops-hook is not a bot token`},
		{name: "token with a space", typ: holdfastv1.NotificationGrafana, data: map[string]string{"url": hook, "token": "glsa " + token},
			wantErr: `key "token" of Secret holdfast-system/ops-hook holds whitespace or control characters`},
		{name: "PagerDuty defaults its url", typ: holdfastv1.NotificationPagerDuty, data: map[string]string{"routingKey": token},
			check: func(t Target) bool { return t.URL == pagerDutyURL && t.Token == token }},
		{name: "PagerDuty needs a routing key", typ: holdfastv1.NotificationPagerDuty, data: map[string]string{"url": hook},
			wantErr: `Secret holdfast-system/ops-hook has no key "routingKey"`},
		{name: "Opsgenie EU", typ: holdfastv1.NotificationOpsgenie, data: map[string]string{"url": "https://api.eu.opsgenie.com", "apiKey": token},
			check: func(t Target) bool { return t.URL == "https://api.eu.opsgenie.com" && t.Token == token }},
		{name: "Opsgenie needs a key", typ: holdfastv1.NotificationOpsgenie, data: map[string]string{},
			wantErr: `Secret holdfast-system/ops-hook has no key "apiKey"`},
		{name: "Alertmanager unauthenticated", typ: holdfastv1.NotificationAlertmanager, data: map[string]string{"url": "http://alertmanager.monitoring:9093"},
			check: func(t Target) bool { return t.Token == "" && t.Username == "" }},
		{name: "Alertmanager basic auth", typ: holdfastv1.NotificationAlertmanager, data: map[string]string{"url": hook, "username": "holdfast", "password": token},
			check: func(t Target) bool { return t.Username == "holdfast" && t.Password == token }},
		{name: "Alertmanager bearer and basic", typ: holdfastv1.NotificationAlertmanager, data: map[string]string{"url": hook, "token": token, "username": "holdfast", "password": token},
			wantErr: `key "token" of Secret holdfast-system/ops-hook and key "username" are both set`},
		{name: "Alertmanager user without password", typ: holdfastv1.NotificationAlertmanager, data: map[string]string{"url": hook, "username": "holdfast"},
			wantErr: `Secret holdfast-system/ops-hook has no key "password"`},
		{name: "Grafana needs a token", typ: holdfastv1.NotificationGrafana, data: map[string]string{"url": hook},
			wantErr: `Secret holdfast-system/ops-hook has no key "token"`},
		{name: "CloudEvents binary by default", typ: holdfastv1.NotificationCloudEvents, data: map[string]string{"url": hook},
			check: func(t Target) bool { return !t.Structured }},
		{name: "CloudEvents structured", typ: holdfastv1.NotificationCloudEvents, data: map[string]string{"url": hook, "mode": "structured"},
			check: func(t Target) bool { return t.Structured }},
		{name: "CloudEvents unknown mode", typ: holdfastv1.NotificationCloudEvents, data: map[string]string{"url": hook, "mode": "batch"},
			wantErr: `key "mode" of Secret holdfast-system/ops-hook is not binary or structured`},
		{name: "Email", typ: holdfastv1.NotificationEmail, data: map[string]string{"url": "smtp://mail.example.com", "from": "Holdfast <holdfast@example.com>", "to": "ops@example.com, Dev <dev@example.com>", "username": "holdfast", "password": token},
			check: func(t Target) bool {
				return t.From == `"Holdfast" <holdfast@example.com>` && strings.Join(t.To, ",") == `<ops@example.com>,"Dev" <dev@example.com>` &&
					t.Username == "holdfast" && t.Password == token && !t.OpportunisticTLS && t.RootCAs == nil
			}},
		{name: "Email over smtps, STARTTLS opportunistic", typ: holdfastv1.NotificationEmail, data: map[string]string{"url": "smtps://mail.example.com:465", "from": "a@example.com", "to": "b@example.com", "starttls": "opportunistic"},
			check: func(t Target) bool { return t.OpportunisticTLS }},
		{name: "Email needs an smtp url", typ: holdfastv1.NotificationEmail, data: map[string]string{"url": hook, "from": "a@example.com", "to": "b@example.com"},
			wantErr: `key "url" of Secret holdfast-system/ops-hook is not an smtp or smtps URL`},
		{name: "Email needs from", typ: holdfastv1.NotificationEmail, data: map[string]string{"url": "smtp://mail.example.com", "to": "b@example.com"},
			wantErr: `Secret holdfast-system/ops-hook has no key "from"`},
		{name: "Email bad to", typ: holdfastv1.NotificationEmail, data: map[string]string{"url": "smtp://mail.example.com", "from": "a@example.com", "to": "b@example.com; " + token},
			wantErr: `key "to" of Secret holdfast-system/ops-hook is not a comma-separated list of mail addresses`},
		{name: "Email password without user", typ: holdfastv1.NotificationEmail, data: map[string]string{"url": "smtp://mail.example.com", "from": "a@example.com", "to": "b@example.com", "password": token},
			wantErr: `Secret holdfast-system/ops-hook has no key "username"`},
		{name: "Email unknown starttls", typ: holdfastv1.NotificationEmail, data: map[string]string{"url": "smtp://mail.example.com", "from": "a@example.com", "to": "b@example.com", "starttls": "never"},
			wantErr: `key "starttls" of Secret holdfast-system/ops-hook is not required or opportunistic`},
		{name: "Email bad CA", typ: holdfastv1.NotificationEmail, data: map[string]string{"url": "smtp://mail.example.com", "from": "a@example.com", "to": "b@example.com", "ca": token},
			wantErr: `key "ca" of Secret holdfast-system/ops-hook holds no PEM certificate`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := TargetFromSecret(targetSpec(c.typ), targetSecret(c.data))
			if c.wantErr == "" {
				if err != nil {
					t.Fatalf("TargetFromSecret: %v", err)
				}
				if got.Type != c.typ || !c.check(got) {
					t.Fatalf("TargetFromSecret = %+v, not as the Secret says", struct {
						Target
						URL, Token, Username, Password, Channel, From string
						To                                            []string
					}{got, got.URL, got.Token, got.Username, got.Password, got.Channel, got.From, got.To})
				}
				return
			}
			if err == nil {
				t.Fatalf("TargetFromSecret succeeded, want an error containing %q", c.wantErr)
			}
			if !strings.Contains(err.Error(), c.wantErr) || !strings.Contains(err.Error(), `"ops"`) || !errors.Is(err, ErrInvalidTarget) {
				t.Errorf("error %q does not name the target, wrap ErrInvalidTarget and contain %q", err, c.wantErr)
			}
			for _, secret := range []string{token, "secretpath", "example.com", "holdfast@", "town-square"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error %q contains the Secret's value %q", err, secret)
				}
			}
		})
	}
}

// TestTargetWithEveryFieldPrintsNoSecrets: a Target prints and logs as its name and type, whatever
// credentials it holds.
func TestTargetWithEveryFieldPrintsNoSecrets(t *testing.T) {
	tgt := Target{
		Name: "ops", Type: holdfastv1.NotificationEmail, URL: "smtp://mail.example.com/XXXXsecretpath", HMACKey: []byte("k3y-material"),
		Token: "t0ken-material", Username: "us3rname", Password: "passw0rd", Channel: "chann3l", From: "fr0m@example.com",
		To: []string{"t0@example.com"}, OpportunisticTLS: true, RootCAs: x509.NewCertPool(), Structured: true,
	}
	var logs logBuffer
	logs.logger().Info("Resolved", "target", tgt)
	for _, s := range []string{fmt.Sprint(tgt), fmt.Sprintf("%+v", tgt), fmt.Sprintf("%#v", tgt), fmt.Sprintf("%v", &tgt), logs.String()} {
		for _, secret := range []string{"secretpath", "mail.example", "k3y", "t0ken", "us3r", "passw0rd", "chann3l", "fr0m", "t0@"} {
			if strings.Contains(s, secret) {
				t.Errorf("%q shows %q", s, secret)
			}
		}
		if !strings.Contains(s, "ops") || !strings.Contains(s, "Email") {
			t.Errorf("%q does not name the target and its type", s)
		}
	}
}
