{{/* The name of every object the chart creates: the release name, unless it already says holdfast. */}}
{{- define "holdfast.fullname" -}}
{{- if contains "holdfast" .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-holdfast" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "holdfast.selectorLabels" -}}
app.kubernetes.io/name: holdfast
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "holdfast.labels" -}}
{{ include "holdfast.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: holdfast
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "holdfast.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "holdfast.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The name of the metrics port, in the Deployment and the Service: its protocol. */}}
{{- define "holdfast.metricsPortName" -}}
{{- if .Values.metrics.secure -}}https{{- else -}}http{{- end -}}
{{- end -}}

{{- define "holdfast.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/* The generated RBAC (files/rbac/role.yaml, from the controller's kubebuilder markers), one
document of the given kind: the ClusterRole, or the Role of the controller's own namespace. */}}
{{- define "holdfast.generatedRules" -}}
{{- $kind := .kind -}}
{{- $rules := list -}}
{{- range $doc := regexSplit "(?m)^---\\s*$" (.root.Files.Get "files/rbac/role.yaml") -1 -}}
{{- $obj := fromYaml $doc -}}
{{- if and $obj (eq (get $obj "kind") $kind) -}}
{{- $rules = concat $rules $obj.rules -}}
{{- end -}}
{{- end -}}
{{- toYaml $rules -}}
{{- end -}}
