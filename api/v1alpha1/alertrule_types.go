package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AlertEventType names a kind of event an AlertRule may select: the drift events of
// notifications (DriftDetected, DriftCorrected, Contested, Resumed, CorrectionFailed), the
// rollout's (RolloutProgressing, RolloutHalted, RolloutComplete) and a cluster's (ClusterUnreachable, Unhealthy).
// +kubebuilder:validation:Enum=DriftDetected;DriftCorrected;Contested;Resumed;CorrectionFailed;RolloutProgressing;RolloutHalted;RolloutComplete;ClusterUnreachable;Unhealthy
type AlertEventType string

// AlertSeverity is how urgent an event is: info (Holdfast did what it is for), warning (a drift
// left waiting), error (Holdfast cannot keep what is declared without someone's help).
// +kubebuilder:validation:Enum=info;warning;error
type AlertSeverity string

// AlertTarget is where an AlertRule sends: a notification target of any type, whose Secret is
// in the rule's own namespace.
type AlertTarget struct {
	// Name identifies the target in events and metrics.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// Type defaults to Webhook; docs/notifications.md lists the types and their Secret keys.
	// +kubebuilder:default=Webhook
	// +optional
	Type NotificationType `json:"type,omitempty"`
	// SecretRef names the Secret, in the rule's namespace, that holds the target's address and
	// credentials. They never appear in status, events or logs.
	SecretRef LocalObjectReference `json:"secretRef"`
}

// AlertRuleSpec selects events of service sets and says where they go.
type AlertRuleSpec struct {
	// ServiceSetSelector selects service sets by their labels (a ServiceSet's own labels, for a
	// tenant's). Empty selects every service set the rule may see: a rule in a platform
	// namespace sees every MultiClusterService and ServiceSet, a rule in any other namespace
	// only the ServiceSets of its namespace.
	// +optional
	ServiceSetSelector *metav1.LabelSelector `json:"serviceSetSelector,omitempty"`
	// EventTypes are the kinds of event the rule sends; empty sends every kind.
	// +kubebuilder:validation:MaxItems=16
	// +listType=set
	// +optional
	EventTypes []AlertEventType `json:"eventTypes,omitempty"`
	// Severity is the least severity sent (info sends everything). Defaults to info.
	// +kubebuilder:default=info
	// +optional
	Severity AlertSeverity `json:"severity,omitempty"`
	// Exclusions are regular expressions (RE2); an event whose one-line description (its type,
	// service set, cluster, object and message, as `kubectl describe` of the rule shows under
	// its last sent event) matches any of them is not sent.
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=1024
	// +listType=atomic
	// +optional
	Exclusions []string `json:"exclusions,omitempty"`
	// Summary is a line sent with each of the rule's events, e.g. which environment they are of.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Summary string `json:"summary,omitempty"`
	// RateLimit is the window in which one event per (rule, object, kind of event) is sent: a
	// flapping object sends its first event, and the next one after the window says how many
	// were held back meanwhile. 0s sends every event. Defaults to 5m.
	// +kubebuilder:default="5m"
	// +optional
	RateLimit *metav1.Duration `json:"rateLimit,omitempty"`
	// Targets are where the events go.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	// +listType=map
	// +listMapKey=name
	Targets []AlertTarget `json:"targets"`
	// Suspend stops the rule sending; events meanwhile are not sent later.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
}

// AlertRuleStatus is the observed state of an AlertRule.
type AlertRuleStatus struct {
	// Conditions: Ready says whether every target can be used and every exclusion compiles;
	// its message names what to fix.
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// ObservedGeneration is the generation the status was computed from.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,categories=holdfast,shortName=hfar
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Severity",type=string,JSONPath=`.spec.severity`
// +kubebuilder:printcolumn:name="Suspended",type=boolean,JSONPath=`.spec.suspend`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// AlertRule sends the events of the service sets it selects, across the fleet, to notification
// targets: filtered by kind and severity, with exclusions, and at most one message per object
// and kind of event in each rate-limit window. A service set's own spec.notifications work
// beside it, unchanged. docs/notifications.md describes it.
type AlertRule struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   AlertRuleSpec   `json:"spec,omitempty"`
	Status AlertRuleStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// AlertRuleList is a list of AlertRules.
type AlertRuleList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AlertRule `json:"items"`
}

// GetConditions returns the rule's conditions.
func (r *AlertRule) GetConditions() []metav1.Condition { return r.Status.Conditions }

// SetConditions replaces the rule's conditions.
func (r *AlertRule) SetConditions(c []metav1.Condition) { r.Status.Conditions = c }
