package notify

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// A signature covers the time of the attempt as well as the body, so that a receiver can refuse
// a captured request replayed later: the scheme of Slack's and Stripe's webhooks. The version is
// part of the signed text, so that a signature of one scheme can never pass as another's.
const (
	// signatureVersion names the scheme in HeaderSignature and starts the signed text.
	signatureVersion = "v1"
	// DefaultTolerance is how far a request's HeaderTimestamp may be from the receiver's clock
	// for Verify to accept it, either way: long enough for clock skew and a slow network, short
	// enough that a captured request cannot be replayed for long.
	DefaultTolerance = 5 * time.Minute
)

// ErrInvalidSignature is wrapped by every error of Verify.
var ErrInvalidSignature = errors.New("invalid notification signature")

// signature returns HeaderSignature's value for body sent at timestamp (HeaderTimestamp's value):
// "v1=" and the hex HMAC-SHA256, keyed with key, of "v1:<timestamp>:<body>".
func signature(key []byte, timestamp string, body []byte) string {
	return signatureVersion + "=" + hex.EncodeToString(mac(key, timestamp, body))
}

func mac(key []byte, timestamp string, body []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(signatureVersion + ":" + timestamp + ":"))
	m.Write(body)
	return m.Sum(nil)
}

// stamp signs body for an attempt made at now: it sets HeaderTimestamp and HeaderSignature on h.
func stamp(h http.Header, key, body []byte, now time.Time) {
	ts := strconv.FormatInt(now.Unix(), 10)
	h.Set(HeaderTimestamp, ts)
	h.Set(HeaderSignature, signature(key, ts, body))
}

// Verify checks a signed notification as its receiver got it: header holds the request's
// headers, body its raw body before any parsing, key the target's hmacKey and now the receiver's
// clock. It accepts the request when HeaderTimestamp is within tolerance of now (DefaultTolerance
// when tolerance is not positive) and HeaderSignature has a "v1=" entry that is the signature of
// that timestamp and body, compared in constant time; entries of other versions are ignored. It
// refuses an unsigned request, and a request whose timestamp or body was changed or that is
// replayed after the tolerance, with an error wrapping ErrInvalidSignature. Receivers should
// also drop events whose id they have already handled: a retry is a new request with the same id.
func Verify(key []byte, header http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	invalid := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidSignature, fmt.Sprintf(format, args...))
	}
	if len(key) == 0 {
		// Anyone can compute an HMAC with an empty key.
		return invalid("no key to verify with")
	}
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	ts, err := timestamp(header)
	if err != nil {
		return invalid("%v", err)
	}
	if skew := now.Sub(time.Unix(ts, 0)); skew > tolerance || skew < -tolerance {
		return invalid("%s is %s from now, more than the tolerance of %s", HeaderTimestamp, skew.Abs().Truncate(time.Second), tolerance)
	}
	sigs, err := signatures(header)
	if err != nil {
		return invalid("%v", err)
	}
	want := mac(key, strconv.FormatInt(ts, 10), body)
	for _, s := range sigs {
		if hmac.Equal(s, want) {
			return nil
		}
	}
	return invalid("%s does not match the timestamp and body", HeaderSignature)
}

// timestamp reads HeaderTimestamp: exactly one value of decimal digits, as stamp writes it, so
// that the text Verify signs is the one the sender signed.
func timestamp(h http.Header) (int64, error) {
	v := h.Values(HeaderTimestamp)
	switch {
	case len(v) == 0 || v[0] == "":
		return 0, fmt.Errorf("no %s header", HeaderTimestamp)
	case len(v) > 1:
		return 0, fmt.Errorf("%d %s headers, want one", len(v), HeaderTimestamp)
	}
	s := v[0]
	if strings.TrimLeft(s, "0123456789") != "" || (len(s) > 1 && s[0] == '0') {
		return 0, fmt.Errorf("%s is not a Unix time in seconds", HeaderTimestamp)
	}
	ts, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s is not a Unix time in seconds", HeaderTimestamp)
	}
	return ts, nil
}

// signatures reads the v1 entries of HeaderSignature, a comma-separated list of
// "<version>=<hex>" (several header lines read as one list).
func signatures(h http.Header) ([][]byte, error) {
	v := h.Values(HeaderSignature)
	if len(v) == 0 || (len(v) == 1 && v[0] == "") {
		return nil, fmt.Errorf("no %s header", HeaderSignature)
	}
	var out [][]byte
	for _, entry := range strings.Split(strings.Join(v, ","), ",") {
		version, value, ok := strings.Cut(strings.TrimSpace(entry), "=")
		if !ok || version == "" {
			return nil, fmt.Errorf("%s is not a list of <version>=<hex>", HeaderSignature)
		}
		if version != signatureVersion {
			continue
		}
		sig, err := hex.DecodeString(value)
		if err != nil || len(sig) != sha256.Size {
			return nil, fmt.Errorf("%s %s= is not a hex HMAC-SHA256", HeaderSignature, signatureVersion)
		}
		out = append(out, sig)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s has no %s= entry", HeaderSignature, signatureVersion)
	}
	return out, nil
}
