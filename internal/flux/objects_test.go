package flux

import (
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fluxcd/pkg/apis/kustomize"
	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/chartsource"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/postrender"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/values"
)

// TestBuild: what a release is written as, for each kind of source.
func TestBuild(t *testing.T) {
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, []byte("-----BEGIN CERTIFICATE-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	spec := &reconcile.Spec{Name: "web", Namespace: "apps", TargetNamespace: "prod", ForceAt: "f1",
		HealthChecks:  []kustomize.CustomHealthCheck{{APIVersion: "example.com/v1", Kind: "Db", HealthCheckExpressions: kustomize.HealthCheckExpressions{Current: "status.ready"}}},
		Install:       reconcile.InstallSpec{Strategy: reconcile.ActionStrategy{Name: reconcile.StrategyRetryOnFailure, RetryInterval: time.Minute}},
		Upgrade:       reconcile.UpgradeSpec{Remediation: reconcile.Remediation{Retries: 3, Strategy: reconcile.StrategyUninstall}},
		PostRenderers: []postrender.Renderer{{Kustomize: postrender.Kustomize{PatchesStrategicMerge: []string{"kind: Deployment"}}}}}
	for _, tc := range []struct {
		name  string
		chart Chart
		check func(t *testing.T, o *Objects)
	}{{
		name:  "Helm repository with a login",
		chart: Chart{Source: chartsource.Source{Name: "app", Repository: "https://charts.example.com", Auth: chartsource.Auth{Username: "u", Password: "p"}, ValuesFiles: []string{"prod.yaml"}}, Version: "1.2.3"},
		check: func(t *testing.T, o *Objects) {
			repo, ok := o.Source.(*sourcev1.HelmRepository)
			if !ok {
				t.Fatalf("source %T, want a HelmRepository", o.Source)
			}
			// Shared by the namespace's releases of this repository and login.
			if !o.Shared || !strings.HasPrefix(repo.Name, "charts-example-com-") || repo.Labels[SharedLabel] != "true" || repo.Labels[ReleaseLabel] != "" {
				t.Errorf("HelmRepository %s labelled %v (shared %t): want a shared source named by its host", repo.Name, repo.Labels, o.Shared)
			}
			if repo.Spec.URL != "https://charts.example.com" || repo.Spec.SecretRef == nil || repo.Spec.SecretRef.Name != SharedCredentialsName(repo.Name) || repo.Spec.CertSecretRef != nil {
				t.Errorf("HelmRepository spec %+v", repo.Spec)
			}
			if o.Credentials.Name != SharedCredentialsName(repo.Name) || o.Credentials.Labels[SharedLabel] != "true" {
				t.Errorf("credentials Secret %s labelled %v, want the shared source's", o.Credentials.Name, o.Credentials.Labels)
			}
			if string(o.Credentials.Data["username"]) != "u" || string(o.Credentials.Data["password"]) != "p" || o.Credentials.Type != corev1.SecretTypeOpaque {
				t.Errorf("credentials %s %v", o.Credentials.Type, o.Credentials.Data)
			}
			// One HelmChart for the namespace's releases of this chart,
			// version and values files, named by spec.chartRef.
			c, ok := o.Chart.(*sourcev1.HelmChart)
			if !ok || c.Spec.Chart != "app" || c.Spec.Version != "1.2.3" || c.Spec.SourceRef.Kind != sourcev1.HelmRepositoryKind || c.Spec.SourceRef.Name != repo.Name ||
				!reflect.DeepEqual(c.Spec.ValuesFiles, []string{"prod.yaml"}) || c.Spec.Interval.Duration != time.Hour {
				t.Fatalf("HelmChart %+v", o.Chart)
			}
			if !strings.HasPrefix(c.Name, "app-") || c.Labels[SharedLabel] != "true" || c.Labels[ReleaseLabel] != "" {
				t.Errorf("HelmChart %s labelled %v: want a shared HelmChart named by its chart", c.Name, c.Labels)
			}
			if ref := o.HelmRelease.Spec.ChartRef; ref == nil || ref.Kind != sourcev1.HelmChartKind || ref.Name != c.Name || ref.Namespace != "" || o.HelmRelease.Spec.Chart != nil {
				t.Errorf("chartRef %+v, chart template %+v: want the shared HelmChart alone", ref, o.HelmRelease.Spec.Chart)
			}
			if shared := o.sharedObjects(); len(shared) != 3 || shared[2] != o.Chart {
				t.Errorf("shared objects %v, want the credentials, the HelmRepository and the HelmChart", shared)
			}
		},
	}, {
		name:  "OCI registry with a login and a CA",
		chart: Chart{Source: chartsource.Source{Name: "app", Repository: "oci://registry.example.com:5000/charts", Auth: chartsource.Auth{Username: "u", Password: "p", CAFile: ca}}, Version: "1.2.3+0123456789ab", Digest: "sha256:0123456789abcdef"},
		check: func(t *testing.T, o *Objects) {
			repo, ok := o.Source.(*sourcev1.OCIRepository)
			if !ok {
				t.Fatalf("source %T, want an OCIRepository", o.Source)
			}
			if repo.Spec.URL != "oci://registry.example.com:5000/charts/app" || repo.Spec.Reference.Tag != "1.2.3" || repo.Spec.Reference.Digest != "sha256:0123456789abcdef" {
				t.Errorf("OCIRepository url %s ref %+v: want the chart's URL, its version's tag and the planned digest", repo.Spec.URL, repo.Spec.Reference)
			}
			if repo.Spec.SecretRef == nil || repo.Spec.CertSecretRef == nil || o.Credentials.Type != corev1.SecretTypeDockerConfigJson {
				t.Errorf("OCIRepository secretRef %v certSecretRef %v, credentials of type %s", repo.Spec.SecretRef, repo.Spec.CertSecretRef, o.Credentials.Type)
			}
			var config struct {
				Auths map[string]struct{ Username, Password, Auth string }
			}
			if err := json.Unmarshal(o.Credentials.Data[corev1.DockerConfigJsonKey], &config); err != nil || config.Auths["registry.example.com:5000"].Auth != "dTpw" {
				t.Errorf("docker config %s (%v): want the login of the registry's host", o.Credentials.Data[corev1.DockerConfigJsonKey], err)
			}
			if !strings.HasPrefix(string(o.Credentials.Data["ca.crt"]), "-----BEGIN CERTIFICATE") {
				t.Errorf("credentials lack the CA")
			}
			if o.Shared || repo.Name != "web" || o.Credentials.Name != "web-chart-credentials" {
				t.Errorf("OCIRepository %s, credentials %s, shared %t: want the release's own, pinned", repo.Name, o.Credentials.Name, o.Shared)
			}
			if ref := o.HelmRelease.Spec.ChartRef; ref == nil || ref.Kind != sourcev1.OCIRepositoryKind || ref.Name != "web" || o.HelmRelease.Spec.Chart != nil {
				t.Errorf("chartRef %+v, chart %+v", ref, o.HelmRelease.Spec.Chart)
			}
		},
	}, {
		name:  "public repository",
		chart: Chart{Source: chartsource.Source{Name: "app", Repository: "https://charts.example.com"}, Version: "1.0.0"},
		check: func(t *testing.T, o *Objects) {
			if o.Credentials != nil || o.Source.(*sourcev1.HelmRepository).Spec.SecretRef != nil {
				t.Errorf("credentials %v for a repository without any", o.Credentials)
			}
			if got := len(o.List()); got != 4 {
				t.Errorf("%d objects, want source, HelmChart, values Secret and HelmRelease", got)
			}
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := Build(&Release{
				Spec: spec, Chart: tc.chart, Interval: time.Hour, RequestedAt: "f1",
				Values:          map[string]any{"image": map[string]any{"tag": "v1", "pullSecret": "plain"}, "replicas": 2},
				SensitiveValues: map[string]any{"image": map[string]any{"pullSecret": "hidden"}},
				ValuesFrom:      []values.Reference{{Kind: "ConfigMap", Name: "shared"}},
			})
			if err != nil {
				t.Fatal(err)
			}
			hr := o.HelmRelease
			if hr.Spec.Interval.Duration != time.Hour || hr.Spec.TargetNamespace != "prod" || hr.Spec.Upgrade.Remediation.Retries != 3 || string(*hr.Spec.Upgrade.Remediation.Strategy) != "uninstall" {
				t.Errorf("spec %+v", hr.Spec)
			}
			if ws := hr.Spec.WaitStrategy; ws == nil || ws.Name != "poller" || len(hr.Spec.HealthCheckExprs) != 1 || hr.Spec.HealthCheckExprs[0].Current != "status.ready" {
				t.Errorf("wait strategy %+v, health checks %+v: want the poller (the default with health checks) and the check", ws, hr.Spec.HealthCheckExprs)
			}
			if st := hr.Spec.Install.Strategy; st == nil || st.Name != "RetryOnFailure" || st.RetryInterval.Duration != time.Minute || hr.Spec.Upgrade.Strategy != nil {
				t.Errorf("strategies %+v, %+v: want install's RetryOnFailure every minute, upgrade's unset", st, hr.Spec.Upgrade.Strategy)
			}
			if got := hr.Annotations; got[RequestedAtAnnotation] != "f1" || got[ForceAtAnnotation] != "f1" {
				t.Errorf("annotations %v, want the force token with a request of the same value", got)
			}
			if len(hr.Spec.PostRenderers) != 1 || hr.Spec.PostRenderers[0].Kustomize.Patches[0].Patch != "kind: Deployment" {
				t.Errorf("post-renderers %+v, want the strategic merge patch as a patch", hr.Spec.PostRenderers)
			}
			var inline map[string]any
			if err := json.Unmarshal(hr.Spec.Values.Raw, &inline); err != nil {
				t.Fatal(err)
			}
			if want := map[string]any{"image": map[string]any{"tag": "v1"}, "replicas": 2.0}; !reflect.DeepEqual(inline, want) {
				t.Errorf("spec.values %v, want %v: inline values without what sensitive values set", inline, want)
			}
			refs := hr.Spec.ValuesFrom
			if len(refs) != 2 || refs[0].Name != "shared" || refs[1].Name != "web-sensitive-values" || refs[1].Kind != "Secret" {
				t.Errorf("valuesFrom %+v, want the configuration's, then the sensitive values' Secret", refs)
			}
			if doc := string(o.Values.Data[ValuesKey]); !strings.Contains(doc, "hidden") {
				t.Errorf("values Secret %q lacks the sensitive value", doc)
			}
			for _, obj := range o.List() {
				if obj.GetNamespace() != "apps" || obj.GetLabels()[ManagedByLabel] != ManagedBy {
					t.Errorf("%T %s/%s labels %v", obj, obj.GetNamespace(), obj.GetName(), obj.GetLabels())
				}
			}
			tc.check(t, o)
		})
	}
	if _, err := Build(&Release{Spec: spec, Chart: Chart{Source: chartsource.Source{Name: "./chart"}}}); err == nil {
		t.Error("a local chart was built, want an error")
	}
}

// TestWithout: inline values keep what sensitive values do not set, so
// that either order of merging gives the same values.
func TestWithout(t *testing.T) {
	for _, tc := range []struct {
		v, over, want map[string]any
	}{
		{map[string]any{"a": 1, "b": 2}, map[string]any{"a": 3}, map[string]any{"b": 2}},
		{map[string]any{"a": map[string]any{"x": 1, "y": 2}}, map[string]any{"a": map[string]any{"x": 0}}, map[string]any{"a": map[string]any{"y": 2}}},
		{map[string]any{"a": map[string]any{"x": 1}}, map[string]any{"a": map[string]any{"x": 0}}, map[string]any{}},
		{map[string]any{"a": map[string]any{"x": 1}}, map[string]any{"a": "flat"}, map[string]any{}},
		{map[string]any{"a": "flat"}, map[string]any{"a": map[string]any{"x": 1}}, map[string]any{}},
		{map[string]any{"a": []any{1}}, map[string]any{"b": 1}, map[string]any{"a": []any{1}}},
	} {
		got := without(tc.v, tc.over)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("without(%v, %v) = %v, want %v", tc.v, tc.over, got, tc.want)
		}
		// The property the split relies on.
		a := values.Merge(values.Merge(map[string]any{}, tc.v), tc.over)
		b := values.Merge(values.Merge(map[string]any{}, tc.over), got)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("merging %v over %v gives %v, the split gives %v", tc.over, tc.v, a, b)
		}
	}
}

// TestSharedSourceName: releases share a HelmRepository when its URL,
// login, TLS files and interval are the same; a rotated password is the
// same login. The name is a DNS label led by the repository's host.
func TestSharedSourceName(t *testing.T) {
	src := func(url, user, password string) chartsource.Source {
		return chartsource.Source{Name: "app", Repository: url, Auth: chartsource.Auth{Username: user, Password: password}}
	}
	tls := func(ca string) *corev1.Secret { return &corev1.Secret{Data: map[string][]byte{"ca.crt": []byte(ca)}} }
	base := sharedSourceName(src("https://charts.example.com", "u", "p"), nil, time.Hour)
	for _, tc := range []struct {
		name  string
		got   string
		share bool
	}{
		{"same repository and login", sharedSourceName(src("https://charts.example.com", "u", "p"), nil, time.Hour), true},
		{"password rotated", sharedSourceName(src("https://charts.example.com", "u", "p2"), nil, time.Hour), true},
		{"another chart of the repository", sharedSourceName(chartsource.Source{Name: "db", Repository: "https://charts.example.com", Auth: chartsource.Auth{Username: "u", Password: "p"}}, nil, time.Hour), true},
		{"another user", sharedSourceName(src("https://charts.example.com", "v", "p"), nil, time.Hour), false},
		{"no login", sharedSourceName(src("https://charts.example.com", "", ""), nil, time.Hour), false},
		{"another path", sharedSourceName(src("https://charts.example.com/stable", "u", "p"), nil, time.Hour), false},
		{"another interval", sharedSourceName(src("https://charts.example.com", "u", "p"), nil, time.Minute), false},
		{"a CA", sharedSourceName(src("https://charts.example.com", "u", "p"), tls("ca1"), time.Hour), false},
	} {
		if (tc.got == base) != tc.share {
			t.Errorf("%s: %s against %s, want shared %t", tc.name, tc.got, base, tc.share)
		}
	}
	if sharedSourceName(src("https://charts.example.com", "u", "p"), tls("ca1"), time.Hour) == sharedSourceName(src("https://charts.example.com", "u", "p"), tls("ca2"), time.Hour) {
		t.Errorf("two CAs share a source")
	}
	long := sharedSourceName(src("https://"+strings.Repeat("very-long-host.", 8)+"example.com:8443", "u", "p"), nil, time.Hour)
	for _, name := range []string{base, long, sharedSourceName(src("http://127.0.0.1:34567", "", ""), nil, time.Hour)} {
		if len(name) > 63 || !regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`).MatchString(name) {
			t.Errorf("source name %q is not a DNS label", name)
		}
	}
	if !strings.HasPrefix(base, "charts-example-com-") {
		t.Errorf("source name %q does not start with the repository's host", base)
	}
}

// TestBuildGit: a chart from Git is written as the release's own
// GitRepository, pinned to the planned commit where source-controller can
// check it out, with GitRepository's secret keys, and a HelmChart
// template naming it.
func TestBuildGit(t *testing.T) {
	const commit = "0123456789abcdef0123456789abcdef01234567"
	spec := &reconcile.Spec{Name: "web", Namespace: "apps"}
	for _, tc := range []struct {
		ref      chartsource.GitRef
		revision string
		want     sourcev1.GitRepositoryRef
	}{
		{chartsource.GitRef{}, "master@sha1:" + commit, sourcev1.GitRepositoryRef{Branch: "master", Commit: commit}},
		{chartsource.GitRef{Branch: "main"}, "main@sha1:" + commit, sourcev1.GitRepositoryRef{Branch: "main", Commit: commit}},
		{chartsource.GitRef{Tag: "v1.0.0"}, "v1.0.0@sha1:" + commit, sourcev1.GitRepositoryRef{Tag: "v1.0.0"}},
		{chartsource.GitRef{SemVer: ">=1.0.0"}, "v1.2.0@sha1:" + commit, sourcev1.GitRepositoryRef{Tag: "v1.2.0"}},
		{chartsource.GitRef{Name: "refs/heads/main"}, "main@sha1:" + commit, sourcev1.GitRepositoryRef{Branch: "main", Commit: commit}},
		{chartsource.GitRef{Name: "refs/pull/4/head"}, "refs/pull/4/head@sha1:" + commit, sourcev1.GitRepositoryRef{Name: "refs/pull/4/head"}},
		{chartsource.GitRef{Commit: commit}, "sha1:" + commit, sourcev1.GitRepositoryRef{Commit: commit}},
		{chartsource.GitRef{Branch: "main"}, "", sourcev1.GitRepositoryRef{Branch: "main"}},
	} {
		t.Run(tc.ref.String()+" "+tc.revision, func(t *testing.T) {
			src := chartsource.Source{Name: "charts/app", ReconcileStrategy: chartsource.StrategyRevision,
				Git: &chartsource.Git{URL: "ssh://git@example.com/charts.git", Ref: tc.ref, Identity: "KEY", KnownHosts: "example.com ssh-ed25519 AAAA"}}
			o, err := Build(&Release{Spec: spec, Chart: Chart{Source: src, Version: "1.0.0+0123456789ab", SourceRevision: tc.revision}})
			if err != nil {
				t.Fatal(err)
			}
			repo, ok := o.Source.(*sourcev1.GitRepository)
			if !ok {
				t.Fatalf("source %T, want a GitRepository", o.Source)
			}
			if o.Shared || repo.Name != "web" || repo.Labels[ReleaseLabel] != "web" || repo.Spec.URL != src.Git.URL || repo.Spec.Reference == nil || *repo.Spec.Reference != tc.want {
				t.Errorf("GitRepository %s (shared %t) labelled %v: %+v, ref %+v; want the release's own, ref %+v", repo.Name, o.Shared, repo.Labels, repo.Spec, repo.Spec.Reference, tc.want)
			}
			if repo.Spec.SecretRef == nil || repo.Spec.SecretRef.Name != o.Credentials.Name || string(o.Credentials.Data["identity"]) != "KEY" || string(o.Credentials.Data["known_hosts"]) != src.Git.KnownHosts {
				t.Errorf("credentials %v, secretRef %v", o.Credentials.Data, repo.Spec.SecretRef)
			}
			c := o.HelmRelease.Spec.Chart
			if c == nil || c.Spec.Chart != "charts/app" || c.Spec.Version != "" || c.Spec.SourceRef.Kind != sourcev1.GitRepositoryKind || c.Spec.SourceRef.Name != "web" || c.Spec.ReconcileStrategy != "Revision" {
				t.Errorf("chart template %+v", c)
			}
		})
	}
}

// TestBuildBucket: a chart from a bucket is written as the release's own
// Bucket with Bucket's secret keys, and a HelmChart template naming it.
func TestBuildBucket(t *testing.T) {
	src := chartsource.Source{Name: "charts/app", Auth: chartsource.Auth{Username: "AKIA", Password: "secret"},
		Bucket: &chartsource.Bucket{Endpoint: "s3.example.com", BucketName: "charts", Prefix: "charts/", Region: "eu-west-1", Provider: chartsource.BucketAWS}}
	o, err := Build(&Release{Spec: &reconcile.Spec{Name: "web", Namespace: "apps"}, Chart: Chart{Source: src, Version: "1.0.0"}})
	if err != nil {
		t.Fatal(err)
	}
	b, ok := o.Source.(*sourcev1.Bucket)
	if !ok {
		t.Fatalf("source %T, want a Bucket", o.Source)
	}
	want := sourcev1.BucketSpec{Provider: "aws", BucketName: "charts", Endpoint: "s3.example.com", Region: "eu-west-1", Prefix: "charts/", Interval: b.Spec.Interval,
		SecretRef: &meta.LocalObjectReference{Name: o.Credentials.Name}}
	if o.Shared || b.Name != "web" || !reflect.DeepEqual(b.Spec, want) {
		t.Errorf("Bucket %s (shared %t): %+v, want %+v", b.Name, o.Shared, b.Spec, want)
	}
	if string(o.Credentials.Data["accesskey"]) != "AKIA" || string(o.Credentials.Data["secretkey"]) != "secret" || len(o.Credentials.Data) != 2 {
		t.Errorf("credentials %v", o.Credentials.Data)
	}
	if c := o.HelmRelease.Spec.Chart; c == nil || c.Spec.Chart != "charts/app" || c.Spec.SourceRef.Kind != sourcev1.BucketKind || c.Spec.SourceRef.Name != "web" {
		t.Errorf("chart template %+v", c)
	}
}

// TestBuildChartRef: a chart_ref release is its HelmRelease alone (and
// its values Secret), whose spec.chartRef names the object; the
// namespace is written only when it is not the release's.
func TestBuildChartRef(t *testing.T) {
	for _, tc := range []struct {
		ref  chartsource.ChartRef
		want helmv2.CrossNamespaceSourceReference
	}{
		{chartsource.ChartRef{Kind: "OCIRepository", Name: "podinfo", Namespace: "apps"}, helmv2.CrossNamespaceSourceReference{Kind: "OCIRepository", Name: "podinfo"}},
		{chartsource.ChartRef{Kind: "HelmChart", Name: "podinfo", Namespace: "flux-system"}, helmv2.CrossNamespaceSourceReference{Kind: "HelmChart", Name: "podinfo", Namespace: "flux-system"}},
	} {
		src := chartsource.Source{Name: "podinfo", Repository: "oci://ghcr.io/stefanprodan/charts", Auth: chartsource.Auth{Username: "u", Password: "p"}, ChartRef: &tc.ref}
		o, err := Build(&Release{Spec: &reconcile.Spec{Name: "web", Namespace: "apps"}, Chart: Chart{Source: src, Version: "6.0.0"},
			SensitiveValues: map[string]any{"token": "s"}})
		if err != nil {
			t.Fatal(err)
		}
		hr := o.HelmRelease
		if hr.Spec.ChartRef == nil || *hr.Spec.ChartRef != tc.want || hr.Spec.Chart != nil {
			t.Errorf("%s: chartRef %+v, chart %+v; want %+v alone", tc.ref, hr.Spec.ChartRef, hr.Spec.Chart, tc.want)
		}
		if o.Source != nil || o.Credentials != nil || o.Shared {
			t.Errorf("%s: wrote a source %v or credentials %v", tc.ref, o.Source, o.Credentials)
		}
		if l := o.List(); len(l) != 2 || l[0] != o.Values || l[1] != hr {
			t.Errorf("%s: objects %v, want the values Secret and the HelmRelease", tc.ref, l)
		}
	}
}

// TestSharedChartName: releases share a HelmChart when their repository,
// chart, version, values files, strategy and interval are the same. The
// name is a DNS label led by the chart's name.
func TestSharedChartName(t *testing.T) {
	spec := func(edit func(*sourcev1.HelmChartSpec)) string {
		s := sourcev1.HelmChartSpec{Chart: "podinfo", Version: "6.7.1", SourceRef: sourcev1.LocalHelmChartSourceReference{Kind: sourcev1.HelmRepositoryKind, Name: "charts-example-com-0123456789"},
			Interval: metav1.Duration{Duration: time.Hour}, ValuesFiles: []string{"values.yaml", "prod.yaml"}}
		if edit != nil {
			edit(&s)
		}
		return sharedChartName(s)
	}
	base := spec(nil)
	for _, tc := range []struct {
		name  string
		got   string
		share bool
	}{
		{"the same", spec(nil), true},
		{"another version", spec(func(s *sourcev1.HelmChartSpec) { s.Version = "6.7.2" }), false},
		{"another chart", spec(func(s *sourcev1.HelmChartSpec) { s.Chart = "redis" }), false},
		{"another repository", spec(func(s *sourcev1.HelmChartSpec) { s.SourceRef.Name = "other" }), false},
		{"values files in another order", spec(func(s *sourcev1.HelmChartSpec) { s.ValuesFiles = []string{"prod.yaml", "values.yaml"} }), false},
		{"values files joined otherwise", spec(func(s *sourcev1.HelmChartSpec) { s.ValuesFiles = []string{"values.yamlprod.yaml"} }), false},
		{"missing values files ignored", spec(func(s *sourcev1.HelmChartSpec) { s.IgnoreMissingValuesFiles = true }), false},
		{"another strategy", spec(func(s *sourcev1.HelmChartSpec) { s.ReconcileStrategy = "Revision" }), false},
		{"another interval", spec(func(s *sourcev1.HelmChartSpec) { s.Interval.Duration = time.Minute }), false},
	} {
		if (tc.got == base) != tc.share {
			t.Errorf("%s: %s against %s, want shared %t", tc.name, tc.got, base, tc.share)
		}
	}
	for _, name := range []string{base, spec(func(s *sourcev1.HelmChartSpec) { s.Chart = strings.Repeat("Very_Long.Chart", 8) })} {
		if len(name) > 63 || !regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`).MatchString(name) {
			t.Errorf("HelmChart name %q is not a DNS label", name)
		}
	}
	if !strings.HasPrefix(base, "podinfo-") {
		t.Errorf("HelmChart name %q does not start with the chart's name", base)
	}
}

// TestBuildVerify: an OCI chart's verification is the OCIRepository's
// spec.verify, with a Secret holding what source-controller reads (or the
// user's Secret named), written before the source.
func TestBuildVerify(t *testing.T) {
	pub, ca, root := []byte("-----BEGIN PUBLIC KEY-----\n"), []byte("-----BEGIN CERTIFICATE-----\n"), []byte(`{"mediaType":"application/vnd.dev.sigstore.trustedroot+json;version=0.1"}`)
	for _, tc := range []struct {
		name   string
		verify chartsource.Verification
		secret string
		want   sourcev1.OCIRepositoryVerification
		data   map[string][]byte // nil: no Secret written
	}{
		{"cosign keys", chartsource.Verification{Provider: "cosign", PublicKeys: [][]byte{pub, pub}}, "",
			sourcev1.OCIRepositoryVerification{Provider: "cosign", SecretRef: &meta.LocalObjectReference{Name: "web-chart-verification"}},
			map[string][]byte{"cosign-0.pub": pub, "cosign-1.pub": pub}},
		{"cosign keys of the user's Secret", chartsource.Verification{Provider: "cosign"}, "signers",
			sourcev1.OCIRepositoryVerification{Provider: "cosign", SecretRef: &meta.LocalObjectReference{Name: "signers"}}, nil},
		{"keyless, public-good instance", chartsource.Verification{Provider: "cosign", Identities: []chartsource.Identity{{Issuer: "^i$", Subject: "^s$"}}}, "",
			sourcev1.OCIRepositoryVerification{Provider: "cosign", MatchOIDCIdentity: []sourcev1.OIDCIdentityMatch{{Issuer: "^i$", Subject: "^s$"}}}, nil},
		{"keyless, trusted root", chartsource.Verification{Provider: "cosign", Identities: []chartsource.Identity{{Issuer: "^i$", Subject: "^s$"}}, TrustedRoot: root}, "",
			sourcev1.OCIRepositoryVerification{Provider: "cosign", MatchOIDCIdentity: []sourcev1.OIDCIdentityMatch{{Issuer: "^i$", Subject: "^s$"}},
				TrustedRootSecretRef: &meta.LocalObjectReference{Name: "web-chart-verification"}},
			map[string][]byte{TrustedRootKey: root}},
		{"notation, default trust policy", chartsource.Verification{Provider: "notation", PublicKeys: [][]byte{ca}}, "",
			sourcev1.OCIRepositoryVerification{Provider: "notation", SecretRef: &meta.LocalObjectReference{Name: "web-chart-verification"}},
			map[string][]byte{"ca-0.crt": ca, TrustPolicyKey: []byte(chartsource.DefaultTrustPolicy)}},
		{"notation, trust policy given", chartsource.Verification{Provider: "notation", PublicKeys: [][]byte{ca}, TrustPolicy: []byte(`{"version":"1.0"}`)}, "",
			sourcev1.OCIRepositoryVerification{Provider: "notation", SecretRef: &meta.LocalObjectReference{Name: "web-chart-verification"}},
			map[string][]byte{"ca-0.crt": ca, TrustPolicyKey: []byte(`{"version":"1.0"}`)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := chartsource.Source{Name: "podinfo", Repository: "oci://ghcr.io/stefanprodan/charts", Verify: &tc.verify}
			o, err := Build(&Release{Spec: &reconcile.Spec{Name: "web", Namespace: "apps"}, Chart: Chart{Source: src, Version: "6.0.0+0123456789ab", Digest: "sha256:0123"}, VerifySecret: tc.secret})
			if err != nil {
				t.Fatal(err)
			}
			repo := o.Source.(*sourcev1.OCIRepository)
			if !reflect.DeepEqual(repo.Spec.Verify, &tc.want) || !o.Verified() {
				t.Errorf("spec.verify %+v, want %+v", repo.Spec.Verify, tc.want)
			}
			switch {
			case tc.data == nil && o.Verification != nil:
				t.Errorf("wrote the Secret %s, want none", o.Verification.Name)
			case tc.data != nil && (o.Verification == nil || !reflect.DeepEqual(o.Verification.Data, tc.data) || o.Verification.Labels[ReleaseLabel] != "web"):
				t.Errorf("Secret %+v, want the release's holding %v", o.Verification, tc.data)
			case tc.data != nil && slices.Index(o.List(), client.Object(o.Verification)) > slices.Index(o.List(), client.Object(repo)):
				t.Errorf("objects %v: the Secret is applied after the source", o.List())
			}
		})
	}
}

// TestValuesFilesPaths: values files, named relative to the chart, are
// written relative to the Git repository's or bucket's root, where
// source-controller reads them, and read back relative to the chart; a
// file outside the chart's directory is refused.
func TestValuesFilesPaths(t *testing.T) {
	for _, tc := range []struct {
		chart       string
		files, root []string
	}{
		{"charts/app", []string{"values.yaml", "./values-prod.yaml", "env/eu.yaml"}, []string{"charts/app/values.yaml", "charts/app/values-prod.yaml", "charts/app/env/eu.yaml"}},
		{"./charts/app/", []string{"values.yaml"}, []string{"charts/app/values.yaml"}},
		{".", []string{"values.yaml", "env/eu.yaml"}, []string{"values.yaml", "env/eu.yaml"}},
		{"app", nil, nil},
	} {
		t.Run(tc.chart, func(t *testing.T) {
			root := rootValuesFiles(tc.chart, tc.files)
			if !slices.Equal(root, tc.root) {
				t.Errorf("rootValuesFiles(%q, %q) = %q, want %q", tc.chart, tc.files, root, tc.root)
			}
			back, err := chartValuesFiles(tc.chart, root)
			if err != nil {
				t.Fatal(err)
			}
			for i := range back {
				if back[i] != path.Clean(tc.files[i]) {
					t.Errorf("chartValuesFiles(%q, %q) = %q, want %q", tc.chart, root, back, tc.files)
				}
			}
		})
	}
	for _, tc := range []struct{ chart, file string }{
		{"charts/app", "envs/prod/values.yaml"},
		{"charts/app", "charts/application/values.yaml"},
		{"charts/app", "charts/app/../other/values.yaml"},
		{".", "../values.yaml"},
	} {
		if _, err := chartValuesFiles(tc.chart, []string{tc.file}); err == nil || !strings.Contains(err.Error(), "outside the chart's directory") {
			t.Errorf("chartValuesFiles(%q, [%q]) = %v, want outside the chart's directory", tc.chart, tc.file, err)
		}
	}
	// The HelmChart template of a Git chart names them from the root.
	o, err := Build(&Release{Spec: &reconcile.Spec{Name: "web", Namespace: "apps"}, Chart: Chart{Version: "1.0.0", Source: chartsource.Source{Name: "charts/app", ValuesFiles: []string{"values-prod.yaml"},
		Git: &chartsource.Git{URL: "https://example.com/charts.git", Ref: chartsource.GitRef{Branch: "main"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := o.HelmRelease.Spec.Chart.Spec.ValuesFiles; !slices.Equal(got, []string{"charts/app/values-prod.yaml"}) {
		t.Errorf("HelmChart template valuesFiles %q", got)
	}
}

// TestAsPlanned: source-controller's version of a chart with values files
// (the HelmChart's generation as the last build metadata) reads as the
// plan's (the files' digest there) for the HelmChart's current generation
// only.
func TestAsPlanned(t *testing.T) {
	for _, tc := range []struct{ planned, generation, in, want string }{
		{"1.0.1+5e1f0c9a2b7d", "3", "1.0.1+3", "1.0.1+5e1f0c9a2b7d"},
		{"1.0.1+1a2b3c4d5e6f.5e1f0c9a2b7d", "2", "1.0.1+1a2b3c4d5e6f.2", "1.0.1+1a2b3c4d5e6f.5e1f0c9a2b7d"},
		{"1.0.1+5e1f0c9a2b7d", "3", "1.0.1+2", "1.0.1+2"},                                        // an older generation
		{"1.0.1+5e1f0c9a2b7d", "3", "1.0.0+3", "1.0.0+3"},                                        // another version
		{"1.0.1+1a2b3c4d5e6f.5e1f0c9a2b7d", "2", "1.0.1+ffffffffffff.2", "1.0.1+ffffffffffff.2"}, // another commit
		{"1.0.1+5e1f0c9a2b7d", "3", "1.0.1", "1.0.1"},
	} {
		if got := asPlannedBy(tc.planned, tc.generation)(tc.in); got != tc.want {
			t.Errorf("asPlannedBy(%q, %q)(%q) = %q, want %q", tc.planned, tc.generation, tc.in, got, tc.want)
		}
	}
	o, err := Build(&Release{Spec: &reconcile.Spec{Name: "web", Namespace: "apps"}, Chart: Chart{Version: "1.0.0+5e1f0c9a2b7d", Source: chartsource.Source{Name: "svc", Repository: "https://charts.example.com", ValuesFiles: []string{"values-prod.yaml"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := o.HelmRelease.Annotations[PlannedVersionAnnotation]; got != "1.0.0+5e1f0c9a2b7d" {
		t.Errorf("HelmRelease annotation %s = %q", PlannedVersionAnnotation, got)
	}
}
