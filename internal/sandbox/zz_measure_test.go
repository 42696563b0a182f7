package sandbox

import (
	"testing"
	"time"
)

func TestZZMeasure(t *testing.T) {
	for _, kcm := range []bool{false, true, false, true} {
		began := time.Now()
		c, err := Start(t.Context(), Options{Name: "m", ControllerManager: kcm})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("kcm=%v start %s", kcm, time.Since(began).Round(time.Millisecond))
		time.Sleep(5 * time.Second)
		logRSS(t, c)
		began = time.Now()
		_ = c.Stop()
		t.Logf("stop %s", time.Since(began).Round(time.Millisecond))
	}
}
