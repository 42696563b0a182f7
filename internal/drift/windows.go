package drift

import (
	"fmt"
	"time"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// Correction windows: in Report mode, drift is corrected automatically while one of the
// service set's windows is open. A window opens at Start (HH:MM, UTC) on the listed days (every
// day when none are), and stays open for Duration, which may reach into the next day.

// maxWindow bounds the duration of one correction window.
const maxWindow = 24 * time.Hour

// windowProblem says what is wrong with a window's duration, or "" when it can be used.
func windowProblem(w holdfastv1.CorrectionWindow) string {
	if w.Duration.Duration <= 0 || w.Duration.Duration > maxWindow {
		return "duration must be more than 0 and at most 24h"
	}
	return ""
}

// InWindow reports whether now (taken in UTC) is inside one of the windows.
func InWindow(windows []holdfastv1.CorrectionWindow, now time.Time) bool {
	now = now.UTC()
	for _, w := range windows {
		// A window may have opened yesterday and still be open.
		for _, day := range []time.Time{now, now.AddDate(0, 0, -1)} {
			start, ok := windowStart(w, day)
			if ok && !now.Before(start) && now.Before(start.Add(w.Duration.Duration)) {
				return true
			}
		}
	}
	return false
}

// NextWindowStart returns when the next of the windows opens after now, or zero if none will.
func NextWindowStart(windows []holdfastv1.CorrectionWindow, now time.Time) time.Time {
	now = now.UTC()
	var next time.Time
	for _, w := range windows {
		for d := 0; d <= 7; d++ {
			start, ok := windowStart(w, now.AddDate(0, 0, d))
			if ok && start.After(now) {
				if next.IsZero() || start.Before(next) {
					next = start
				}
				break
			}
		}
	}
	return next
}

// windowStart returns when w opens on day's date, and false if it does not open that day or
// cannot be used.
func windowStart(w holdfastv1.CorrectionWindow, day time.Time) (time.Time, bool) {
	if windowProblem(w) != "" {
		return time.Time{}, false
	}
	var hh, mm int
	if _, err := fmt.Sscanf(w.Start, "%d:%d", &hh, &mm); err != nil {
		return time.Time{}, false
	}
	if len(w.Days) > 0 {
		open := false
		for _, d := range w.Days {
			if string(d) == day.Weekday().String() {
				open = true
			}
		}
		if !open {
			return time.Time{}, false
		}
	}
	y, m, d := day.Date()
	return time.Date(y, m, d, hh, mm, 0, 0, time.UTC), true
}
