//go:build tools

// Package tools only records the main packages build.sh compiles, so that
// `go mod tidy` keeps every module they need in go.sum. It is never built.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
