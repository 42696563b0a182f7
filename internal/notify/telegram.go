package notify

import "strings"

const (
	// telegramURL is the Bot API's address.
	telegramURL = "https://api.telegram.org"
	// telegramMaxText is Telegram's limit on a message's text, in characters.
	telegramMaxText = 4096
)

// telegramConfigure reads the bot's token and the chat it writes to.
func telegramConfigure(t *Target, s secretKeys) (err error) {
	if t.Token, err = s.requiredToken(SecretKeyToken); err != nil {
		return err
	}
	// The token is a path segment of every request: it must not reach another path.
	if strings.ContainsAny(t.Token, "/?#%") {
		return s.invalid(SecretKeyToken, "is not a bot token")
	}
	t.Channel, err = s.requiredToken(SecretKeyChatID)
	return err
}

// telegramMessage sends the summary, as plain text (no parse mode, so nothing needs escaping),
// with the Bot API's sendMessage at <url>/bot<token>/sendMessage.
func telegramMessage(t Target, e Event) (message, error) {
	m, err := jsonMessage(struct {
		ChatID string `json:"chat_id"`
		Text   string `json:"text"`
	}{t.Channel, truncate(summary(e, plain), telegramMaxText, charactersOf)})
	if err != nil {
		return message{}, err
	}
	m.url, err = apiURL(t.URL, "bot"+t.Token, "sendMessage")
	return m, err
}
