package helm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"helm.sh/helm/v4/pkg/kube"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/yaml"
)

// CRDOptions of ApplyCRDs.
type CRDOptions struct {
	// Replace updates CRDs that exist (CreateReplace); otherwise they are
	// left as they are (Create).
	Replace bool
	// Labels are set on every CRD (origin labels).
	Labels map[string]string
	// Timeout bounds the wait for the CRDs to be established.
	Timeout time.Duration
}

// ApplyCRDs creates the chart's CRDs (crds/ directories, subcharts
// included) that do not exist and, with Replace, replaces those that do.
// CRDs are never deleted. It waits until they are established and resets
// the REST mapper so that the chart's custom resources can be mapped.
func (c *Client) ApplyCRDs(chart *Chart, o CRDOptions) error {
	crds := chart.CRDObjects()
	if len(crds) == 0 {
		return nil
	}
	var all []*resource.Info
	for _, crd := range crds {
		infos, err := c.cfg.KubeClient.Build(bytes.NewReader(crd.File.Data), false)
		if err != nil {
			return fmt.Errorf("reading CRD %s: %w", crd.Filename, err)
		}
		for _, info := range infos {
			if err := setLabels(info, o.Labels); err != nil {
				return err
			}
			helper := resource.NewHelper(info.Client, info.Mapping)
			existing, err := helper.Get(info.Namespace, info.Name)
			if apierrors.IsNotFound(err) {
				_, err = helper.Create(info.Namespace, true, info.Object)
				if err == nil {
					continue
				}
				if !apierrors.IsAlreadyExists(err) {
					return fmt.Errorf("creating CRD %s: %w", info.Name, err)
				}
				// Created since the read by another writer (releases of
				// charts that share CRDs, applied at once): it exists, as
				// Helm takes a CRD that already exists.
				existing, err = helper.Get(info.Namespace, info.Name)
			}
			switch {
			case err != nil:
				return fmt.Errorf("reading CRD %s: %w", info.Name, err)
			case o.Replace:
				// Another writer may replace it at the same moment: read
				// it again and retry on a conflict.
				err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
					if existing == nil {
						if existing, err = helper.Get(info.Namespace, info.Name); err != nil {
							return err
						}
					}
					acc, err := meta.Accessor(existing)
					if err != nil {
						return err
					}
					target, err := meta.Accessor(info.Object)
					if err != nil {
						return err
					}
					target.SetResourceVersion(acc.GetResourceVersion())
					existing = nil
					_, err = helper.Replace(info.Namespace, info.Name, true, info.Object)
					return err
				})
				if err != nil {
					return fmt.Errorf("replacing CRD %s: %w", info.Name, err)
				}
			}
		}
		all = append(all, infos...)
	}
	// Helm's legacy waiter waits for CRDs to be established.
	w, err := c.kube.Client.GetWaiter(kube.LegacyStrategy)
	if err != nil {
		return fmt.Errorf("waiting for CRDs to be established: %w", err)
	}
	if err := w.Wait(all, o.Timeout); err != nil {
		return fmt.Errorf("waiting for CRDs to be established: %w", err)
	}
	if mapper, err := c.cfg.RESTClientGetter.ToRESTMapper(); err == nil {
		if r, ok := mapper.(meta.ResettableRESTMapper); ok {
			r.Reset()
		}
	}
	if dc, err := c.cfg.RESTClientGetter.ToDiscoveryClient(); err == nil {
		dc.Invalidate()
	}
	// .Capabilities of the next render must have the new kinds, as in a
	// Helm install, which reads them after creating the CRDs.
	c.cfg.Capabilities = nil
	return nil
}

// CRDsToWrite is every CRD ApplyCRDs applies with o, as a YAML stream,
// labelled as ApplyCRDs labels them: without Replace, it creates those
// that do not exist when it runs. Which exist is not asked here: another
// release may create them between a plan and its apply.
func (c *Client) CRDsToWrite(chart *Chart, o CRDOptions) (string, error) {
	var b strings.Builder
	for _, crd := range chart.CRDObjects() {
		infos, err := c.cfg.KubeClient.Build(bytes.NewReader(crd.File.Data), false)
		if err != nil {
			return "", fmt.Errorf("reading CRD %s: %w", crd.Filename, err)
		}
		for _, info := range infos {
			if err := setLabels(info, o.Labels); err != nil {
				return "", err
			}
			y, err := yaml.Marshal(info.Object)
			if err != nil {
				return "", fmt.Errorf("encoding CRD %s: %w", info.Name, err)
			}
			b.WriteString("---\n")
			b.Write(y)
		}
	}
	return b.String(), nil
}

func setLabels(info *resource.Info, labels map[string]string) error {
	if len(labels) == 0 {
		return nil
	}
	acc, err := meta.Accessor(info.Object)
	if err != nil {
		return fmt.Errorf("labelling %s: %w", info.Name, err)
	}
	l := acc.GetLabels()
	if l == nil {
		l = map[string]string{}
	}
	for k, v := range labels {
		l[k] = v
	}
	acc.SetLabels(l)
	return nil
}

// CRDKinds are the kinds, at each served version, that the CRDs of the
// chart's crds/ directories (subcharts included) define.
func CRDKinds(chart *Chart) ([]schema.GroupVersionKind, error) {
	var out []schema.GroupVersionKind
	for _, f := range chart.CRDObjects() {
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(f.File.Data), 4096)
		for {
			var crd apiextv1.CustomResourceDefinition
			if err := dec.Decode(&crd); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				return nil, fmt.Errorf("reading CRD file %s: %w", f.Filename, err)
			}
			if crd.Kind != "CustomResourceDefinition" {
				continue
			}
			for _, v := range crd.Spec.Versions {
				if v.Served {
					out = append(out, schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind})
				}
			}
		}
	}
	return out, nil
}
