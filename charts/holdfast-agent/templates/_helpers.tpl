{{/* The agent's Deployment selects its pods by these two labels only, the ones `holdfast cluster
add --pull` has always given them: a Deployment's selector cannot change, and an agent installed
by an earlier release is upgraded in place. */}}
{{- define "holdfast-agent.selectorLabels" -}}
app.kubernetes.io/name: holdfast-agent
app.kubernetes.io/part-of: holdfast
{{- end -}}

{{- define "holdfast-agent.labels" -}}
{{ include "holdfast-agent.selectorLabels" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* The Secret holding the hub kubeconfig (and the agent's own token): the chart's, or the
user's. */}}
{{- define "holdfast-agent.hubSecret" -}}
{{- default "holdfast-agent-hub" .Values.hub.existingSecret -}}
{{- end -}}

{{- define "holdfast-agent.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/* What values.schema.json cannot say in a readable message. */}}
{{- define "holdfast-agent.validate" -}}
{{- if and (not .Values.hub.kubeconfig) (not .Values.hub.existingSecret) -}}
{{- fail "hub.kubeconfig or hub.existingSecret is required: the kubeconfig holdfast cluster add --pull --hub-kubeconfig-only issues (--set-file hub.kubeconfig=FILE), or a Secret holding it under the key kubeconfig" -}}
{{- end -}}
{{- if and .Values.hub.kubeconfig .Values.hub.existingSecret -}}
{{- fail "hub.kubeconfig and hub.existingSecret are both set: the chart writes the kubeconfig to its own Secret, or uses yours, not both" -}}
{{- end -}}
{{- end -}}
