// Package notify tells people and systems outside the cluster about drift: a drift detected or
// corrected, an object given up as Contested, correction resumed, a rollout halted or complete,
// a cluster lost. Reconciliation must never wait for a receiver, so a Dispatcher queues each
// event per target and delivers it in the background, in order, retrying with backoff while the
// receiver is unavailable, and drops (and counts) what a full queue cannot hold.
//
// A target is one of the receivers in providers.go, each in the file named for it: a Webhook,
// which receives Holdfast's versioned JSON event signed with HMAC-SHA256 over the time of each
// attempt and the body, so that receivers can refuse replays (Verify); chat receivers (Slack,
// Microsoft Teams, Discord, Google Chat, Mattermost, Telegram) and Email, which get a short
// readable summary (text.go); receivers that page (PagerDuty, Opsgenie, Alertmanager), which
// open an incident per problem and resolve it when an event ends it (paging.go); Grafana
// annotations; and CloudEvents, written by the CloudEvents SDK. A provider only reads its keys
// from the Secret and renders a message: delivery is one path for all (deliver.go), over HTTP,
// or SMTP for Email, through the same egress policy, timeouts and retries. The request formats
// are written here rather than with each service's client library, because those clients send
// on their own, with their own HTTP client, retries and errors, which would bypass that path.
//
// Everything a target's Secret holds (addresses, tokens, keys, passwords, mail addresses) is
// treated as secret: it appears in no error, log line or metric, which name the target instead.
// Values of a Secret's fields are replaced by Redacted before an event is queued, whatever the
// caller passed, so a notification cannot leak them either.
//
// The package is pure: it reads no objects. The caller resolves each target with TargetFromSecret
// and runs the Dispatcher as a manager Runnable. docs/notifications.md describes the receiving end.
package notify
