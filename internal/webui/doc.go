// Package webui is `holdfast ui`: a web view of the fleet and its drift, served on the user's
// machine and acting with the user's own kubeconfig, so that every read and every action is
// checked by the hub's RBAC for that user and the controller serves no web page and holds no
// credentials for one.
//
// Three views: the fleet (a matrix of clusters by service sets with readiness, health, drift
// state and last change, filtered by cluster labels, service set and state; service sets paused
// and resumed from their column), the drift feed (what waits for a human or is Contested, with
// "Correct now" and "Resume", then every drift record newest first with its field diffs and
// author, filtered by author, cluster and kind; a timeline per object) and charts (correction
// latency and drifts per hour). Their data is package fleetview's read model, the documents the
// CLI prints, so Secret values are redacted by the same code as everywhere.
//
// A fourth, the Preview page of a service set (preview.go), is linked from its column while its
// rollout holds a revision for approval (approval Manual) or has a preview: the controller's
// bounded summary of what the revision would change on the clusters (counts by outcome, groups of
// clusters with the same changes and their diffs, Secret values already masked, refusals with the
// API server's message) and who approved it. Its Approve button writes the approval annotation
// for the revision the page showed, and only while the service set still holds that revision: a
// human approves what they reviewed, never a revision that replaced it since.
//
// Pages are rendered on the server with html/template, which escapes everything a target
// cluster or a user wrote into them; they work without JavaScript. A small embedded script
// (no build step, no CDN) adds live updates: the server keeps an informer cache of the hub's
// status objects, service sets and Clusters (hubcache.go), builds the pages from it, and tells
// the page of each change over server-sent events; the page fetches its view again. Actions are HTML forms posted to the server, which makes the request to the hub
// with the user's credentials and shows the API server's answer, refusals included.
//
// Whoever uses the page acts with the user's credentials, so every request passes three checks
// (server.go's handler): its Host is one of the listener's names (hosts.go), which shuts out a
// site whose name was made to resolve to this machine (DNS rebinding); an action comes from the
// page itself (net/http's CrossOriginProtection); and it carries the run's secret (session.go), a
// random token in the URL the command prints, exchanged on the first visit for an HttpOnly,
// SameSite=Strict cookie, so that other users and processes of the machine, and other sites,
// cannot use the page even on loopback.
package webui
