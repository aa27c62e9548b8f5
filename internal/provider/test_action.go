package provider

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/action"
	"github.com/hashicorp/terraform-plugin-framework/action/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

var _ action.ActionWithConfigure = (*testAction)(nil)

// NewTestAction returns the action helmrelease_test (Terraform ≥ 1.14).
func NewTestAction() action.Action { return &testAction{} }

// testAction runs a release's Helm tests now, as `helm test` does.
type testAction struct {
	actionData
}

type testActionModel struct {
	Cluster   types.String            `tfsdk:"cluster"`
	Namespace types.String            `tfsdk:"namespace"`
	Name      types.String            `tfsdk:"name"`
	Timeout   types.String            `tfsdk:"timeout"`
	Filters   []testActionFilterModel `tfsdk:"filters"`
}

type testActionFilterModel struct {
	Name    types.String `tfsdk:"name"`
	Exclude types.Bool   `tfsdk:"exclude"`
}

// testLogLines is how many log lines of each failed test pod an error shows.
const testLogLines = 20

func (a *testAction) Metadata(_ context.Context, req action.MetadataRequest, resp *action.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_test"
}

func (a *testAction) Schema(_ context.Context, _ action.SchemaRequest, resp *action.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Runs the Helm tests of a release now, as `helm test` does (Terraform ≥ 1.14: `terraform apply -invoke=action.helmrelease_test.<name>`, or an `action_trigger`). Each test pod's outcome is reported as it ends; the action fails when a test fails, with the last log lines of the failed pods. The release is identified as `helmrelease_release`'s identity says.",
		Attributes: map[string]schema.Attribute{
			"cluster": schema.StringAttribute{
				MarkdownDescription: clusterDescription("the release is in, as its `helmrelease_release`'s `cluster` and identity say it", ""),
				Optional:            true,
				Validators:          []validator.String{clusterNameValidator()},
			},
			"namespace": schema.StringAttribute{
				MarkdownDescription: "Namespace of the release's Helm storage (`helmrelease_release` identity `namespace`, `storage_namespace`).",
				Required:            true,
				Validators:          []validator.String{dnsLabel(63)},
			},
			"name": schema.StringAttribute{
				MarkdownDescription: "Release name (`helmrelease_release` identity `name`, `release_name`).",
				Required:            true,
				Validators:          []validator.String{dnsLabel(reconcile.MaxReleaseNameLength)},
			},
			"timeout": schema.StringAttribute{
				MarkdownDescription: "Time the tests may take, a Go duration. Default: `5m0s`.",
				Optional:            true,
				Validators:          []validator.String{duration()},
			},
			"filters": schema.ListNestedAttribute{
				MarkdownDescription: "Tests to run or skip by name, as `test.filters` of `helmrelease_release`; with an include filter, only the included tests run. Default: all tests.",
				Optional:            true,
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"name":    schema.StringAttribute{MarkdownDescription: "Name of the test hook.", Required: true, Validators: []validator.String{stringvalidator.LengthAtLeast(1)}},
					"exclude": schema.BoolAttribute{MarkdownDescription: "Skip the test instead of running it. Default: `false`.", Optional: true},
				}},
			},
		},
	}
}

func (a *testAction) Invoke(ctx context.Context, req action.InvokeRequest, resp *action.InvokeResponse) {
	var m testActionModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	logs := helm.NewLogBuffer(helm.DefaultLogLines, nil)
	r := a.openRelease(m.Cluster, m.Namespace, m.Name, logs, &resp.Diagnostics)
	if r == nil {
		return
	}
	ref, client, latest := r.ref, r.client, r.latest
	switch {
	case latest == nil || latest.Info.Status != helm.StatusDeployed:
		status := "not installed"
		if latest != nil {
			status = latest.Info.Status.String()
		}
		resp.Diagnostics.AddAttributeError(path.Root("name"), "Release not testable",
			fmt.Sprintf("Release %s is %s: only a deployed release is tested.\n\nCheck namespace (the namespace of the release's Helm storage) and name, or apply the release first.", ref, status))
		return
	}
	timeout := 5 * time.Minute
	if d, err := time.ParseDuration(m.Timeout.ValueString()); err == nil && d > 0 {
		timeout = d
	}
	var include, exclude []string
	for _, f := range m.Filters {
		if f.Exclude.ValueBool() {
			exclude = append(exclude, f.Name.ValueString())
		} else {
			include = append(include, f.Name.ValueString())
		}
	}

	resp.SendProgress(action.InvokeProgressEvent{Message: fmt.Sprintf("Running the tests of release %s (revision %d, chart %s)", ref, latest.Version, chartOf(latest))})
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		start := time.Now()
		tick := time.NewTicker(progressEvery)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
				resp.SendProgress(action.InvokeProgressEvent{Message: fmt.Sprintf("Tests of release %s still running (%s of %s)", ref, time.Since(start).Round(time.Second), timeout)})
			}
		}
	}()
	tested, testErr := client.Test(m.Name.ValueString(), helm.TestOptions{Namespace: latest.Namespace, Timeout: timeout, Include: include, Exclude: exclude})
	close(done)
	<-stopped // progress is sent from one goroutine at a time
	if tested == nil {
		tested = latest
	}
	var failed []string
	for _, h := range testHooks(tested) {
		resp.SendProgress(action.InvokeProgressEvent{Message: fmt.Sprintf("Test %s of release %s: %s", h.Name, ref, h.LastRun.Phase)})
		if h.LastRun.Phase == helm.HookPhaseFailed {
			failed = append(failed, h.Name)
		}
	}
	if testErr == nil {
		return
	}
	detail := fmt.Sprintf("Helm test of release %s failed: %s.", ref, testErr)
	if podLogs, err := client.TestPodLogs(ctx, tested, testLogLines); err == nil {
		for _, name := range failed {
			detail += fmt.Sprintf("\n\nLast log lines of test pod %s:\n%s", name, indent(orNone(strings.TrimSpace(podLogs[name]))))
		}
	}
	if lines := logs.String(); lines != "" {
		detail += "\n\nLast Helm log lines:\n" + lines
	}
	resp.Diagnostics.AddError("Release tests failed", detail+"\n\nFix the release or its tests; the release itself is left as it is.")
}

// testHooks are the test hooks of rel that ran, by name.
func testHooks(rel *helm.Release) []*helm.Hook {
	var out []*helm.Hook
	for _, h := range rel.Hooks {
		if slices.Contains(h.Events, helm.HookTest) && !h.LastRun.StartedAt.IsZero() {
			out = append(out, h)
		}
	}
	slices.SortFunc(out, func(a, b *helm.Hook) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func chartOf(rel *helm.Release) string {
	if rel.Chart == nil || rel.Chart.Metadata == nil {
		return "?"
	}
	return rel.Chart.Metadata.Name + "@" + rel.Chart.Metadata.Version
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(s, "\n", "\n  ")
}
