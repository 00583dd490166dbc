{{/* The chart's name (nameOverride). */}}
{{- define "extender.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The release's full name: every object is named after it. */}}
{{- define "extender.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "extender.sidecar" -}}
{{- if eq .Values.layout "sidecar" -}}true{{- end -}}
{{- end -}}

{{- define "extender.component" -}}
{{- if include "extender.sidecar" . -}}scheduler{{- else -}}extender{{- end -}}
{{- end -}}

{{/* Labels that select the pods: stable across upgrades. */}}
{{- define "extender.selectorLabels" -}}
app.kubernetes.io/name: {{ include "extender.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: {{ include "extender.component" . }}
{{- end -}}

{{- define "extender.labels" -}}
{{ include "extender.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "extender.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* featureGates as kube-scheduler's --feature-gates list: Name=true,Other=false (by name). */}}
{{- define "extender.featureGates" -}}
{{- $gates := list -}}
{{- range $name, $on := .Values.featureGates -}}
{{- $gates = append $gates (printf "%s=%t" $name $on) -}}
{{- end -}}
{{- join "," $gates -}}
{{- end -}}

{{- define "extender.replicas" -}}
{{- if kindIs "invalid" .Values.replicas -}}
{{- if include "extender.sidecar" . -}}1{{- else -}}2{{- end -}}
{{- else -}}
{{- .Values.replicas -}}
{{- end -}}
{{- end -}}

{{/* "true" when the extender creates Bindings (bind: null means: the sidecar does, standalone does not). */}}
{{- define "extender.bind" -}}
{{- if kindIs "invalid" .Values.bind -}}
{{- include "extender.sidecar" . -}}
{{- else if .Values.bind -}}true
{{- end -}}
{{- end -}}

{{- define "extender.schedulerName" -}}
{{- default (include "extender.fullname" .) .Values.scheduler.schedulerName -}}
{{- end -}}

{{- define "extender.tlsSecret" -}}
{{- default (printf "%s-tls" (include "extender.fullname" .)) .Values.tls.secretName -}}
{{- end -}}

{{/* Refuse values that would expose the verbs or cannot work. */}}
{{- define "extender.validate" -}}
{{- if not (has .Values.layout (list "sidecar" "standalone")) -}}
{{- fail (printf "layout must be sidecar or standalone, not %q" (toString .Values.layout)) -}}
{{- end -}}
{{- if eq (int .Values.port) (int .Values.healthPort) -}}
{{- fail "port and healthPort must differ: the health port serves probes and metrics without authentication" -}}
{{- end -}}
{{- end -}}
