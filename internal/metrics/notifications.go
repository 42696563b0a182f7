package metrics

import "github.com/prometheus/client_golang/prometheus"

// Results of a notification, the values of holdfast_notifications_total's result label.
const (
	// NotificationSent: the receiver accepted the notification (2xx).
	NotificationSent = "sent"
	// NotificationFailed: the notification was given up, after the last attempt or on a
	// response that retrying cannot fix.
	NotificationFailed = "failed"
	// NotificationDropped: the target's queue was full; the notification was never attempted.
	NotificationDropped = "dropped"
	// NotificationRetried: one attempt failed and another follows.
	NotificationRetried = "retried"
)

var notifications = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "holdfast_notifications_total",
	Help: "Outbound drift notifications by target and result (sent, failed, dropped, retried).",
}, []string{"target", "result"})

// NotificationResult counts one notification outcome for target; result is one of
// NotificationSent, NotificationFailed, NotificationDropped or NotificationRetried.
func NotificationResult(target, result string) {
	notifications.WithLabelValues(target, result).Inc()
}

var alertsHeldBack = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "holdfast_alerts_held_back_total",
	Help: "Events an AlertRule selected but did not send because the same object's event of the same kind was sent within the rule's rate-limit window.",
}, []string{"namespace", "alertrule"})

// AlertHeldBack counts one event the AlertRule namespace/name held back by its rate limit.
func AlertHeldBack(namespace, name string) {
	alertsHeldBack.WithLabelValues(namespace, name).Inc()
}
