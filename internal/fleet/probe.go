package fleet

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	authenticationv1client "k8s.io/client-go/kubernetes/typed/authentication/v1"
	"k8s.io/client-go/rest"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/textlimit"
)

// ProbeResult is what a successful probe learnt about a cluster.
type ProbeResult struct {
	// Version is the API server's git version, e.g. v1.36.4.
	Version string
	// User is the identity the credentials authenticate as; empty when the cluster does not say.
	User string
}

// ProbeError is a failed probe, classified into a Cluster condition reason. Its message goes into
// the Cluster's condition and Events, which the Cluster's author reads, and the server it names
// is the author's choice: the message never quotes what the server answered beyond the message
// of a Kubernetes Status, and is bounded (see redact).
type ProbeError struct {
	// Reason is one of the Cluster Connected condition reasons.
	Reason string
	Err    error
}

func (e *ProbeError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *ProbeError) Unwrap() error { return e.Err }

const anonymousUser = "system:anonymous"

// probeClient is what a probe asks with: two REST clients, not a whole clientset (one REST client
// per API group, some 50 KiB a cluster in a fleet of thousands).
type probeClient struct {
	version discovery.ServerVersionInterface
	reviews authenticationv1client.SelfSubjectReviewsGetter
}

func newProbeClient(cfg *rest.Config) (probeClient, error) {
	d, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return probeClient{}, err
	}
	a, err := authenticationv1client.NewForConfig(cfg)
	if err != nil {
		return probeClient{}, err
	}
	return probeClient{version: d, reviews: a}, nil
}

// reviewInterval is how long the identity a connection's credentials map to is taken as known:
// probes in between ask only for the version. Credentials the API server stops accepting (a
// token revoked, a certificate it no longer trusts) fail every request, the version too, with
// 401 Unauthorized; only credentials never presented pass as anonymous, and those do not change
// for a connection, which is built from one kubeconfig.
const reviewInterval = 5 * time.Minute

// reviewed is the identity a connection's last successful SelfSubjectReview found.
type reviewed struct {
	mu   sync.Mutex
	at   time.Time
	user string
}

func (r *reviewed) get(now time.Time) (user string, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.user, !r.at.IsZero() && now.Sub(r.at) < reviewInterval
}

func (r *reviewed) set(now time.Time, user string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.at, r.user = now, user
}

// probe asks the API server for its version and, unless known reviews it as still valid, for
// the identity the credentials map to. The version endpoint is open to anonymous users on most
// clusters, so only the second call shows whether credentials were presented and accepted.
func probe(ctx context.Context, cs probeClient, known *reviewed, now time.Time) (ProbeResult, error) {
	info, err := cs.version.ServerVersion()
	if err != nil {
		return ProbeResult{}, classify("reading the server version", err)
	}
	// Both go into the Cluster's status and condition message: bounded, like error messages.
	res := ProbeResult{Version: truncate(info.GitVersion)}
	if user, ok := known.get(now); ok {
		res.User = user
		return res, nil
	}
	review, err := cs.reviews.SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	switch {
	case err == nil:
		res.User = truncate(review.Status.UserInfo.Username)
		if res.User == anonymousUser {
			return res, &ProbeError{Reason: holdfastv1.CredentialsRejectedReason,
				Err: errors.New("the API server treats the kubeconfig's credentials as anonymous: they were not accepted")}
		}
	case apierrors.IsForbidden(err) && strings.Contains(redact(err).Error(), anonymousUser):
		return res, &ProbeError{Reason: holdfastv1.CredentialsRejectedReason,
			Err: errors.New("the API server treats the kubeconfig's credentials as anonymous: they were not accepted")}
	case apierrors.IsNotFound(err) || apierrors.IsForbidden(err) || apierrors.IsMethodNotSupported(err):
		// Older clusters lack SelfSubjectReview, and RBAC may deny it to an accepted identity.
	default:
		return res, classify("reviewing the kubeconfig's identity", err)
	}
	known.set(now, res.User)
	return res, nil
}

// classify maps the error of a request, made to do op, to a Connected reason and a message fit
// for a Cluster's condition.
func classify(op string, err error) *ProbeError {
	return &ProbeError{Reason: reasonOf(err), Err: fmt.Errorf("%s: %w", op, redact(err))}
}

// reasonOf maps a request error to a Connected reason.
func reasonOf(err error) string {
	var (
		unknownAuthority x509.UnknownAuthorityError
		hostname         x509.HostnameError
		invalid          x509.CertificateInvalidError
		verification     *tls.CertificateVerificationError
		header           tls.RecordHeaderError
	)
	switch {
	case apierrors.IsUnauthorized(err):
		return holdfastv1.CredentialsRejectedReason
	case errors.As(err, &unknownAuthority), errors.As(err, &hostname), errors.As(err, &invalid),
		errors.As(err, &verification), errors.As(err, &header):
		return holdfastv1.TLSFailedReason
	case !isAPIStatus(err) && strings.Contains(err.Error(), "tls: "):
		return holdfastv1.TLSFailedReason
	default:
		return holdfastv1.UnreachableReason
	}
}

// maxProbeMessage bounds what redact keeps of an error's message.
const maxProbeMessage = 512

// notAnAPIServer explains an HTTP answer that is not a Kubernetes Status.
const notAnAPIServer = "the server is not a Kubernetes API server, or a proxy in front of it answered"

// redact returns err as a Cluster's author may read it. The server a Cluster names may be any
// HTTP endpoint the controller can reach, internal ones included, so what it answered must not
// come back to the author:
//   - an HTTP answer that is not a Kubernetes Status (client-go quotes up to 2 KiB of its body,
//     in the message and in a cause) becomes its status code: "HTTP 500 Internal Server Error";
//   - a Kubernetes Status keeps its code, reason and message ("Unauthorized", "... is forbidden:
//     User ... cannot ..."), without its details;
//   - a request that got no answer keeps its message (dial, TLS, timeout: it names the server,
//     which the author wrote, and quotes nothing it sent);
//   - anything else, an answer that could not be decoded, is said to be one: decoders quote
//     what they could not read.
//
// Every message kept is cut to maxProbeMessage bytes. Status errors stay status errors, so that
// apierrors.IsForbidden and the like still tell them apart.
func redact(err error) error {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		st := status.Status()
		msg := st.Message
		switch {
		case unexpectedResponse(st):
			msg = httpStatus(st.Code) + ": " + notAnAPIServer
		case msg == "":
			msg = httpStatus(st.Code)
		}
		return &apierrors.StatusError{ErrStatus: metav1.Status{
			Status: st.Status, Code: st.Code, Reason: st.Reason, Message: truncate(msg)}}
	}
	var urlErr *url.Error
	if errors.As(err, &urlErr) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return truncated{err}
	}
	// The connection failing while the answer was read (reset, cut short, a read timeout, an
	// HTTP/2 stream reset) quotes nothing the server sent: said as what it is, not as an answer
	// that is no API server's.
	var netErr net.Error
	switch {
	case errors.As(err, &netErr):
		return fmt.Errorf("the connection failed while the answer was read: %w", truncated{netErr})
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return fmt.Errorf("the answer was cut short: %w", io.ErrUnexpectedEOF)
	case bodyUnread(err):
		return fmt.Errorf("the connection failed while the answer was read: %w", truncated{err})
	}
	return errors.New("the answer could not be read as a Kubernetes API response: " + notAnAPIServer)
}

// truncated is err with its message cut to maxProbeMessage bytes; what it wraps stays in the
// chain, so that errors.Is and errors.As still tell the fault (a timeout, a net.Error) apart.
type truncated struct{ err error }

func (t truncated) Error() string { return truncate(t.err.Error()) }
func (t truncated) Unwrap() error { return t.err }

// Redact returns err as a Cluster's author may read it, by the rules of the probe's errors
// (redact): for the errors of other requests to a cluster that go into the Cluster's status.
func Redact(err error) error { return redact(err) }

// unexpectedResponse reports whether st was made by client-go from an HTTP answer that was not a
// Kubernetes Status (apierrors.NewGenericServerResponse), whose body it quotes.
func unexpectedResponse(st metav1.Status) bool {
	if st.Details == nil {
		return false
	}
	for _, c := range st.Details.Causes {
		if c.Type == metav1.CauseTypeUnexpectedServerResponse {
			return true
		}
	}
	return false
}

// httpStatus is "HTTP 500 Internal Server Error".
func httpStatus(code int32) string {
	if text := http.StatusText(int(code)); text != "" {
		return fmt.Sprintf("HTTP %d %s", code, text)
	}
	return fmt.Sprintf("HTTP %d", code)
}

func isAPIStatus(err error) bool {
	var status apierrors.APIStatus
	return errors.As(err, &status)
}

// truncate cuts what a target answered to at most maxProbeMessage bytes, marking the cut.
func truncate(s string) string {
	return textlimit.Cut(s, maxProbeMessage, " …(truncated)")
}
