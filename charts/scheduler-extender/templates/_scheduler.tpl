{{/* The sidecar kube-scheduler's KubeSchedulerConfiguration. */}}
{{- define "extender.schedulerConfig" -}}
{{- $ext := .Values.scheduler.extender -}}
{{- $name := include "extender.schedulerName" . -}}
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: {{ .Values.scheduler.leaderElect }}
  resourceName: {{ $name }}
  resourceNamespace: {{ .Release.Namespace }}
profiles:
  - schedulerName: {{ $name }}
extenders:
  - urlPrefix: http://127.0.0.1:{{ .Values.port }}{{ with $ext.profile }}/profiles/{{ . }}{{ end }}
    filterVerb: filter
    prioritizeVerb: prioritize
    {{- if include "extender.bind" . }}
    bindVerb: bind
    {{- end }}
    {{- if $ext.preempt }}
    preemptVerb: preempt
    {{- end }}
    weight: {{ $ext.weight }}
    nodeCacheCapable: {{ $ext.nodeCacheCapable }}
    ignorable: {{ $ext.ignorable }}
    httpTimeout: {{ $ext.httpTimeout }}
    enableHTTPS: false
{{- end -}}
