package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo"
)

// helmProviderDefault is where HashiCorp's helm provider is looked for,
// from the repository root, unless HELMRELEASE_BENCH_HELM_PROVIDER names it.
const helmProviderDefault = "../shared/bin/terraform-provider-helm"

// comparedChart is a chart both providers install: from a repository (url
// set) or a local directory, with values that change every object.
type comparedChart struct {
	name      string // the table's title
	url       string // repository; empty for a local chart
	chart     string // chart name in the repository, or its directory
	version   string
	namespace string
	// values is an HCL expression of the values, given var.message; a new
	// message changes every object.
	values string
	// loaded is the chart, which the API floor renders.
	loaded *helm.Chart
}

// compare runs the same steps with HashiCorp's helm provider and with this
// provider, writing by server-side apply (its default) and client-side,
// on one cluster in one run, and prints each step's wall time, the ratio
// of each of this provider's to the helm provider's, and the API requests
// of each, by verb and resource; first, the API floor of the chart's
// objects (apiFloor), and each provider's writes as a ratio to it.
func compare(tf terraform, helmProvider, kubeconfig string, c comparedChart) error {
	type side struct {
		label    string
		tf       terraform
		config   string
		measures []measure
		requests []string
	}
	helmTF := tf
	helmTF.dir, helmTF.provider = filepath.Join(tf.dir, "helm"), helmProvider
	source := fmt.Sprintf("repository = %q\n  chart      = %q\n  version    = %q", c.url, c.chart, c.version)
	ourChart := fmt.Sprintf("{ repository = %q, name = %q, version = %q }", c.url, c.chart, c.version)
	if c.url == "" {
		source = fmt.Sprintf("chart = %q", c.chart)
		ourChart = fmt.Sprintf("{ name = %q }", c.chart)
	}
	ours := func(label, dir string, ssa bool) *side {
		ourTF := tf
		ourTF.dir = filepath.Join(tf.dir, dir)
		return &side{label: label, tf: ourTF, config: fmt.Sprintf(`terraform {
  required_providers {
    helmrelease = { source = "helmrelease/helmrelease" }
  }
}

variable "message" {
  default = "hello"
}

provider "helmrelease" {
  kubernetes = { config_path = %q }
  cache_dir  = %q
}

resource "helmrelease_release" "r" {
  name            = "r"
  namespace       = %q
  chart           = %s
  values          = %s
  install         = { create_namespace = true, server_side_apply = %t }
  drift_detection = { mode = "enabled" }
  timeout         = "15m"
}
`, kubeconfig, filepath.Join(ourTF.dir, "cache"), c.namespace+"-"+dir, ourChart, c.values, ssa)}
	}
	sides := []*side{
		{label: "helm provider", tf: helmTF, config: fmt.Sprintf(`terraform {
  required_providers {
    helm = { source = "hashicorp/helm" }
  }
}

variable "message" {
  default = "hello"
}

provider "helm" {
  kubernetes = { config_path = %q }
}

resource "helm_release" "r" {
  name             = "r"
  namespace        = %q
  create_namespace = true
  %s
  values           = [yamlencode(%s)]
  timeout          = 900
}
`, kubeconfig, c.namespace+"-helm", source, c.values)},
		ours("this provider, server-side", "ssa", true),
		ours("this provider, client-side", "csa", false),
	}
	steps := []struct {
		name  string
		args  []string
		exit  int
		floor int // the API floor's write of the same objects (floorCreate…), or -1
	}{
		{"apply (install, wait)", []string{"apply", "-auto-approve", "-input=false"}, 0, floorCreate},
		{"plan, no change", []string{"plan", "-input=false", "-detailed-exitcode"}, 0, -1},
		{"plan, every object changed", []string{"plan", "-input=false", "-detailed-exitcode", "-var", "message=changed"}, 2, -1},
		{"apply, every object changed", []string{"apply", "-auto-approve", "-input=false", "-var", "message=changed"}, 0, floorChange},
		{"destroy", []string{"destroy", "-auto-approve", "-input=false", "-var", "message=changed"}, 0, floorDelete},
	}
	floor, err := measureFloor(tf, kubeconfig, c)
	if err != nil {
		return fmt.Errorf("the API floor: %w", err)
	}
	for _, s := range sides {
		if err := os.MkdirAll(s.tf.dir, 0o750); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(s.tf.dir, "main.tf"), []byte(s.config), 0o600); err != nil {
			return err
		}
		for _, step := range steps {
			before, err := s.tf.api.byRequest()
			if err != nil {
				return err
			}
			m, err := s.tf.run(step.args, step.exit)
			if err != nil {
				return fmt.Errorf("%s, %s: %w", s.label, step.name, err)
			}
			after, err := s.tf.api.byRequest()
			if err != nil {
				return err
			}
			s.measures = append(s.measures, m)
			s.requests = append(s.requests, requestsBetween(before, after))
		}
	}
	fmt.Printf("\n%s: HashiCorp's helm provider beside this provider (drift detection on), one cluster, one run; %d CPUs; wall clock, the provider's peak RSS, API requests net of the cluster's idle rate; the API floor's write of the same objects, and each provider's time as a multiple of it\n", c.name, runtime.NumCPU())
	floor.print()
	ms := func(d time.Duration) string { return d.Round(10 * time.Millisecond).String() }
	for _, o := range sides[1:] {
		fmt.Printf("\n%s\n%-30s %10s %10s %10s %10s %10s %10s %10s %10s %8s %8s\n", o.label, "step", "floor", "helm", "this", "this/helm", "helm/floor", "this/floor", "helm req", "this req", "helm MB", "this MB")
		for i, step := range steps {
			h, m := sides[0].measures[i], o.measures[i]
			floorWall, helmRatio, thisRatio := "", "", ""
			if step.floor >= 0 {
				f := floor.best(step.floor)
				floorWall = ms(f)
				helmRatio = fmt.Sprintf("%.1fx", h.wall.Seconds()/f.Seconds())
				thisRatio = fmt.Sprintf("%.1fx", m.wall.Seconds()/f.Seconds())
			}
			fmt.Printf("%-30s %10s %10s %10s %9.2fx %10s %10s %10.0f %10.0f %8.1f %8.1f\n", step.name, floorWall, ms(h.wall), ms(m.wall),
				m.wall.Seconds()/h.wall.Seconds(), helmRatio, thisRatio, h.requests, m.requests, float64(h.rss)/(1<<20), float64(m.rss)/(1<<20))
		}
	}
	fmt.Println("\nAPI requests by verb and resource (those that grew by 10 or more):")
	for i, step := range steps {
		for _, s := range sides {
			fmt.Printf("  %-30s %-14s %s\n", step.name, s.label, s.requests[i])
		}
	}
	return nil
}

// bigChartServer serves the chart of objects objects (crds CRDs among
// them) as big 1.0.0 from a repository of its own.
func bigChartServer(objects, crds int) (*testrepo.IndexServer, error) {
	archive, digest, err := testrepo.Archive(testrepo.BigChart(objects, crds, 1<<20))
	if err != nil {
		return nil, err
	}
	return testrepo.NewIndexServer(testrepo.WithChart(testrepo.SyntheticIndex(1, 1), "big", "1.0.0", "charts/big.tgz", digest), "charts/big.tgz", archive), nil
}
