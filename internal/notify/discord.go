package notify

// discordMaxContent is Discord's limit on a message's content, in characters.
const discordMaxContent = 2000

// discordConfigure reads the optional name messages are posted as.
func discordConfigure(t *Target, s secretKeys) (err error) {
	t.Username, err = s.token(SecretKeyUsername)
	return err
}

// discordMessage posts the summary to a Discord channel webhook. Mentions are turned off: a
// drifted value such as "@everyone" must not ping the channel.
func discordMessage(t Target, e Event) (message, error) {
	return jsonMessage(struct {
		Content         string              `json:"content"`
		Username        string              `json:"username,omitempty"`
		AllowedMentions map[string][]string `json:"allowed_mentions"`
	}{
		Content:         truncate(summary(e, markdownBold), discordMaxContent, charactersOf),
		Username:        t.Username,
		AllowedMentions: map[string][]string{"parse": {}},
	})
}
