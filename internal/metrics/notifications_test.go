package metrics

import "testing"

func TestNotificationResult(t *testing.T) {
	for _, result := range []string{NotificationSent, NotificationFailed, NotificationDropped, NotificationRetried} {
		t.Run(result, func(t *testing.T) {
			labels := map[string]string{"target": "ops", "result": result}
			before, _ := value(t, "holdfast_notifications_total", labels)
			NotificationResult("ops", result)
			if got := mustValue(t, "holdfast_notifications_total", labels) - before; got != 1 {
				t.Fatalf("holdfast_notifications_total%v moved by %v, want 1", labels, got)
			}
		})
	}
}
