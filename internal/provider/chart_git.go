package provider

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/chartsource"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/tfvalue"
)

// gitRefFields are the fields of chart.git.ref, in GitRepository's order
// of precedence (lowest first), which the schema turns into "only one".
var gitRefFields = []string{"branch", "tag", "semver", "name"}

var commitPattern = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)

// gitAttribute is chart.git (Flux's GitRepository, the HelmChart's source).
func gitAttribute() schema.SingleNestedAttribute {
	others := func(self string, also ...string) validator.String {
		var exprs []path.Expression
		for _, f := range append(gitRefFields, also...) {
			if f != self {
				exprs = append(exprs, path.MatchRelative().AtParent().AtName(f))
			}
		}
		return stringvalidator.ConflictsWith(exprs...)
	}
	return schema.SingleNestedAttribute{
		MarkdownDescription: "A Git repository holding the chart (Flux's GitRepository, named by the HelmChart's `sourceRef`), with `name` the chart's directory in it. " +
			"The plan checks the reference out and shows the commit in `chart_source_revision` when it upgrades; the apply deploys that commit even if the branch moved since. " +
			"Clones are shallow and kept in the provider's `cache_dir` by commit, so a plan whose reference has not moved asks the server for its references only. " +
			"Over HTTP(S), `username` and `password` (or `password_wo`) are the basic auth or token, and `ca_file`, `cert_file` and `key_file` the TLS files (GitRepository `secretRef`). " +
			"With `engine = \"flux\"`, the release's own GitRepository, pinned to the planned commit, and the credentials Secret are written beside the HelmRelease. Default: none.",
		Optional: true,
		Attributes: map[string]schema.Attribute{
			"url": schema.StringAttribute{
				MarkdownDescription: "URL of the repository (GitRepository `url`): `https://…`, `http://…` or `ssh://user@host[:port]/path` (scp-like `user@host:path` is not a URL: write it as `ssh://user@host/path`).",
				Required:            true,
				Validators:          []validator.String{gitURL()},
			},
			"ref": schema.SingleNestedAttribute{
				MarkdownDescription: "What to check out (GitRepository `ref`): one of `branch`, `tag`, `semver` and `name`, and `commit` alone or with `branch`. Default: the branch `master`, as GitRepository's.",
				Optional:            true,
				Attributes: map[string]schema.Attribute{
					"branch": schema.StringAttribute{
						MarkdownDescription: "Branch to check out, its newest commit at plan (`branch`). Default: `master` when no other field is set.",
						Optional:            true,
						Validators:          []validator.String{stringvalidator.LengthAtLeast(1), others("branch", "commit")},
					},
					"tag": schema.StringAttribute{
						MarkdownDescription: "Tag to check out (`tag`). Default: none.",
						Optional:            true,
						Validators:          []validator.String{stringvalidator.LengthAtLeast(1), others("tag", "commit")},
					},
					"semver": schema.StringAttribute{
						MarkdownDescription: "Semver constraint over the repository's tags: the newest matching tag is checked out (`semver`), e.g. `>=1.0.0 <2.0.0`. Default: none.",
						Optional:            true,
						Validators:          []validator.String{semverConstraint(), others("semver", "commit")},
					},
					"name": schema.StringAttribute{
						MarkdownDescription: "Full name of the reference to check out (`name`), e.g. `refs/heads/main`, `refs/tags/v1.0.0` or `refs/pull/42/head`. Default: none.",
						Optional:            true,
						Validators:          []validator.String{stringvalidator.RegexMatches(regexp.MustCompile(`^refs/\S+$`), "must be a full reference name starting with refs/"), others("name", "commit")},
					},
					"commit": schema.StringAttribute{
						MarkdownDescription: "Commit to check out, as its full hex hash (`commit`); with `branch`, the branch is cloned and the commit must be on it. Default: none.",
						Optional:            true,
						Validators:          []validator.String{stringvalidator.RegexMatches(commitPattern, "must be a full commit hash: 40 (SHA-1) or 64 (SHA-256) lowercase hex digits")},
					},
				},
			},
			"private_key": schema.StringAttribute{
				MarkdownDescription: "SSH private key for an `ssh://` URL, PEM or OpenSSH (GitRepository `secretRef` `identity`). Never shown in plans or logs; kept in the state, unlike `private_key_wo`. Default: none.",
				Optional:            true,
				Sensitive:           true,
			},
			"known_hosts": schema.StringAttribute{
				MarkdownDescription: "The server's host keys as `known_hosts` lines (`ssh-keyscan host`), required with an `ssh://` URL (GitRepository `secretRef` `known_hosts`): public keys, shown in plans, so that a new host key is reviewed. Default: none.",
				Optional:            true,
			},
		},
	}
}

// gitURL checks chart.git.url: a scheme GitRepository takes, a host, and
// no credentials, query or fragment.
func gitURL() validator.String {
	return stringCheck{
		what:   "Git URL",
		remedy: "Write the repository as https://host/path, http://host/path or ssh://user@host/path, with credentials in chart.username and chart.password (HTTP) or chart.git.private_key (SSH).",
		check: func(s string) error {
			u, err := url.Parse(s)
			switch {
			case err != nil || u.Host == "":
				return errors.New("not a URL with a host")
			case u.Scheme != "https" && u.Scheme != "http" && u.Scheme != "ssh":
				return fmt.Errorf("scheme %q: GitRepository takes https, http and ssh", u.Scheme)
			case u.RawQuery != "" || u.Fragment != "" || strings.Contains(s, "#"):
				return errors.New("a query string or fragment is not part of a Git URL")
			case u.User != nil && (u.Scheme != "ssh" || func() bool { _, set := u.User.Password(); return set }()):
				return errors.New("credentials in the URL are shown in plans and kept in the state")
			}
			return nil
		},
	}
}

// gitSource is the chartsource.Git of chart.git: nil when unset. The
// object's attributes are read by name, as the resource's git adds the
// write-only key the data source's lacks.
func gitSource(o types.Object) *chartsource.Git {
	if o.IsNull() || o.IsUnknown() {
		return nil
	}
	attrs := o.Attributes()
	str := func(attrs map[string]attr.Value, name string) string {
		if v, ok := attrs[name].(types.String); ok {
			return v.ValueString()
		}
		return ""
	}
	g := &chartsource.Git{URL: str(attrs, "url"), Identity: str(attrs, "private_key"), KnownHosts: str(attrs, "known_hosts")}
	if ref, ok := attrs["ref"].(types.Object); ok && !ref.IsNull() && !ref.IsUnknown() {
		r := ref.Attributes()
		g.Ref = chartsource.GitRef{Branch: str(r, "branch"), Tag: str(r, "tag"), SemVer: str(r, "semver"), Name: str(r, "name"), Commit: str(r, "commit")}
	}
	return g
}

// validateGit refuses, at plan, chart attributes that do not apply to a
// chart from Git, and SSH settings that do not go together.
func validateGit(c *chartModel, chart path.Path, diags *diag.Diagnostics) {
	g := gitSource(c.Git)
	if g == nil {
		return
	}
	at := chart.AtName("git")
	refuseForSource(c, chart, "git", "Git", [4]string{
		"a chart from Git has the version of its Chart.yaml at the reference checked out (HelmChart ignores spec.version there): choose the chart with git.ref",
		"GitRepository always verifies TLS: give the server's CA with chart.ca_file",
		"a Git repository's credentials go to its own host only",
		"provenance files are for packaged charts, not a chart directory in Git",
	}, diags)
	u, err := url.Parse(g.URL)
	if err != nil || c.Git.Attributes()["url"].IsUnknown() {
		return
	}
	ssh := u.Scheme == "ssh"
	switch {
	case ssh && (!c.Username.IsNull() || !c.Password.IsNull()):
		attrError(diags, chart.AtName("username"), "HTTP credentials with an SSH URL", "chart.username and chart.password authenticate over HTTP(S); an ssh:// URL authenticates with a key.", "Set chart.git.private_key (or private_key_wo) and chart.git.known_hosts, and the user in the URL (ssh://git@host/path).")
	case !ssh && (g.Identity != "" || g.KnownHosts != ""):
		attrError(diags, at.AtName("private_key"), "SSH key with an HTTP URL", "chart.git.private_key and known_hosts are for ssh:// URLs.", "Use an ssh://user@host/path URL, or chart.username and chart.password over HTTP(S).")
	case ssh && g.KnownHosts == "" && !c.Git.Attributes()["known_hosts"].IsUnknown():
		attrError(diags, at.AtName("known_hosts"), "known_hosts missing", "An ssh:// URL needs the server's host keys: without them the server cannot be told from another.", "Set chart.git.known_hosts to the output of ssh-keyscan for the host, checked against a fingerprint you trust.")
	}
}

// recordedGitObject is chart.git of a release's recorded source: the URL
// and reference, without credentials (an import's configuration adds
// them).
func recordedGitObject(g *chartsource.RecordedGit, diags *diag.Diagnostics) types.Object {
	gitType := releaseChartAttribute().GetType().(types.ObjectType).AttrTypes["git"].(types.ObjectType)
	refType := gitType.AttrTypes["ref"].(types.ObjectType)
	attrs := map[string]attr.Value{}
	for k, t := range gitType.AttrTypes {
		attrs[k] = tfvalue.Null(t)
	}
	attrs["url"] = types.StringValue(g.URL)
	attrs["known_hosts"] = stringOrNull(g.KnownHosts)
	if g.Ref != (chartsource.GitRef{}) {
		ref, d := types.ObjectValue(refType.AttrTypes, map[string]attr.Value{
			"branch": stringOrNull(g.Ref.Branch), "tag": stringOrNull(g.Ref.Tag), "semver": stringOrNull(g.Ref.SemVer),
			"name": stringOrNull(g.Ref.Name), "commit": stringOrNull(g.Ref.Commit),
		})
		diags.Append(d...)
		attrs["ref"] = ref
	}
	out, d := types.ObjectValue(gitType.AttrTypes, attrs)
	diags.Append(d...)
	return out
}

// refuseForSource refuses the chart attributes that do not apply to a
// chart from the source (chart.<attr>, named in messages as name): why
// holds the reason for version, insecure_skip_tls_verify,
// pass_credentials and verify, in that order.
func refuseForSource(c *chartModel, chart path.Path, attr, name string, why [4]string, diags *diag.Diagnostics) {
	for i, a := range []struct {
		name string
		set  bool
	}{
		{"version", !c.Version.IsNull()},
		{"insecure_skip_tls_verify", c.InsecureSkipTLSVerify.ValueBool()},
		{"pass_credentials", c.PassCredentials.ValueBool()},
		{"verify", c.Verify != nil},
	} {
		if a.set {
			attrError(diags, chart.AtName(a.name), "chart."+a.name+" with chart."+attr, "chart."+a.name+" does not apply to a chart from "+name+": "+why[i]+".", "Remove chart."+a.name+".")
		}
	}
}
