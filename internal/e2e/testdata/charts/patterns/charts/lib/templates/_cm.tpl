{{- define "lib.configmap" -}}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .name }}
  labels: {env: {{ .root.Values.global.env | quote }}}
data:
{{ toYaml .data | indent 2 }}
{{- end -}}
