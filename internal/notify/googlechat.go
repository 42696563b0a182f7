package notify

// googleChatMaxText bounds a Google Chat message's text, in bytes: Chat refuses a message over
// 32,000 bytes, and escaping in JSON takes some of it.
const googleChatMaxText = 28000

// googleChatMessage posts the summary to a Google Chat space's incoming webhook, whose URL
// carries its key and token.
func googleChatMessage(_ Target, e Event) (message, error) {
	return jsonMessage(struct {
		Text string `json:"text"`
	}{truncate(summary(e, func(s string) string { return "*" + s + "*" }), googleChatMaxText, bytesOf)})
}
