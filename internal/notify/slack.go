package notify

import "strings"

// slackMaxText is Slack's limit on a message's text, in characters; Slack truncates longer
// texts itself, without saying so.
const slackMaxText = 40000

// slackBody is a Slack incoming-webhook message: {"text": ...}.
func slackBody(e Event) ([]byte, error) {
	return encodeJSON(struct {
		Text string `json:"text"`
	}{slackText(e)})
}

// slackText is the summary of e in Slack mrkdwn.
func slackText(e Event) string {
	return truncate(slackEscape(summary(e, func(s string) string { return "*" + s + "*" })), slackMaxText, charactersOf)
}

// slackEscape escapes the three characters Slack reads as markup (links, mentions).
func slackEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// slackMessage posts the summary to a Slack incoming webhook, unsigned.
func slackMessage(_ Target, e Event) (message, error) {
	body, err := slackBody(e)
	return message{body: body}, err
}
