package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/oauth2"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
	"k8s.io/utils/clock"

	"holdfast.dev/holdfast/internal/agentaccess"
)

// DefaultTokenLifetime is the validity the agent asks for its own hub tokens; it renews them
// once RenewAt of it has passed. A week: an agent down for longer (a site powered off) needs a
// new bootstrap token, and revocation does not wait for a token to expire (it deletes the
// ServiceAccount), so a short life would cost outages and buy nothing.
const (
	DefaultTokenLifetime = 7 * 24 * time.Hour
	RenewAt              = 0.8
)

// requestTimeout bounds one token request to the hub.
const requestTimeout = 30 * time.Second

// Stored is the agent's own hub token as it keeps it on its cluster, with its lifetime.
type Stored struct {
	Token          string
	Issued, Expiry time.Time
}

// Store keeps the agent's own token across restarts: a restarted agent needs neither the hub
// admin nor the bootstrap token.
type Store interface {
	Load(ctx context.Context) (Stored, error)
	Save(ctx context.Context, s Stored) error
}

// Credentials are the agent's hub identity: a token of its own ServiceAccount, traded for the
// bootstrap token the first time and renewed with itself after that. It is an oauth2.TokenSource
// for client-go (Config): requests carry the current token, and a 401 makes the next one ask
// anew.
type Credentials struct {
	hub       *rest.Config
	bootstrap string
	namespace string
	store     Store
	lifetime  time.Duration
	clock     clock.PassiveClock

	mu      sync.Mutex
	current Stored
	loaded  bool
}

// NewCredentials returns the credentials of the agent of the Pull cluster whose hub namespace is
// namespace: bootstrap is the kubeconfig `holdfast cluster add --pull` wrote (the hub's address,
// CA and the bootstrap token), store where its own token is kept.
func NewCredentials(bootstrap *rest.Config, namespace string, store Store, lifetime time.Duration) *Credentials {
	if lifetime <= 0 {
		lifetime = DefaultTokenLifetime
	}
	hub := rest.AnonymousClientConfig(bootstrap)
	return &Credentials{hub: hub, bootstrap: bootstrap.BearerToken, namespace: namespace, store: store, lifetime: lifetime, clock: clock.RealClock{}}
}

// Config is a client config of the hub authenticated by c.
func (c *Credentials) Config() *rest.Config {
	cfg := rest.CopyConfig(c.hub)
	ts := transport.NewCachedTokenSource(c)
	cfg.WrapTransport = transport.ResettableTokenSourceWrapTransport(ts)
	return cfg
}

// Token returns the agent's current token, with an expiry at its renewal time: asked again then
// (or after a 401), it renews it with itself, or, when that token was refused, trades the
// bootstrap token again (it works until the agent deletes its Secret, or it expires).
func (c *Credentials) Token() (*oauth2.Token, error) {
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.loaded {
		s, err := c.store.Load(ctx)
		if err != nil {
			return nil, fmt.Errorf("reading the agent's hub token: %w", err)
		}
		c.current, c.loaded = s, true
	}
	now := c.clock.Now()
	if c.current.Token != "" && now.Before(renewal(c.current)) {
		return &oauth2.Token{AccessToken: c.current.Token, Expiry: renewal(c.current)}, nil
	}
	next, err := c.request(ctx, c.current.Token)
	if err != nil && c.current.Token != "" && !answered(err) {
		// The hub does not answer: the agent works on with the token it has (what it kept of
		// the hub answers its reads) and asks again soon.
		return &oauth2.Token{AccessToken: c.current.Token, Expiry: c.clock.Now().Add(unansweredRetry)}, nil
	}
	traded := false
	if c.current.Token == "" || apierrors.IsUnauthorized(err) {
		if c.bootstrap == "" {
			return nil, errors.New("the agent has no hub token and no bootstrap token: apply what holdfast cluster add --pull prints")
		}
		next, err = c.request(ctx, c.bootstrap)
		traded = true
	}
	if err != nil {
		return nil, fmt.Errorf("requesting the agent's hub token (when refused, it was revoked: holdfast cluster add --pull issues a new bootstrap token): %w", err)
	}
	if err := c.store.Save(ctx, next); err != nil {
		return nil, fmt.Errorf("keeping the agent's hub token: %w", err)
	}
	c.current = next
	if traded {
		if err := c.endBootstrap(ctx); err != nil {
			return nil, err
		}
	}
	return &oauth2.Token{AccessToken: next.Token, Expiry: renewal(next)}, nil
}

// request asks the hub for a token of the agent's ServiceAccount, authenticated by token.
func (c *Credentials) request(ctx context.Context, token string) (Stored, error) {
	cs, err := c.clientWith(token)
	if err != nil {
		return Stored{}, err
	}
	seconds := int64(c.lifetime.Seconds())
	issued := c.clock.Now()
	tr, err := cs.CoreV1().ServiceAccounts(c.namespace).CreateToken(ctx, agentaccess.ServiceAccountName,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds}}, metav1.CreateOptions{})
	if err != nil {
		return Stored{}, err
	}
	return Stored{Token: tr.Status.Token, Issued: issued, Expiry: tr.Status.ExpirationTimestamp.Time}, nil
}

// endBootstrap deletes the bootstrap Secret on the hub, with the agent's own token: the bootstrap
// token is bound to it and stops working.
func (c *Credentials) endBootstrap(ctx context.Context) error {
	cs, err := c.clientWith(c.current.Token)
	if err != nil {
		return err
	}
	err = cs.CoreV1().Secrets(c.namespace).Delete(ctx, agentaccess.BootstrapSecretName, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("ending the bootstrap token (deleting its Secret on the hub): %w", err)
	}
	c.bootstrap = ""
	return nil
}

// clientWith is a hub client authenticated by token.
func (c *Credentials) clientWith(token string) (kubernetes.Interface, error) {
	cfg := rest.CopyConfig(c.hub)
	cfg.BearerToken = token
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("building a hub client: %w", err)
	}
	return cs, nil
}

// unansweredRetry is how soon a token whose renewal the hub did not answer is renewed again.
const unansweredRetry = 30 * time.Second

// answered reports whether err is the hub's answer (a status), rather than no answer.
func answered(err error) bool {
	var status apierrors.APIStatus
	return errors.As(err, &status)
}

// renewal is when s is renewed: RenewAt of its lifetime.
func renewal(s Stored) time.Time {
	return s.Issued.Add(time.Duration(float64(s.Expiry.Sub(s.Issued)) * RenewAt))
}
