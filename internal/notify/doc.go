// Package notify tells people and systems outside the cluster about drift: a drift detected or
// corrected, an object given up as Contested, correction resumed. Reconciliation must never wait
// for a receiver, so a Dispatcher queues each event per target and delivers it in the background,
// in order, retrying with backoff while the receiver is unavailable, and drops (and counts) what
// a full queue cannot hold.
//
// A target is a Webhook, which receives Holdfast's versioned JSON event signed with HMAC-SHA256
// over the time of each attempt and the body, so that receivers can refuse replays (Verify), or a
// Slack incoming webhook, which receives a short readable summary, unsigned. The URL and key come
// from a Secret and are treated as secrets: they appear in no error, log line or metric, which
// name the target instead. Values of a Secret's fields are replaced by Redacted before an event is
// queued, whatever the caller passed, so a notification cannot leak them either.
//
// The package is pure: it reads no objects. The caller resolves each target with TargetFromSecret
// and runs the Dispatcher as a manager Runnable. docs/notifications.md describes the receiving end.
package notify
