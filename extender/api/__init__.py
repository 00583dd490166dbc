"""The HTTP layer: kube-scheduler's extender wire protocol, health, metrics and OpenAPI docs."""
