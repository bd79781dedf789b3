//go:build tools

// Package tools only records the main package build.sh compiles, so that
// `go mod tidy` keeps every module it needs in go.sum. It is never built.
package tools

import (
	_ "github.com/aws/karpenter-provider-aws/cmd/controller"
)
