//go:build tools

// Package tools pins the main packages that tests/k8s/build compiles, so that
// `go mod tidy` keeps their dependencies in go.mod/go.sum.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
