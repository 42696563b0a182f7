package v1alpha1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DriftAction says what Holdfast does when it finds drift.
// +kubebuilder:validation:Enum=Correct;Report
type DriftAction string

const (
	// DriftActionCorrect puts the object back at once (force ownership), in the same pass that
	// found the drift.
	DriftActionCorrect DriftAction = "Correct"
	// DriftActionReport records and notifies; the object is corrected only when someone asks
	// (holdfast.dev/reconcile-requested-at, `holdfast correct`) or inside a correction window.
	DriftActionReport DriftAction = "Report"
)

// Defaults of fight detection.
const (
	// DefaultFightMaxCorrections is how many corrections of one object, each undone again by
	// another field manager, are made within the fight window before the object is Contested.
	DefaultFightMaxCorrections = 5
	// DefaultFightWindow is the window corrections are counted in.
	DefaultFightWindow = 10 * time.Minute
	// DefaultFightMaxBackoff caps the wait between two corrections of a Contested object.
	DefaultFightMaxBackoff = 5 * time.Minute
	// FightFirstBackoff is the wait before the first correction of an object once it is
	// Contested; each further correction waits twice as long as the one before.
	FightFirstBackoff = 10 * time.Second
)

// FightAction is what Holdfast does about an object once it is Contested.
// +kubebuilder:validation:Enum=Backoff;Stop
type FightAction string

const (
	// FightBackoff keeps correcting a Contested object, each time waiting twice as long as the
	// time before (10s, 20s, 40s, ...) up to maxBackoff. The default: whoever can edit an object
	// must not be able to switch its correction off by editing it a few times.
	FightBackoff FightAction = "Backoff"
	// FightStop stops correcting a Contested object until a manual request (holdfast correct):
	// an explicit choice to let the other manager win meanwhile.
	FightStop FightAction = "Stop"
)

// AttributionMode says whether Holdfast names the person behind a drift.
// +kubebuilder:validation:Enum=Auto;Off
type AttributionMode string

const (
	// AttributionAuto installs, on every target that serves MutatingAdmissionPolicy
	// (admissionregistration.k8s.io/v1), a policy and binding that stamp who updated the service
	// set's objects (ChangedByAnnotation, ChangedAtAnnotation); drift records name that user.
	AttributionAuto AttributionMode = "Auto"
	// AttributionOff installs nothing; drift records name the field manager only.
	AttributionOff AttributionMode = "Off"
)

// PreventionMode says whether the target's API server stops changes to managed objects.
// +kubebuilder:validation:Enum=Off;Warn;Deny
type PreventionMode string

const (
	// PreventionOff installs nothing: changes are drift, handled per the drift policy.
	PreventionOff PreventionMode = "Off"
	// PreventionWarn installs a ValidatingAdmissionPolicy whose binding warns: whoever updates
	// a field Holdfast manages, or deletes a managed object, is told at once (kubectl prints
	// the warning) which service set manages it and what Holdfast will do; the change goes
	// through and is drift as before.
	PreventionWarn PreventionMode = "Warn"
	// PreventionDeny installs the same policy with a denying binding: updates of fields
	// Holdfast manages and deletions of managed objects are refused with that message, except
	// for the break-glass users and groups, Holdfast itself and the cluster's own controllers.
	PreventionDeny PreventionMode = "Deny"
)

// BreakGlass names who may still change managed objects when prevention is Warn or Deny; their
// changes are drift as without prevention, attributed to them with attribution Auto.
type BreakGlass struct {
	// Users are user names as the target's API server authenticates them, e.g. "alice" or
	// "system:serviceaccount:ops:oncall".
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=253
	// +listType=set
	// +optional
	Users []string `json:"users,omitempty"`
	// Groups are group names, e.g. "platform-oncall" or "system:masters".
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=253
	// +listType=set
	// +optional
	Groups []string `json:"groups,omitempty"`
}

// DriftPolicy says how drift is handled in ContinuousWithDriftDetection mode.
type DriftPolicy struct {
	// Action defaults to Correct.
	// +kubebuilder:default=Correct
	// +optional
	Action DriftAction `json:"action,omitempty"`
	// CorrectionWindows, with action Report, are times (UTC) in which drift is corrected
	// automatically anyway, for example every night 02:00-04:00. Outside them drift waits for a
	// manual request.
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +optional
	CorrectionWindows []CorrectionWindow `json:"correctionWindows,omitempty"`
	// Ignore exempts fields from drift handling: they are neither reported nor corrected, and
	// never applied over a value another field manager set (an HPA keeps its replicas).
	// +kubebuilder:validation:MaxItems=64
	// +listType=atomic
	// +optional
	Ignore []IgnoreRule `json:"ignore,omitempty"`
	// Fight bounds corrections of an object another field manager keeps reverting.
	// +optional
	Fight *FightPolicy `json:"fight,omitempty"`
	// Immutable says what to do when a correction is refused because it would change an
	// immutable field: someone deleted the object and created another of the same name with
	// different immutable content (a Job's pod template, a Deployment's selector, a PVC's
	// storage class), or made a ConfigMap or Secret immutable while changing it.
	// +optional
	Immutable *ImmutablePolicy `json:"immutable,omitempty"`
	// Attribution, Auto, names the user (as the target's API server authenticated them) who
	// updated a managed object, beside the field manager: Holdfast installs a
	// MutatingAdmissionPolicy and its binding on each target that serves them, which stamp the
	// requester on every update of the service set's objects by anyone but Holdfast. Off (the
	// default) installs nothing. See docs/drift.md, Attribution.
	// +kubebuilder:default=Off
	// +optional
	Attribution AttributionMode `json:"attribution,omitempty"`
	// Prevention asks each target's API server to stop changes before they happen: Warn tells
	// whoever updates a field Holdfast manages, or deletes a managed object, and lets it
	// through; Deny refuses it. Holdfast installs a ValidatingAdmissionPolicy and binding on
	// each target that serves them. Ignored fields, opted-out services, other managers' fields
	// and subresources (status, scale) are never covered; neither are Holdfast itself, the
	// break-glass users and groups, and the cluster's own controllers. Off (the default)
	// installs nothing. A service may override it. See docs/drift.md, Prevention.
	// +kubebuilder:default=Off
	// +optional
	Prevention PreventionMode `json:"prevention,omitempty"`
	// BreakGlass names who may change managed objects anyway under Warn or Deny.
	// +optional
	BreakGlass *BreakGlass `json:"breakGlass,omitempty"`
}

// ImmutableAction is what to do about drift only a re-creation can correct.
// +kubebuilder:validation:Enum=Report;Recreate
type ImmutableAction string

const (
	// ImmutableReport leaves the object as it is, Uncorrectable, naming the immutable fields.
	ImmutableReport ImmutableAction = "Report"
	// ImmutableRecreate deletes the object and creates it as declared.
	ImmutableRecreate ImmutableAction = "Recreate"
)

// ImmutablePolicy decides whether Holdfast deletes and re-creates an object to correct drift in
// immutable fields.
type ImmutablePolicy struct {
	// Action defaults to Report.
	// +kubebuilder:default=Report
	// +optional
	Action ImmutableAction `json:"action,omitempty"`
	// RecreateNamespacesAndCRDs allows Recreate for Namespaces and CustomResourceDefinitions,
	// whose deletion deletes everything in them. Off by default.
	// +optional
	RecreateNamespacesAndCRDs bool `json:"recreateNamespacesAndCRDs,omitempty"`
}

// Weekday is a day of the week, in English.
// +kubebuilder:validation:Enum=Monday;Tuesday;Wednesday;Thursday;Friday;Saturday;Sunday
type Weekday string

// CorrectionWindow is a daily time span, in UTC.
type CorrectionWindow struct {
	// Start is the time of day the window opens, "HH:MM" in UTC.
	// +kubebuilder:validation:Pattern=`^([01][0-9]|2[0-3]):[0-5][0-9]$`
	Start string `json:"start"`
	// Duration is how long the window stays open, at most 24h.
	Duration metav1.Duration `json:"duration"`
	// Days limits the window to the days it opens on; empty means every day.
	// +kubebuilder:validation:MaxItems=7
	// +listType=set
	// +optional
	Days []Weekday `json:"days,omitempty"`
}

// IgnoreRule exempts fields of the objects it selects from drift handling.
type IgnoreRule struct {
	// Paths are JSON pointers (RFC 6901) to the fields to ignore, e.g. /spec/replicas or
	// /data/last-rotated. A path ignores everything below it.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:Pattern=`^/`
	// +listType=set
	Paths []string `json:"paths"`
	// Target selects the objects the rule applies to; empty selects every object.
	// +optional
	Target *ResourceSelector `json:"target,omitempty"`
}

// ResourceSelector selects objects on a target cluster. Every field set must match.
type ResourceSelector struct {
	// Group of the object's kind ("" is the core group; unset matches any group).
	// +optional
	Group *string `json:"group,omitempty"`
	// +optional
	Kind string `json:"kind,omitempty"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Name of the object; a trailing * matches any suffix.
	// +optional
	Name string `json:"name,omitempty"`
	// LabelSelector matches the object's labels on the cluster.
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
}

// FightPolicy says when an object another field manager keeps changing back is Contested, and
// what Holdfast does about it then.
type FightPolicy struct {
	// MaxCorrections is how many corrections of one object within Window are made before
	// Holdfast marks it Contested, naming the other manager, and notifies; what happens next is
	// Action. Defaults to 5.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	MaxCorrections int32 `json:"maxCorrections,omitempty"`
	// Window defaults to 10m. A Contested object that stays as corrected for a Window is no
	// longer Contested.
	// +optional
	Window *metav1.Duration `json:"window,omitempty"`
	// Action defaults to Backoff: keep correcting, with an exponential backoff capped at
	// MaxBackoff. Stop waits for a manual request instead.
	// +kubebuilder:default=Backoff
	// +optional
	Action FightAction `json:"action,omitempty"`
	// MaxBackoff caps the wait between two corrections of a Contested object with action
	// Backoff. Defaults to 5m.
	// +optional
	MaxBackoff *metav1.Duration `json:"maxBackoff,omitempty"`
}

// ServiceDriftPolicy overrides the service set's drift policy for one service.
type ServiceDriftPolicy struct {
	// Action overrides the service set's drift action.
	// +optional
	Action DriftAction `json:"action,omitempty"`
	// Disabled opts the service out of drift handling: its objects are deployed and updated
	// when the declaration changes, but changes made on the cluster are neither reported nor
	// corrected.
	// +optional
	Disabled bool `json:"disabled,omitempty"`
	// Ignore adds rules to the service set's, for this service's objects.
	// +kubebuilder:validation:MaxItems=64
	// +listType=atomic
	// +optional
	Ignore []IgnoreRule `json:"ignore,omitempty"`
	// Prevention overrides the service set's drift.prevention for this service. A service
	// that opted out of drift handling (disabled) is never covered.
	// +optional
	Prevention PreventionMode `json:"prevention,omitempty"`
}

// NotificationType is the receiver of an outbound notification, and so its format and how it is
// sent. docs/notifications.md lists the Secret keys each type reads.
// +kubebuilder:validation:Enum=Webhook;Slack;MSTeams;Discord;GoogleChat;Mattermost;Telegram;Email;PagerDuty;Opsgenie;Alertmanager;Grafana;CloudEvents;GitHub;GitLab;Gitea;Bitbucket
type NotificationType string

const (
	// NotificationWebhook posts Holdfast's JSON event, signed with HMAC-SHA256 when the Secret
	// has a key named hmacKey (headers X-Holdfast-Timestamp and X-Holdfast-Signature: v1=<hex>; see docs/notifications.md).
	NotificationWebhook NotificationType = "Webhook"
	// NotificationSlack posts a Slack-compatible message ({"text": ...}) to an incoming webhook.
	NotificationSlack NotificationType = "Slack"
	// NotificationMSTeams posts an Adaptive Card to a Microsoft Teams Workflows webhook.
	NotificationMSTeams NotificationType = "MSTeams"
	// NotificationDiscord posts a message to a Discord channel webhook.
	NotificationDiscord NotificationType = "Discord"
	// NotificationGoogleChat posts a message to a Google Chat space webhook.
	NotificationGoogleChat NotificationType = "GoogleChat"
	// NotificationMattermost posts a message to a Mattermost incoming webhook.
	NotificationMattermost NotificationType = "Mattermost"
	// NotificationTelegram sends a message to a Telegram chat through a bot (sendMessage).
	NotificationTelegram NotificationType = "Telegram"
	// NotificationEmail sends a plain-text mail through an SMTP server, with STARTTLS.
	NotificationEmail NotificationType = "Email"
	// NotificationPagerDuty triggers and resolves PagerDuty incidents (Events API v2).
	NotificationPagerDuty NotificationType = "PagerDuty"
	// NotificationOpsgenie creates and closes Opsgenie alerts (Alert API v2).
	NotificationOpsgenie NotificationType = "Opsgenie"
	// NotificationAlertmanager posts alerts to a Prometheus Alertmanager (API v2).
	NotificationAlertmanager NotificationType = "Alertmanager"
	// NotificationGrafana creates a Grafana annotation per event.
	NotificationGrafana NotificationType = "Grafana"
	// NotificationCloudEvents posts Holdfast's JSON event as a CloudEvent over HTTP, in binary
	// (default) or structured mode.
	NotificationCloudEvents NotificationType = "CloudEvents"
	// NotificationGitHub sets a commit status on GitHub (or GitHub Enterprise Server) for the
	// commit a rollout's Git-sourced templates were rendered from.
	NotificationGitHub NotificationType = "GitHub"
	// NotificationGitLab sets a commit status on GitLab for a rollout's commit.
	NotificationGitLab NotificationType = "GitLab"
	// NotificationGitea sets a commit status on Gitea or Forgejo for a rollout's commit.
	NotificationGitea NotificationType = "Gitea"
	// NotificationBitbucket sets a build status on Bitbucket Cloud for a rollout's commit.
	NotificationBitbucket NotificationType = "Bitbucket"
)

// NotificationTarget is where drift notifications of a service set go.
type NotificationTarget struct {
	// Name identifies the target in events and metrics.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// Type defaults to Webhook.
	// +kubebuilder:default=Webhook
	// +optional
	Type NotificationType `json:"type,omitempty"`
	// SecretRef names the Secret holding the target's address and credentials: key `url` (the
	// receiver's address; required unless the type has a public default) and the keys of its
	// type (e.g. `hmacKey` for Webhook, `token` for Telegram and Grafana, `routingKey` for
	// PagerDuty, `from` and `to` for Email; docs/notifications.md lists them). Its values never
	// appear in status, events or logs.
	SecretRef SecretReference `json:"secretRef"`
}

// SecretReference names a Secret on the hub.
type SecretReference struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace"`
}
