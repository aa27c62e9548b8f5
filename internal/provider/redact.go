package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"k8s.io/client-go/rest"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/chartsource"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/redact"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/tfvalue"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/values"
)

// redactedText replaces a secret wherever the provider prints.
const redactedText = redact.Text

// minRedacted is the shortest secret replaced.
const minRedacted = redact.MinLength

// redactor keeps the secrets one request handles out of what the provider
// prints: Kubernetes and Helm errors quote values ("Invalid value:
// \"hunter2!\""), and those become diagnostics, log lines, condition
// messages and the release description. The secrets are the strings of
// sensitive_values (and its write-only twin), of values read from Secrets,
// the chart repository password, and the provider's registry passwords,
// token and client key.
type redactor struct {
	secrets redact.Secrets
	// values are the strings of the sensitive values (sensitive_values,
	// sensitive_values_wo, values read from Secrets) as given: resources
	// hides where the chart copies them (sensitivePaths).
	values map[string]bool
}

// newRedactor starts with the provider's own secrets: its logins' and
// the credentials of c, the cluster used (nil: none).
func newRedactor(data *providerData, c *cluster) *redactor {
	r := &redactor{}
	if data == nil {
		return r
	}
	for _, reg := range data.registries {
		r.add(reg.Auth.Password)
	}
	for _, token := range data.registries.Tokens() {
		r.add(token)
	}
	if c != nil {
		if cfg, err := c.clients.RESTConfig(); err == nil {
			r.addConfig(cfg)
		}
	}
	return r
}

// addConfig records the credentials of a cluster configuration.
func (r *redactor) addConfig(cfg *rest.Config) {
	if cfg == nil {
		return
	}
	r.add(cfg.BearerToken)
	r.add(cfg.Password)
	r.add(string(cfg.KeyData))
}

// addURLPassword records the password written into a repository URL
// (https://user:pass@host/…), which the requests take out of it.
func (r *redactor) addURLPassword(repository string) {
	if _, auth, err := chartsource.SplitRepositoryURL(repository, chartsource.Auth{}); err == nil {
		r.add(auth.Password)
	}
}

// addReconciler records the credentials the reconciler's cluster uses: those of
// kube_config.secret_ref when set.
func (r *redactor) addReconciler(e *reconcile.Reconciler) {
	if e == nil || e.Kube == nil {
		return
	}
	if cfg, err := e.Kube.ToRESTConfig(); err == nil {
		r.addConfig(cfg)
	}
}

// redactorFor is the redactor of a release: the provider's secrets, the
// chart password and the sensitive values of m and wo (the values read
// from Secrets join when the values are composed).
func (r *releaseResource) redactorFor(ctx context.Context, m *releaseModel, wo writeOnly) *redactor {
	var c *cluster
	if r.data != nil {
		c, _ = r.data.cluster(m.Cluster)
	}
	red := newRedactor(r.data, c)
	red.addValues(m.SensitiveValues.ValueString())
	red.addValues(wo.SensitiveValues.ValueString())
	red.add(wo.ChartPassword.ValueString())
	red.add(wo.GitPrivateKey.ValueString())
	if tfvalue.FullyKnown(m.Chart) && !m.Chart.IsNull() {
		var c releaseChartModel
		if d := tfvalue.ObjectInto(ctx, m.Chart, &c); !d.HasError() {
			red.add(c.Password.ValueString())
			red.addURLPassword(c.Repository.ValueString())
			if g := gitSource(c.Git); g != nil {
				red.add(g.Identity)
			}
		}
	}
	return red
}

// model replaces secrets in what m shows of errors: the release
// description and the status's condition messages.
func (r *redactor) model(ctx context.Context, m *releaseModel, diags *diag.Diagnostics) {
	if r.secrets.Empty() {
		return
	}
	if !m.Description.IsNull() && !m.Description.IsUnknown() {
		m.Description = types.StringValue(r.text(m.Description.ValueString()))
	}
	if m.Status.IsNull() || m.Status.IsUnknown() {
		return
	}
	st, d := statusOf(ctx, m.Status)
	diags.Append(d...)
	if d.HasError() {
		return
	}
	r.status(st)
	status, d := statusObject(ctx, st)
	diags.Append(d...)
	if !d.HasError() {
		m.Status = status
	}
}

// finish redacts what a request leaves: the model saved in out (when
// any) and the diagnostics. Deferred by each method of the resource.
func (r *redactor) finish(ctx context.Context, out *tfsdk.State, diags *diag.Diagnostics) {
	if r.secrets.Empty() {
		return
	}
	if out != nil && !out.Raw.IsNull() {
		var m releaseModel
		if d := out.Get(ctx, &m); !d.HasError() {
			r.model(ctx, &m, diags)
			diags.Append(out.Set(ctx, &m)...)
		}
	}
	*diags = r.diagnostics(*diags)
}

// add records a secret, in every form it may be printed in.
func (r *redactor) add(s string) { r.secrets.Add(s) }

// addValues records the strings of a sensitive values document.
func (r *redactor) addValues(document string) {
	if parsed, err := parseSensitiveValues(document); err == nil {
		values.Strings(parsed, r.addValue)
	}
}

// addValue records a string of sensitive values.
func (r *redactor) addValue(s string) {
	r.add(s)
	if len(s) >= minRedacted {
		if r.values == nil {
			r.values = map[string]bool{}
		}
		r.values[s] = true
	}
}

// text is s with every secret replaced.
func (r *redactor) text(s string) string { return r.secrets.Replace(s) }

// context masks the secrets in everything logged with the context returned
// (tflog), Helm's log lines included.
func (r *redactor) context(ctx context.Context) context.Context {
	if r.secrets.Empty() {
		return ctx
	}
	// Post-renderer commands redact them from their standard error
	// before cutting it.
	ctx = redact.WithForms(ctx, r.secrets.Forms())
	ctx = tflog.MaskMessageStrings(ctx, r.secrets.Forms()...)
	return tflog.MaskAllFieldValuesStrings(ctx, r.secrets.Forms()...)
}

// diagnostics is diags with secrets replaced in summaries and details.
func (r *redactor) diagnostics(diags diag.Diagnostics) diag.Diagnostics {
	if r.secrets.Empty() {
		return diags
	}
	out := make(diag.Diagnostics, 0, len(diags))
	for _, d := range diags {
		summary, detail := r.text(d.Summary()), r.text(d.Detail())
		if summary == d.Summary() && detail == d.Detail() {
			out = append(out, d)
			continue
		}
		withPath, hasPath := d.(diag.DiagnosticWithPath)
		switch {
		case hasPath && d.Severity() == diag.SeverityError:
			out = append(out, diag.NewAttributeErrorDiagnostic(withPath.Path(), summary, detail))
		case hasPath:
			out = append(out, diag.NewAttributeWarningDiagnostic(withPath.Path(), summary, detail))
		case d.Severity() == diag.SeverityError:
			out = append(out, diag.NewErrorDiagnostic(summary, detail))
		default:
			out = append(out, diag.NewWarningDiagnostic(summary, detail))
		}
	}
	return out
}

// status replaces secrets in the condition messages of st, which carry
// the errors of the actions.
func (r *redactor) status(st *reconcile.Status) {
	for i := range st.Conditions {
		st.Conditions[i].Message = r.text(st.Conditions[i].Message)
	}
}
