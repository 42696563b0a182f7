package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/naming"
	"holdfast.dev/holdfast/internal/work"
)

// Kept is the hub as the agent last read it, so that an agent restarted while the hub is away
// keeps working (docs/agent.md, "The hub away"): the answers to the reads the per-cluster
// reconcile makes on the hub — its status objects read whole, their inventory shards, the works
// the hub published — kept in memory and on the agent's own cluster (keptStore), and given in
// place of the hub's when it cannot be reached. Writes are never answered: a status patch fails
// as it would, and the reconcile keeps its records until the hub is back.
//
// The status objects are kept as read whole by the reconcile's full pass (an object and its
// shards in the same pass, so never a status naming shards its kept list lacks); the list the
// agent's cache starts from is made of them. An object the hub answered NotFound for is forgotten.
type Kept struct {
	// Namespace is the agent's Cluster's namespace on the hub: only reads there are kept.
	Namespace string

	store keptStore
	log   logr.Logger

	mu      sync.Mutex
	entries map[string]keptEntry
	dirty   map[string]bool
	// away is true while the hub does not answer, to log once per outage.
	away bool
	// pruned is, per status object, the digest of the work whose older works' kept parts were
	// let go (forgetOtherWorks): once per work, not at every status patch.
	pruned map[string]string
}

// keptEntry is one kept answer.
type keptEntry struct {
	ContentType string `json:"contentType"`
	Body        []byte `json:"body"`
}

// Kept resources: the reads of the reconcile on the hub (the heartbeat's Lease, Events and
// writes are not kept).
const (
	keptStatuses    = "clusterservicestatuses"
	keptInventories = "clusterserviceinventories"
	keptSecrets     = "secrets"
	// maxKeptAnswer bounds one kept answer: larger ones are passed on, not kept.
	maxKeptAnswer = 16 << 20
)

// Wrap is a rest.Config's WrapTransport: requests go to the hub through rt, and those the hub
// does not answer are answered from what was kept.
func (k *Kept) Wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) { return k.roundTrip(rt, req) })
}

// WrapConfig returns a copy of cfg whose requests go through k.
func (k *Kept) WrapConfig(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(k.Wrap)
	return cfg
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

func (k *Kept) roundTrip(rt http.RoundTripper, req *http.Request) (*http.Response, error) {
	if k.startingWatch(req) {
		return k.startWatch(rt, req)
	}
	r, ok := k.keptRead(req)
	if !ok {
		return rt.RoundTrip(req)
	}
	resp, err := rt.RoundTrip(req)
	if unreachable(req, resp, err) {
		if answer := k.answer(req, r); answer != nil {
			if resp != nil {
				_ = resp.Body.Close()
			}
			return answer, nil
		}
		return resp, err
	}
	k.reachable()
	switch {
	case resp.StatusCode == http.StatusOK && r.key != "":
		body, readErr := io.ReadAll(io.LimitReader(resp.Body, maxKeptAnswer+1))
		_ = resp.Body.Close()
		if readErr != nil {
			return nil, readErr
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		if len(body) <= maxKeptAnswer {
			k.keep(r.key, keptEntry{ContentType: resp.Header.Get("Content-Type"), Body: body})
		}
	case resp.StatusCode == http.StatusNotFound && r.resource == keptStatuses && r.name != "":
		k.forgetStatus(r.name)
	}
	return resp, nil
}

// startingWatch reports whether req is the watch the agent's cache starts with (client-go's
// watch-list: the initial events, then the changes) of the status objects.
func (k *Kept) startingWatch(req *http.Request) bool {
	q := req.URL.Query()
	return req.Method == http.MethodGet && q.Get("watch") == "true" && q.Get("sendInitialEvents") == "true" &&
		req.URL.Path == strings.TrimSuffix(k.statusPrefix(), "/")
}

// startWatch passes the cache's first watch on to the hub; when the hub does not answer and
// status objects are kept, the error is made one that client-go does not retry but falls back on
// a list for, which is answered from what was kept. (It retries a refused connection for ever.)
func (k *Kept) startWatch(rt http.RoundTripper, req *http.Request) (*http.Response, error) {
	resp, err := rt.RoundTrip(req)
	if !unreachable(req, resp, err) {
		return resp, err
	}
	k.mu.Lock()
	kept := len(k.statusKeysLocked()) > 0
	k.mu.Unlock()
	if !kept {
		return resp, err
	}
	why := "no answer"
	if err != nil {
		why = err.Error()
	} else {
		why = resp.Status
		_ = resp.Body.Close()
	}
	// Not wrapped: a refused connection is what client-go retries.
	return nil, errors.New("the hub does not answer (" + why + "): the agent lists the status objects it kept instead")
}

// keptRead is a read of the hub that is kept: its resource and name, and the key it is kept
// under ("" for the list of status objects, which is made of the objects kept).
type keptRead struct {
	key, resource, name string
}

// keptRead reports whether req is a kept read: a GET, not a watch, in the agent's namespace, of
// a kept resource.
func (k *Kept) keptRead(req *http.Request) (keptRead, bool) {
	if req.Method != http.MethodGet {
		return keptRead{}, false
	}
	q := req.URL.Query()
	if w, _ := strconv.ParseBool(q.Get("watch")); w {
		return keptRead{}, false
	}
	prefix, rest, ok := strings.Cut(req.URL.Path, "/namespaces/"+k.Namespace+"/")
	if !ok || (prefix != "/api/v1" && prefix != "/apis/"+holdfastv1.GroupVersion.String()) {
		return keptRead{}, false
	}
	parts := strings.Split(rest, "/")
	r := keptRead{resource: parts[0]}
	switch {
	case !slices.Contains([]string{keptStatuses, keptInventories, keptSecrets}, r.resource):
		return keptRead{}, false
	case len(parts) == 2:
		r.name = parts[1]
	case len(parts) > 2:
		// A subresource.
		return keptRead{}, false
	}
	if r.resource == keptStatuses && r.name == "" {
		// The list the cache starts from: made of the objects kept.
		return r, q.Get("labelSelector") == "" && q.Get("fieldSelector") == ""
	}
	// What an answer depends on: the object, or the selectors of a list (not the
	// resourceVersion asked for, nor paging: the reconcile's lists are not paged).
	selectors := url.Values{}
	for _, p := range []string{"labelSelector", "fieldSelector"} {
		if v := q.Get(p); v != "" {
			selectors.Set(p, v)
		}
	}
	r.key = prefix + "/namespaces/" + k.Namespace + "/" + rest
	if len(selectors) > 0 {
		r.key += "?" + selectors.Encode()
	}
	return r, true
}

// unreachable reports whether the hub did not answer req: no response (the request's own
// context aside), or a gateway's in its place.
func unreachable(req *http.Request, resp *http.Response, err error) bool {
	if err != nil {
		return req.Context().Err() == nil
	}
	switch resp.StatusCode {
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// answer is what was kept for r, as the hub's answer to req; nil when nothing was.
func (k *Kept) answer(req *http.Request, r keptRead) *http.Response {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.away {
		k.away = true
		k.log.Info("The hub does not answer; answering the agent's reads from what it kept", "kept", len(k.entries))
	}
	var e keptEntry
	if r.key == "" {
		list, ok := k.statusListLocked()
		if !ok {
			return nil
		}
		e = list
	} else {
		kept, ok := k.entries[r.key]
		if !ok {
			return nil
		}
		e = kept
	}
	return &http.Response{
		Status: "200 OK", StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": []string{e.ContentType}, keptHeader: []string{"true"}},
		Body:          io.NopCloser(bytes.NewReader(e.Body)),
		ContentLength: int64(len(e.Body)),
		Request:       req,
	}
}

// keptHeader marks an answer given from what was kept.
const keptHeader = "X-Holdfast-Kept"

// statusListLocked is the list of the status objects kept, as the hub would answer it; false
// when none is kept (an agent that never read the hub starts nothing from it).
func (k *Kept) statusListLocked() (keptEntry, bool) {
	keys := k.statusKeysLocked()
	if len(keys) == 0 {
		return keptEntry{}, false
	}
	list := struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		Metadata   map[string]string `json:"metadata"`
		Items      []json.RawMessage `json:"items"`
	}{APIVersion: holdfastv1.GroupVersion.String(), Kind: "ClusterServiceStatusList"}
	var newest uint64
	for _, key := range keys {
		body := k.entries[key].Body
		var meta struct {
			Metadata struct {
				ResourceVersion string `json:"resourceVersion"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(body, &meta); err != nil {
			continue
		}
		if rv, err := strconv.ParseUint(meta.Metadata.ResourceVersion, 10, 64); err == nil {
			newest = max(newest, rv)
		}
		list.Items = append(list.Items, body)
	}
	list.Metadata = map[string]string{"resourceVersion": strconv.FormatUint(newest, 10)}
	body, err := json.Marshal(list)
	if err != nil {
		return keptEntry{}, false
	}
	return keptEntry{ContentType: "application/json", Body: body}, true
}

// statusKeysLocked are the keys of the status objects kept, sorted.
func (k *Kept) statusKeysLocked() []string {
	prefix := k.statusPrefix()
	var keys []string
	for key := range k.entries {
		if name, ok := strings.CutPrefix(key, prefix); ok && !strings.ContainsAny(name, "/?") {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	return keys
}

// statusPrefix is the key prefix of the status objects kept.
func (k *Kept) statusPrefix() string {
	return "/apis/" + holdfastv1.GroupVersion.String() + "/namespaces/" + k.Namespace + "/" + keptStatuses + "/"
}

// keep keeps e under key, to be saved on the agent's cluster if it changed.
func (k *Kept) keep(key string, e keptEntry) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if have, ok := k.entries[key]; ok && bytes.Equal(have.Body, e.Body) && have.ContentType == e.ContentType {
		return
	}
	k.entries[key] = e
	k.dirty[key] = true
}

// forgetStatus forgets the status object name, the hub having said it is gone, its works and
// the lists selecting by its label (its works and shards).
func (k *Kept) forgetStatus(name string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.forgetOtherWorksLocked(name, nil)
	delete(k.pruned, name)
	label := naming.LabelValue(name)
	for key := range k.entries {
		_, query, _ := strings.Cut(key, "?")
		values, _ := url.ParseQuery(query)
		selector := values.Get("labelSelector")
		if key == k.statusPrefix()+name || selector == work.StatusLabel+"="+label || selector == holdfastv1.StatusLabel+"="+label {
			delete(k.entries, key)
			k.dirty[key] = true
		}
	}
}

// reachable notes that the hub answers again.
func (k *Kept) reachable() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.away {
		k.away = false
		k.log.Info("The hub answers again")
	}
}
