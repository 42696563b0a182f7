package notify

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// The chat receivers: each fake checks the path, the credential where there is one, and the
// fields of the body the receiver's API documents.

func TestTeamsDelivery(t *testing.T) {
	srv, got := receiver(t, http.StatusAccepted)
	tgt := resolve(t, holdfastv1.NotificationMSTeams, map[string]string{"url": srv.URL + "/workflows/abc/triggers/manual/paths/invoke?sig=s3cret"})
	var msg struct {
		Type        string
		Attachments []struct {
			ContentType string
			Content     struct {
				Schema  string `json:"$schema"`
				Type    string
				Version string
				Body    []cardBlock
				MSTeams map[string]string
			}
		}
	}
	deliverTo(t, tgt, deploymentDrift(), got).decode(t, "/workflows/abc/triggers/manual/paths/invoke?sig=s3cret", &msg)
	if msg.Type != "message" || len(msg.Attachments) != 1 || msg.Attachments[0].ContentType != "application/vnd.microsoft.card.adaptive" {
		t.Fatalf("message = %+v, want one Adaptive Card attachment", msg)
	}
	card := msg.Attachments[0].Content
	if card.Type != "AdaptiveCard" || card.Version == "" || len(card.Body) < 3 {
		t.Fatalf("card = %+v", card)
	}
	if b := card.Body[0]; b.Type != "TextBlock" || b.Weight != "Bolder" || !strings.HasPrefix(b.Text, "Drift detected on cluster fleet/eu-1") {
		t.Errorf("title block = %+v", b)
	}
	if !containsBlock(card.Body, "• .spec.replicas: 3 → 5") {
		t.Errorf("card body lacks the field: %+v", card.Body)
	}
}

type cardBlock struct {
	Type, Text, Weight, Size string
	Wrap                     bool
}

func containsBlock(blocks []cardBlock, text string) bool {
	for _, b := range blocks {
		if b.Text == text && b.Wrap {
			return true
		}
	}
	return false
}

func TestDiscordDelivery(t *testing.T) {
	srv, got := receiver(t, http.StatusNoContent)
	tgt := resolve(t, holdfastv1.NotificationDiscord, map[string]string{"url": srv.URL + "/api/webhooks/123/t0ken", "username": "holdfast"})
	e := deploymentDrift()
	e.Drift.Fields[0].New = `"@everyone"`
	var msg struct {
		Content         string
		Username        string
		AllowedMentions struct{ Parse []string } `json:"allowed_mentions"`
	}
	deliverTo(t, tgt, e, got).decode(t, "/api/webhooks/123/t0ken", &msg)
	if !strings.HasPrefix(msg.Content, "**Drift detected** on cluster fleet/eu-1") || !strings.Contains(msg.Content, `.spec.replicas: 3 → "@everyone"`) {
		t.Errorf("content = %q", msg.Content)
	}
	if msg.Username != "holdfast" {
		t.Errorf("username = %q, want holdfast", msg.Username)
	}
	if msg.AllowedMentions.Parse == nil || len(msg.AllowedMentions.Parse) != 0 {
		t.Errorf("allowed_mentions.parse = %v, want [] so that @everyone pings nobody", msg.AllowedMentions.Parse)
	}
}

func TestGoogleChatDelivery(t *testing.T) {
	srv, got := receiver(t, http.StatusOK)
	path := "/v1/spaces/AAAA/messages?key=k3y&token=t0ken"
	tgt := resolve(t, holdfastv1.NotificationGoogleChat, map[string]string{"url": srv.URL + path})
	var msg struct{ Text string }
	deliverTo(t, tgt, deploymentDrift(), got).decode(t, path, &msg)
	if !strings.HasPrefix(msg.Text, "*Drift detected* on cluster fleet/eu-1") || !strings.Contains(msg.Text, "\nNot corrected yet.") {
		t.Errorf("text = %q", msg.Text)
	}
}

func TestMattermostDelivery(t *testing.T) {
	for _, c := range []struct {
		name string
		data map[string]string
	}{
		{"the webhook's channel", map[string]string{}},
		{"another channel and name", map[string]string{"channel": "town-square", "username": "holdfast"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv, got := receiver(t, http.StatusOK)
			c.data["url"] = srv.URL + "/hooks/xxx-generatedkey-xxx"
			var msg struct{ Text, Channel, Username string }
			deliverTo(t, resolve(t, holdfastv1.NotificationMattermost, c.data), deploymentDrift(), got).decode(t, "/hooks/xxx-generatedkey-xxx", &msg)
			if !strings.HasPrefix(msg.Text, "**Drift detected**") || msg.Channel != c.data["channel"] || msg.Username != c.data["username"] {
				t.Errorf("message = %+v", msg)
			}
		})
	}
}

func TestTelegramDelivery(t *testing.T) {
	srv, got := receiver(t, http.StatusOK)
	const token = "123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11"
	tgt := resolve(t, holdfastv1.NotificationTelegram, map[string]string{"url": srv.URL, "token": token, "chatID": "-1001234567890"})
	var msg struct {
		ChatID string `json:"chat_id"`
		Text   string
	}
	deliverTo(t, tgt, deploymentDrift(), got).decode(t, "/bot"+token+"/sendMessage", &msg)
	if msg.ChatID != "-1001234567890" || !strings.HasPrefix(msg.Text, "Drift detected on cluster fleet/eu-1") {
		t.Errorf("message = %+v", msg)
	}
}

// TestTelegramDefaultsToTheBotAPI: without url, a Telegram target sends to the Bot API.
func TestTelegramDefaultsToTheBotAPI(t *testing.T) {
	tgt := resolve(t, holdfastv1.NotificationTelegram, map[string]string{"token": "1:x", "chatID": "42"})
	m, err := render(tgt, deploymentDrift())
	if err != nil || m.url != "https://api.telegram.org/bot1:x/sendMessage" {
		t.Fatalf("url = %q (%v), want the Bot API's sendMessage", m.url, err)
	}
}

// TestChatSizeLimits: a summary longer than a receiver takes is cut, with a marker, to the
// receiver's limit in its own unit, and never inside a character.
func TestChatSizeLimits(t *testing.T) {
	e := deploymentDrift()
	// Astral characters are two UTF-16 units and four bytes each.
	e.Message = strings.Repeat("🛡", 40000)
	cases := []struct {
		typ   holdfastv1.NotificationType
		text  func(m message) string
		limit int
		size  func(string) int
	}{
		{holdfastv1.NotificationDiscord, func(m message) string { return jsonField(t, m.body, "content") }, discordMaxContent, utf16Len},
		{holdfastv1.NotificationTelegram, func(m message) string { return jsonField(t, m.body, "text") }, telegramMaxText, utf16Len},
		{holdfastv1.NotificationMattermost, func(m message) string { return jsonField(t, m.body, "text") }, mattermostMaxText, utf16Len},
		{holdfastv1.NotificationGoogleChat, func(m message) string { return jsonField(t, m.body, "text") }, googleChatMaxText, func(s string) int { return len(s) }},
		{holdfastv1.NotificationSlack, func(m message) string { return jsonField(t, m.body, "text") }, slackMaxText, utf16Len},
		{holdfastv1.NotificationMSTeams, func(m message) string { return string(m.body) }, 28 << 10, func(s string) int { return len(s) }},
	}
	for _, c := range cases {
		t.Run(string(c.typ), func(t *testing.T) {
			m, err := render(Target{Name: "x", Type: c.typ, URL: "https://example.com", Token: "1:x", Channel: "1"}, e)
			if err != nil {
				t.Fatal(err)
			}
			text := c.text(m)
			if n := c.size(text); n > c.limit {
				t.Errorf("text is %d long, over the limit of %d", n, c.limit)
			}
			if !utf8.ValidString(text) || !strings.Contains(text, "🛡"+truncatedMarker) {
				t.Errorf("text does not end the cut with the marker after a whole character: …%q", text[max(0, len(text)-40):])
			}
		})
	}
}

func utf16Len(s string) int { return len(utf16.Encode([]rune(s))) }

// jsonField is the string field name of the JSON object body.
func jsonField(t *testing.T, body []byte, name string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("body is not JSON: %v", err)
	}
	s, _ := m[name].(string)
	return s
}
