package fleet

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// ProbeResult is what a successful probe learnt about a cluster.
type ProbeResult struct {
	// Version is the API server's git version, e.g. v1.36.4.
	Version string
	// User is the identity the credentials authenticate as; empty when the cluster does not say.
	User string
}

// ProbeError is a failed probe, classified into a Cluster condition reason.
type ProbeError struct {
	// Reason is one of the Cluster Connected condition reasons.
	Reason string
	Err    error
}

func (e *ProbeError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *ProbeError) Unwrap() error { return e.Err }

const anonymousUser = "system:anonymous"

// probe asks the API server for its version and for the identity the credentials map to. The
// version endpoint is open to anonymous users on most clusters, so only the second call shows
// whether the credentials were accepted.
func probe(ctx context.Context, cs kubernetes.Interface) (ProbeResult, error) {
	info, err := cs.Discovery().ServerVersion()
	if err != nil {
		return ProbeResult{}, classify(fmt.Errorf("reading the server version: %w", err))
	}
	res := ProbeResult{Version: info.GitVersion}
	review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	switch {
	case err == nil:
		res.User = review.Status.UserInfo.Username
		if res.User == anonymousUser {
			return res, &ProbeError{Reason: holdfastv1.CredentialsRejectedReason,
				Err: errors.New("the API server treats the kubeconfig's credentials as anonymous: they were not accepted")}
		}
	case apierrors.IsForbidden(err) && strings.Contains(err.Error(), anonymousUser):
		return res, &ProbeError{Reason: holdfastv1.CredentialsRejectedReason,
			Err: errors.New("the API server treats the kubeconfig's credentials as anonymous: they were not accepted")}
	case apierrors.IsNotFound(err) || apierrors.IsForbidden(err) || apierrors.IsMethodNotSupported(err):
		// Older clusters lack SelfSubjectReview, and RBAC may deny it to an accepted identity.
	default:
		return res, classify(fmt.Errorf("reviewing the kubeconfig's identity: %w", err))
	}
	return res, nil
}

// classify maps a request error to a Connected reason.
func classify(err error) *ProbeError {
	var (
		unknownAuthority x509.UnknownAuthorityError
		hostname         x509.HostnameError
		invalid          x509.CertificateInvalidError
		verification     *tls.CertificateVerificationError
		header           tls.RecordHeaderError
	)
	switch {
	case apierrors.IsUnauthorized(err):
		return &ProbeError{Reason: holdfastv1.CredentialsRejectedReason, Err: err}
	case errors.As(err, &unknownAuthority), errors.As(err, &hostname), errors.As(err, &invalid),
		errors.As(err, &verification), errors.As(err, &header):
		return &ProbeError{Reason: holdfastv1.TLSFailedReason, Err: err}
	case strings.Contains(err.Error(), "tls: "):
		return &ProbeError{Reason: holdfastv1.TLSFailedReason, Err: err}
	default:
		return &ProbeError{Reason: holdfastv1.UnreachableReason, Err: err}
	}
}
