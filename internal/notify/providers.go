package notify

import holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"

// provider is what a notification type does its own way: the Secret keys it reads and the message
// it makes of an event. Everything else (queues, retries with backoff, timeouts, the egress
// policy, redaction, outcomes and metrics) is the Dispatcher's and the same for every type.
type provider struct {
	// defaultURL is the receiver's address when the Secret has no url; "" makes url required.
	defaultURL string
	// schemes are the URL schemes url may have; http and https when nil.
	schemes []string
	// configure reads the type's own keys into t; nil for a type that reads url alone.
	configure func(t *Target, s secretKeys) error
	// render makes the message of e for t; e is already redacted.
	render func(t Target, e Event) (message, error)
}

// providers are the notification types, each implemented in the file named for it.
var providers = map[holdfastv1.NotificationType]provider{
	holdfastv1.NotificationWebhook:      {configure: webhookConfigure, render: webhookMessage},
	holdfastv1.NotificationSlack:        {render: slackMessage},
	holdfastv1.NotificationMSTeams:      {render: teamsMessage},
	holdfastv1.NotificationDiscord:      {configure: discordConfigure, render: discordMessage},
	holdfastv1.NotificationGoogleChat:   {render: googleChatMessage},
	holdfastv1.NotificationMattermost:   {configure: mattermostConfigure, render: mattermostMessage},
	holdfastv1.NotificationTelegram:     {defaultURL: telegramURL, configure: telegramConfigure, render: telegramMessage},
	holdfastv1.NotificationEmail:        {schemes: []string{"smtp", "smtps"}, configure: emailConfigure, render: emailMessage},
	holdfastv1.NotificationPagerDuty:    {defaultURL: pagerDutyURL, configure: pagerDutyConfigure, render: pagerDutyMessage},
	holdfastv1.NotificationOpsgenie:     {defaultURL: opsgenieURL, configure: opsgenieConfigure, render: opsgenieMessage},
	holdfastv1.NotificationAlertmanager: {configure: alertmanagerConfigure, render: alertmanagerMessage},
	holdfastv1.NotificationGrafana:      {configure: grafanaConfigure, render: grafanaMessage},
	holdfastv1.NotificationCloudEvents:  {configure: cloudEventsConfigure, render: cloudEventsMessage},
	holdfastv1.NotificationGitHub:       {configure: commitStatusConfigure(ownerRepo), render: githubMessage},
	holdfastv1.NotificationGitLab:       {configure: commitStatusConfigure(gitlabRepo), render: gitlabMessage},
	holdfastv1.NotificationGitea:        {configure: commitStatusConfigure(ownerRepo), render: giteaMessage},
	holdfastv1.NotificationBitbucket:    {configure: bitbucketConfigure, render: bitbucketMessage},
}
