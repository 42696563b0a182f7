package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"net/url"
	"runtime"

	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/fleetview"
)

// The web view's client of the hub (internal/webui New): its rate limit, for the hub reads.
const (
	uiQPS   = 50
	uiBurst = 100
)

// measureServer GETs each view -rounds times, round after round, reading the whole body, after
// one request of the fleet view that is not counted (the server's first).
func measureServer(ctx context.Context, ui webView, rounds int) ([]serverView, error) {
	c, url := ui.client, ui.url
	if _, err := get(ctx, c, url+"/"); err != nil {
		return nil, err
	}
	samples := map[string][]time.Duration{}
	size := map[string]int64{}
	for range rounds {
		for _, v := range views {
			start := time.Now()
			n, err := get(ctx, c, url+v)
			if err != nil {
				return nil, err
			}
			samples[v] = append(samples[v], time.Since(start))
			size[v] = n
		}
	}
	var out []serverView
	for _, v := range views {
		out = append(out, serverView{View: v, Bytes: size[v], Response: statsOf(samples[v])})
	}
	return out, nil
}

// get reads url's whole body and returns its size; anything but 200 is an error.
func get(ctx context.Context, c *http.Client, url string) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil {
		return n, fmt.Errorf("GET %s: reading the body: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return n, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return n, nil
}

// measureHubReads times the reads of the hub the views make, through a client like the web
// view's (its rate limit): the fleet view's Lists of Clusters and service sets, and every view's
// read of the status objects (fleetview.ListStatuses).
func measureHubReads(ctx context.Context, cfg *rest.Config, rounds int) ([]hubRead, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = uiQPS, uiBurst
	scheme := kruntime.NewScheme()
	if err := holdfastv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("building the hub client: %w", err)
	}
	decoder := serializer.NewCodecFactory(scheme).UniversalDeserializer() // client-go's
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	var pages [][]byte
	reads := []struct {
		name string
		read func() error
	}{
		{"List Clusters and MultiClusterServices (the fleet view)", func() error {
			if err := c.List(ctx, &holdfastv1.ClusterList{}); err != nil {
				return err
			}
			return c.List(ctx, &holdfastv1.MultiClusterServiceList{})
		}},
		{"fleetview.ListStatuses (every view)", func() error {
			_, err := fleetview.ListStatuses(ctx, c, fleetview.Filter{})
			return err
		}},
		// The same List's parts: the API server's answer, then the client's decoding.
		{"of which: GET the status objects' pages as raw JSON (API server and transfer)", func() error {
			pages, err = rawStatusPages(ctx, hc, cfg.Host)
			return err
		}},
		{"of which: decode those pages (client-go's JSON decoder)", func() error {
			for _, p := range pages {
				if _, _, err := decoder.Decode(p, nil, &holdfastv1.ClusterServiceStatusList{}); err != nil {
					return err
				}
			}
			return nil
		}},
	}
	var out []hubRead
	for _, r := range reads {
		var samples []time.Duration
		for range rounds {
			runtime.GC() // the decoding's garbage is its own
			start := time.Now()
			if err := r.read(); err != nil {
				return nil, fmt.Errorf("%s: %w", r.name, err)
			}
			samples = append(samples, time.Since(start))
		}
		out = append(out, hubRead{Read: r.name, Time: statsOf(samples)})
	}
	return out, nil
}

// listPageSize is fleetview.ListStatuses' page size.
const listPageSize = 250

// rawStatusPages GETs every status object as fleetview.ListStatuses does, page by page, and
// returns the pages' JSON.
func rawStatusPages(ctx context.Context, hc *http.Client, host string) ([][]byte, error) {
	var pages [][]byte
	cont := ""
	for {
		u := fmt.Sprintf("%s/apis/%s/clusterservicestatuses?limit=%d&continue=%s", host, holdfastv1.GroupVersion, listPageSize, url.QueryEscape(cont))
		body, err := getJSON(ctx, hc, u)
		if err != nil {
			return nil, err
		}
		pages = append(pages, body)
		var meta struct {
			Metadata struct {
				Continue string `json:"continue"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(body, &meta); err != nil {
			return nil, err
		}
		if cont = meta.Metadata.Continue; cont == "" {
			return pages, nil
		}
	}
}

// getJSON reads url from the hub as JSON.
func getJSON(ctx context.Context, hc *http.Client, u string) ([]byte, error) {
	return fetch(ctx, hc, u, "application/json")
}

// fetch reads url, accepting the media type accept, and fails on any status but 200.
func fetch(ctx context.Context, hc *http.Client, u, accept string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", accept)
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", u, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s, %v", u, resp.Status, err)
	}
	return body, nil
}

// describeData counts what is on the hub and the size of the status objects as the API server
// serves them (one JSON List).
func describeData(ctx context.Context, cfg *rest.Config) (dataSize, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return dataSize{}, err
	}
	body, err := getJSON(ctx, hc, cfg.Host+"/apis/"+holdfastv1.GroupVersion.String()+"/clusterservicestatuses")
	if err != nil {
		return dataSize{}, fmt.Errorf("listing the status objects: %w", err)
	}
	var list holdfastv1.ClusterServiceStatusList
	if err := json.Unmarshal(body, &list); err != nil {
		return dataSize{}, fmt.Errorf("decoding the status objects: %w", err)
	}
	d := dataSize{Statuses: len(list.Items), StatusListBytes: int64(len(body))}
	for _, css := range list.Items {
		d.Resources += len(css.Status.Resources)
		d.DriftRecords += len(css.Status.Drifts)
	}
	return d, nil
}
