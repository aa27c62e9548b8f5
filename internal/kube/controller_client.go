package kube

import (
	"fmt"
	"sync"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// discardControllerRuntimeLog sets controller-runtime's process-wide
// logger once.
var discardControllerRuntimeLog sync.Once

// NewControllerClient is controller-runtime's client of cfg, logging
// nothing: controller-runtime's default logger keeps every logger made
// from it until a process-wide one is set, and prints a stack trace
// after 30 s that none was; the process logs nothing through it.
func NewControllerClient(cfg *rest.Config, opts client.Options) (client.Client, error) {
	discardControllerRuntimeLog.Do(func() { ctrllog.SetLogger(logr.Discard()) })
	opts.Log = logr.Discard()
	c, err := client.New(cfg, opts)
	if err != nil {
		return nil, fmt.Errorf("creating Kubernetes client: %w", err)
	}
	return c, nil
}
