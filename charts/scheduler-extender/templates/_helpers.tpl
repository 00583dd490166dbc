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
{{- include "extender.validateHost" . -}}
{{- end -}}

{{/* extraArgs come after the chart's own flags, and a later flag wins: a --host there decides where the verbs
listen. Anywhere but loopback they need mutual TLS, which only the standalone layout sets up (and extraArgs
must not take it away). */}}
{{- define "extender.validateHost" -}}
{{- $args := .Values.extraArgs -}}
{{- $host := "" -}}
{{- $tlsCleared := false -}}
{{- range $i, $raw := $args -}}
{{- $arg := toString $raw -}}
{{- if hasPrefix "--host=" $arg -}}
{{- $host = trimPrefix "--host=" $arg -}}
{{- else if and (eq $arg "--host") (lt (add1 $i) (len $args)) -}}
{{- $host = toString (index $args (add1 $i)) -}}
{{- end -}}
{{- range $flag := list "--tls-cert-file" "--tls-key-file" "--client-ca-file" -}}
{{- if or (eq $arg (printf "%s=" $flag)) (and (eq $arg $flag) (or (ge (add1 $i) (len $args)) (eq (toString (index $args (add1 $i))) ""))) -}}
{{- $tlsCleared = true -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if and $host (not (has $host (list "127.0.0.1" "::1" "[::1]" "localhost"))) -}}
{{- if include "extender.sidecar" . -}}
{{- fail (printf "extraArgs: --host=%s would serve the verbs on the pod's address without mutual TLS; the sidecar layout keeps them on 127.0.0.1 (use layout=standalone, which serves them over mutual TLS, for callers outside the pod)" $host) -}}
{{- else if $tlsCleared -}}
{{- fail (printf "extraArgs: --host=%s with a TLS flag emptied would serve the verbs without mutual TLS" $host) -}}
{{- end -}}
{{- end -}}
{{- end -}}
