//go:build tools

// Package certmanager pins cert-manager's module, whose Helm chart
// (deploy/charts/cert-manager) the end-to-end tests install from the
// module cache: an operator whose CRDs another release's objects use.
package certmanager

import _ "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
