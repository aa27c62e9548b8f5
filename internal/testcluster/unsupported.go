//go:build !unix

package testcluster

import (
	"context"
	"errors"
)

var errUnsupported = errors.New("the local test cluster runs on Linux and other Unix systems only; point HELMRELEASE_TEST_KUBECONFIG at another cluster, e.g. kind")

// Build is not supported here.
func Build(context.Context, BuildOptions) (string, error) { return "", errUnsupported }

// Start is not supported here.
func Start(context.Context, Options) (*Cluster, error) { return nil, errUnsupported }

// Stop is not supported here.
func Stop(string) error { return errUnsupported }

// Running is not supported here.
func Running(string) *Cluster { return nil }

// Stop is not supported here.
func (c *Cluster) Stop() error { return errUnsupported }

// StopComponent is not supported here.
func (c *Cluster) StopComponent(string) error { return errUnsupported }

// StartComponent is not supported here.
func (c *Cluster) StartComponent(context.Context, string) error { return errUnsupported }
