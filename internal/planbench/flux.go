package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/testcluster"
)

// fluxReleases are Flux's controllers running for -engine flux, and a
// reader of the HelmReleases they reconcile.
type fluxReleases struct {
	flux *testcluster.Flux
	dyn  dynamic.Interface
}

var helmReleases = schema.GroupVersionResource{Group: "helm.toolkit.fluxcd.io", Version: "v2", Resource: "helmreleases"}

// startFlux starts source-controller and the newest helm-controller of
// testcluster.FluxVersions, each with its flags of args added.
func startFlux(ctx context.Context, kubeconfig, work string, args map[string][]string) (*fluxReleases, error) {
	all, err := testcluster.FluxVersions()
	if err != nil {
		return nil, err
	}
	versions := all[testcluster.HelmController]
	f, err := testcluster.StartFluxWith(ctx, testcluster.FluxOptions{Kubeconfig: kubeconfig, Dir: filepath.Join(work, "flux"), Log: os.Stderr, Args: args}, versions[len(versions)-1])
	if err != nil {
		return nil, err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		f.Stop()
		return nil, err
	}
	return &fluxReleases{flux: f, dyn: dynamic.NewForConfigOrDie(cfg)}, nil
}

func (f *fluxReleases) stop() { f.flux.Stop() }

// reconcileTime is the longest time a HelmRelease of namespace took from
// since (the apply's start) to the controller's Ready. It waits until n
// HelmReleases are Ready: an apply with flux.wait = false returns before.
func (f *fluxReleases) reconcileTime(ctx context.Context, namespace string, since time.Time, n int) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Minute)
	defer cancel()
	for {
		slowest, ready, err := f.readyTimes(ctx, namespace, since)
		if err != nil || ready >= n {
			return slowest, err
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("%d of %d HelmReleases ready: %w", ready, n, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// readyTimes is the longest time from since to a Ready HelmRelease of
// namespace, and how many are Ready.
func (f *fluxReleases) readyTimes(ctx context.Context, namespace string, since time.Time) (time.Duration, int, error) {
	list, err := f.dyn.Resource(helmReleases).Namespace(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, 0, fmt.Errorf("listing HelmReleases: %w", err)
	}
	var slowest time.Duration
	ready := 0
	for _, hr := range list.Items {
		conds, _, _ := unstructured.NestedSlice(hr.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] != "Ready" || m["status"] != "True" {
				continue
			}
			at, err := time.Parse(time.RFC3339, fmt.Sprint(m["lastTransitionTime"]))
			if err != nil {
				return 0, 0, fmt.Errorf("HelmRelease %s: Ready time: %w", hr.GetName(), err)
			}
			slowest = max(slowest, at.Sub(since))
			ready++
		}
	}
	return slowest, ready, nil
}
