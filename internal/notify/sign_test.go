package notify

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"
)

// sentAt is when the tests' signed requests are sent.
var sentAt = time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)

// TestSignatureWireFormat pins the signed text and the header against a value computed with
// OpenSSL, as docs/notifications.md does it:
//
//	printf 'v1:%s:' 1740823200 | cat - body.json | openssl dgst -sha256 -hmac shared-key
func TestSignatureWireFormat(t *testing.T) {
	h := http.Header{}
	stamp(h, []byte("shared-key"), []byte(`{"id":"881c"}`), sentAt)
	if got := h.Get(HeaderTimestamp); got != "1740823200" {
		t.Errorf("%s = %q, want 1740823200", HeaderTimestamp, got)
	}
	if got, want := h.Get(HeaderSignature), "v1=c3ac5b2c48e754125521aac2a66f32535a4ca9d2b5063f971aefd30e1eb4da1b"; got != want {
		t.Errorf("%s = %q, want %q", HeaderSignature, got, want)
	}
}

// TestVerify delivers one signed event and checks it, and altered copies of it, as a receiver
// would.
func TestVerify(t *testing.T) {
	key := []byte("k3y-material")
	srv := newScripted(t, func(int, http.ResponseWriter, *http.Request) {})
	h := start(t, Options{Clock: testingclock.NewFakePassiveClock(sentAt)})
	tgt := webhook("verified", srv.URL)
	tgt.HMACKey = key
	h.d.Send(tgt, deploymentDrift())
	if r := h.next(t); r.err != nil {
		t.Fatalf("outcome %v, want delivered", r.err)
	}
	delivered := srv.got()[0]
	ts := strconv.FormatInt(sentAt.Unix(), 10)
	if got := delivered.header.Get(HeaderTimestamp); got != ts {
		t.Fatalf("%s = %q, want %s, the time of the attempt", HeaderTimestamp, got, ts)
	}
	sig := delivered.header.Get(HeaderSignature)

	set := func(name string, values ...string) func(http.Header, []byte) []byte {
		return func(h http.Header, b []byte) []byte {
			h.Del(name)
			for _, v := range values {
				h.Add(name, v)
			}
			return b
		}
	}
	cases := []struct {
		name      string
		alter     func(http.Header, []byte) []byte
		key       []byte
		now       time.Time
		tolerance time.Duration
		wantErr   string // in the error; "" to accept
	}{
		{name: "as delivered", now: sentAt.Add(time.Second)},
		{name: "at the end of the tolerance", now: sentAt.Add(DefaultTolerance)},
		{name: "receiver's clock behind", now: sentAt.Add(-DefaultTolerance)},
		{name: "zero tolerance is the default", now: sentAt.Add(4 * time.Minute), tolerance: 0},
		{name: "own tolerance", now: sentAt.Add(time.Hour), tolerance: 2 * time.Hour},
		{name: "another version listed too", alter: set(HeaderSignature, "v0=abc, "+sig+", v2=def"), now: sentAt},
		{name: "v1 entry on its own header line", alter: set(HeaderSignature, "v2=def", sig), now: sentAt},

		{name: "replayed after the tolerance", now: sentAt.Add(DefaultTolerance + time.Second), wantErr: "more than the tolerance of 5m0s"},
		{name: "replayed after a shorter tolerance", now: sentAt.Add(31 * time.Second), tolerance: 30 * time.Second, wantErr: "tolerance"},
		{name: "timestamp ahead of the receiver", now: sentAt.Add(-DefaultTolerance - time.Second), wantErr: "tolerance"},
		{name: "timestamp changed", alter: set(HeaderTimestamp, strconv.FormatInt(sentAt.Unix()+60, 10)), now: sentAt, wantErr: "does not match"},
		{name: "body changed", alter: func(_ http.Header, b []byte) []byte {
			return []byte(strings.Replace(string(b), `"new":"5"`, `"new":"6"`, 1))
		}, now: sentAt, wantErr: "does not match"},
		{name: "body extended", alter: func(_ http.Header, b []byte) []byte { return append(b, ' ') }, now: sentAt, wantErr: "does not match"},
		{name: "another key", key: []byte("other"), now: sentAt, wantErr: "does not match"},
		{name: "no key", key: []byte{}, now: sentAt, wantErr: "no key"},
		{name: "signature of the body alone", alter: set(HeaderSignature, "sha256="+strings.TrimPrefix(sig, "v1=")), now: sentAt, wantErr: "no v1= entry"},
		{name: "no signature", alter: set(HeaderSignature), now: sentAt, wantErr: "no X-Holdfast-Signature"},
		{name: "empty signature", alter: set(HeaderSignature, ""), now: sentAt, wantErr: "no X-Holdfast-Signature"},
		{name: "signature without version", alter: set(HeaderSignature, strings.TrimPrefix(sig, "v1=")), now: sentAt, wantErr: "not a list"},
		{name: "signature not hex", alter: set(HeaderSignature, "v1=zz"+sig[5:]), now: sentAt, wantErr: "not a hex"},
		{name: "signature truncated", alter: set(HeaderSignature, sig[:len(sig)-2]), now: sentAt, wantErr: "not a hex"},
		{name: "no timestamp", alter: set(HeaderTimestamp), now: sentAt, wantErr: "no X-Holdfast-Timestamp"},
		{name: "two timestamps", alter: set(HeaderTimestamp, ts, ts), now: sentAt, wantErr: "want one"},
		{name: "timestamp in milliseconds", alter: set(HeaderTimestamp, ts+"000"), now: sentAt, wantErr: "tolerance"},
		{name: "timestamp as a date", alter: set(HeaderTimestamp, sentAt.Format(time.RFC3339)), now: sentAt, wantErr: "not a Unix time"},
		{name: "timestamp with a sign", alter: set(HeaderTimestamp, "+"+ts), now: sentAt, wantErr: "not a Unix time"},
		{name: "timestamp with a leading zero", alter: set(HeaderTimestamp, "0"+ts), now: sentAt, wantErr: "not a Unix time"},
		{name: "timestamp out of range", alter: set(HeaderTimestamp, "99999999999999999999"), now: sentAt, wantErr: "not a Unix time"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			header, body := delivered.header.Clone(), append([]byte(nil), delivered.body...)
			if c.alter != nil {
				body = c.alter(header, body)
			}
			k := key
			if c.key != nil {
				k = c.key
			}
			err := Verify(k, header, body, c.now, c.tolerance)
			switch {
			case c.wantErr == "" && err != nil:
				t.Fatalf("Verify = %v, want accepted", err)
			case c.wantErr != "" && (!errors.Is(err, ErrInvalidSignature) || !strings.Contains(err.Error(), c.wantErr)):
				t.Fatalf("Verify = %v, want ErrInvalidSignature saying %q", err, c.wantErr)
			}
			if err != nil && len(k) > 0 && strings.Contains(err.Error(), string(k)) {
				t.Fatalf("the error %q contains the key", err)
			}
		})
	}
}

// TestRetrySignedAgain fails the first attempt while the clock moves on: the retry carries the
// time it was made and a signature valid for it, not the first attempt's, which a receiver with a
// short tolerance would refuse by then.
func TestRetrySignedAgain(t *testing.T) {
	key := []byte("k3y-material")
	clk := testingclock.NewFakePassiveClock(sentAt)
	retriedAt := sentAt.Add(time.Minute)
	srv := newScripted(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 0 {
			clk.SetTime(retriedAt)
			w.WriteHeader(http.StatusInternalServerError)
		}
	})
	h := start(t, Options{Clock: clk})
	tgt := webhook("flaky", srv.URL)
	tgt.HMACKey = key
	h.d.Send(tgt, deploymentDrift())
	if r := h.next(t); r.err != nil {
		t.Fatalf("outcome %v, want delivered on the retry", r.err)
	}
	hits := srv.got()
	if len(hits) != 2 {
		t.Fatalf("receiver got %d requests, want 2", len(hits))
	}
	const tolerance = 30 * time.Second
	cases := []struct {
		name    string
		hit     hit
		now     time.Time
		wantErr bool
	}{
		{"first attempt when sent", hits[0], sentAt, false},
		{"retry when sent", hits[1], retriedAt, false},
		{"first attempt replayed at the retry's time", hits[0], retriedAt, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Verify(key, c.hit.header, c.hit.body, c.now, tolerance)
			if (err != nil) != c.wantErr {
				t.Fatalf("Verify = %v, want error %v", err, c.wantErr)
			}
		})
	}
	if got, want := hits[1].header.Get(HeaderTimestamp), strconv.FormatInt(retriedAt.Unix(), 10); got != want {
		t.Errorf("retry's %s = %s, want %s (the first attempt's was %s)", HeaderTimestamp, got, want, hits[0].header.Get(HeaderTimestamp))
	}
	if hits[0].header.Get(HeaderSignature) == hits[1].header.Get(HeaderSignature) {
		t.Errorf("the retry carries the first attempt's signature")
	}
}
