package notify

// mattermostMaxText is Mattermost's limit on a post, in characters (16383 by default).
const mattermostMaxText = 16383

// mattermostConfigure reads the optional channel and name to post as; the webhook's own are
// used without them.
func mattermostConfigure(t *Target, s secretKeys) (err error) {
	if t.Channel, err = s.token(SecretKeyChannel); err != nil {
		return err
	}
	t.Username, err = s.token(SecretKeyUsername)
	return err
}

// mattermostMessage posts the summary to a Mattermost incoming webhook.
func mattermostMessage(t Target, e Event) (message, error) {
	return jsonMessage(struct {
		Text     string `json:"text"`
		Channel  string `json:"channel,omitempty"`
		Username string `json:"username,omitempty"`
	}{truncate(summary(e, markdownBold), mattermostMaxText, charactersOf), t.Channel, t.Username})
}
