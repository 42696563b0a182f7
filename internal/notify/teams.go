package notify

import "strings"

// teamsMaxText bounds the text of a Teams card, in bytes: a Workflows webhook refuses a
// request over 28 KB, and the card's JSON around the text needs some of it.
const teamsMaxText = 20 << 10

// teamsMessage posts an Adaptive Card to a Microsoft Teams Workflows (Power Automate) webhook,
// which replaced the Office 365 connectors: the title in bold, then a block per line of the
// summary.
func teamsMessage(_ Target, e Event) (message, error) {
	lines := strings.Split(truncate(summary(e, plain), teamsMaxText, bytesOf), "\n")
	blocks := []teamsBlock{{Type: "TextBlock", Text: lines[0], Weight: "Bolder", Size: "Medium", Wrap: true}}
	for _, l := range lines[1:] {
		blocks = append(blocks, teamsBlock{Type: "TextBlock", Text: l, Wrap: true})
	}
	return jsonMessage(teamsPayload{
		Type: "message",
		Attachments: []teamsAttachment{{
			ContentType: "application/vnd.microsoft.card.adaptive",
			Content: teamsCard{
				Schema:  "http://adaptivecards.io/schemas/adaptive-card.json",
				Type:    "AdaptiveCard",
				Version: "1.4",
				Body:    blocks,
				MSTeams: map[string]string{"width": "Full"},
			},
		}},
	})
}

type teamsPayload struct {
	Type        string            `json:"type"`
	Attachments []teamsAttachment `json:"attachments"`
}

type teamsAttachment struct {
	ContentType string    `json:"contentType"`
	Content     teamsCard `json:"content"`
}

type teamsCard struct {
	Schema  string            `json:"$schema"`
	Type    string            `json:"type"`
	Version string            `json:"version"`
	Body    []teamsBlock      `json:"body"`
	MSTeams map[string]string `json:"msteams,omitempty"`
}

type teamsBlock struct {
	Type   string `json:"type"`
	Text   string `json:"text"`
	Weight string `json:"weight,omitempty"`
	Size   string `json:"size,omitempty"`
	Wrap   bool   `json:"wrap"`
}
