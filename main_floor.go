//go:build floor

package main

import "github.com/helmrelease/terraform-provider-helmrelease/internal/provider"

// Built with -tags floor, the binary serves the floor provider
// (provider.NewFloor): the framework's cost for this provider's schemas.
func init() { newProvider = provider.NewFloor }
