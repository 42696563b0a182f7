package agent

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// What Kept keeps is saved on the agent's own cluster, one Secret per answer in the agent's
// namespace (the works hold the services' Secrets, so Secrets: the same trust as the objects the
// agent applies there), saved in the background at most every keptFlush, so that a status
// object read at every full reconcile costs one write a second at most, not one per read.
const (
	// KeptSecretType is the type of the Secrets holding what the agent kept of the hub.
	KeptSecretType     corev1.SecretType = "holdfast.dev/agent-kept"
	keptLabel                            = "holdfast.dev/agent-kept"
	keptKeyKey                           = "key"
	keptContentTypeKey                   = "contentType"
	keptBodyKey                          = "body"
	keptFlush                            = time.Second
	keptFieldOwner                       = "holdfast-agent"
	// keptFinalFlush bounds the last save, when the agent stops.
	keptFinalFlush = 10 * time.Second
	// maxKeptSecret is what one Secret may hold (the API server refuses more than 1 MiB).
	maxKeptSecret = 1000 << 10
)

// errKeptTooLarge is an answer too large for a Secret once compressed.
var errKeptTooLarge = errors.New("more than a Secret holds")

// keptStore saves what Kept keeps in Secrets of Namespace on the agent's cluster.
type keptStore struct {
	Client    client.Client
	Namespace string
}

// NewKept returns what the agent keeps of the hub namespace hubNamespace, saved in Secrets of
// namespace on its own cluster (own), loaded from there: an agent started while the hub is away
// answers from what the one before kept.
func NewKept(ctx context.Context, own client.Client, namespace, hubNamespace string, log logr.Logger) (*Kept, error) {
	k := &Kept{Namespace: hubNamespace, store: keptStore{Client: own, Namespace: namespace}, log: log,
		entries: map[string]keptEntry{}, dirty: map[string]bool{}}
	loaded, err := k.store.load(ctx)
	if err != nil {
		return nil, err
	}
	k.entries = loaded
	return k, nil
}

// Start saves what changed every keptFlush until ctx ends (a manager.Runnable of the agent; Run
// saves once more after every reconcile stopped).
func (k *Kept) Start(ctx context.Context) error {
	wait.UntilWithContext(ctx, k.flush, keptFlush)
	return nil
}

// flush saves the entries changed since the last flush; one that fails is tried again at the
// next.
func (k *Kept) flush(ctx context.Context) {
	k.mu.Lock()
	changed := make(map[string]*keptEntry, len(k.dirty))
	for key := range k.dirty {
		if e, ok := k.entries[key]; ok {
			changed[key] = &e
		} else {
			changed[key] = nil
		}
	}
	clear(k.dirty)
	k.mu.Unlock()
	for key, e := range changed {
		err := k.store.save(ctx, key, e)
		if errors.Is(err, errKeptTooLarge) {
			k.log.Info("An answer of the hub is kept in memory only", "reason", err.Error())
			continue
		}
		if err != nil {
			if ctx.Err() == nil {
				// Stopping is no failure: the entry stays dirty, and Run's last flush saves it.
				k.log.Error(err, "Keeping what the agent read of the hub on its own cluster failed; trying again")
			}
			k.mu.Lock()
			if _, newer := k.dirty[key]; !newer {
				k.dirty[key] = true
			}
			k.mu.Unlock()
		}
	}
}

// secretName is the name of the Secret holding the answer kept under key.
func keptSecretName(key string) string {
	sum := sha256.Sum256([]byte(key))
	return "holdfast-kept-" + hex.EncodeToString(sum[:10])
}

// save writes e under key, or deletes what is kept under key when e is nil. An answer too large
// for a Secret once compressed is kept in memory only, and said.
func (s keptStore) save(ctx context.Context, key string, e *keptEntry) error {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: keptSecretName(key)}}
	if e == nil {
		if err := s.Client.Delete(ctx, secret); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting Secret %s/%s: %w", s.Namespace, secret.Name, err)
		}
		return nil
	}
	body, err := compress(e.Body)
	if err != nil {
		return err
	}
	if len(body)+len(key) > maxKeptSecret {
		return fmt.Errorf("%w: what the hub answered to %s is %d bytes compressed: an agent restarted while the hub is away goes without it", errKeptTooLarge, key, len(body))
	}
	// One forced apply, whether the Secret exists or not: a create refused as existing, then a
	// read and an update, were three requests to the agent's cluster per answer kept.
	ac := corev1ac.Secret(secret.Name, s.Namespace).WithType(KeptSecretType).WithLabels(map[string]string{keptLabel: "true"}).
		WithData(map[string][]byte{keptKeyKey: []byte(key), keptContentTypeKey: []byte(e.ContentType), keptBodyKey: body})
	if err := s.Client.Apply(ctx, ac, client.ForceOwnership, client.FieldOwner(keptFieldOwner)); err != nil {
		return fmt.Errorf("writing Secret %s/%s: %w", s.Namespace, secret.Name, err)
	}
	return nil
}

// load reads what is kept.
func (s keptStore) load(ctx context.Context) (map[string]keptEntry, error) {
	list := &corev1.SecretList{}
	if err := s.Client.List(ctx, list, client.InNamespace(s.Namespace), client.MatchingLabels{keptLabel: "true"}); err != nil {
		return nil, fmt.Errorf("reading what the agent kept of the hub (Secrets of %s on its own cluster): %w", s.Namespace, err)
	}
	out := map[string]keptEntry{}
	for _, secret := range list.Items {
		key := string(secret.Data[keptKeyKey])
		if secret.Type != KeptSecretType || secret.Name != keptSecretName(key) {
			continue
		}
		body, err := decompress(secret.Data[keptBodyKey])
		if err != nil {
			// Damaged: the hub's next answer replaces it.
			continue
		}
		out[key] = keptEntry{ContentType: string(secret.Data[keptContentTypeKey]), Body: body}
	}
	return out, nil
}

func compress(data []byte) ([]byte, error) {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(data); err != nil {
		return nil, fmt.Errorf("compressing: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("compressing: %w", err)
	}
	return buf.Bytes(), nil
}

func decompress(data []byte) ([]byte, error) {
	r, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(io.LimitReader(r, maxKeptAnswer))
}
