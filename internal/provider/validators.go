package provider

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"k8s.io/apimachinery/pkg/labels"
	k8svalidation "k8s.io/apimachinery/pkg/util/validation"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/chartsource"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/values"
)

var (
	dataKeyPattern      = regexp.MustCompile(`^[-._a-zA-Z0-9]+$`)
	digestPattern       = regexp.MustCompile(`^sha256:[a-f0-9]{64}$`)
	dnsSubdomainPattern = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	dnsLabelPattern     = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
)

func dnsSubdomain() validator.String {
	return stringvalidator.All(
		stringvalidator.LengthBetween(1, 253),
		stringvalidator.RegexMatches(dnsSubdomainPattern, "must be a Kubernetes object name: lowercase letters, digits, '-' and '.', starting and ending with a letter or digit"),
	)
}

func dnsLabel(max int) validator.String {
	return stringvalidator.All(
		stringvalidator.LengthBetween(1, max),
		stringvalidator.RegexMatches(dnsLabelPattern, "must be lowercase letters, digits and '-', starting and ending with a letter or digit"),
	)
}

// stringCheck adapts a func(string) error into a validator whose failure
// names the attribute, the problem and the remedy.
type stringCheck struct {
	what   string
	remedy string
	check  func(string) error
}

func (v stringCheck) Description(context.Context) string             { return "must be a valid " + v.what }
func (v stringCheck) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (v stringCheck) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if err := v.check(req.ConfigValue.ValueString()); err != nil {
		invalidValue(&resp.Diagnostics, req.Path, v.what, err, v.remedy)
	}
}

// targetPath checks helm --set path syntax.
func targetPath() validator.String {
	return stringCheck{
		what:   "target path",
		remedy: "Write the path as for `helm --set`, e.g. `image.tag`, `ingress.hosts[0].host` or `annotations.example\\.com/key`.",
		check:  values.ValidateTargetPath,
	}
}

// qualifiedName checks a label or annotation key: an optional DNS
// subdomain prefix and '/', then a name of at most 63 characters.
func qualifiedName(what string) validator.String {
	return stringCheck{
		what:   what,
		remedy: "Use a Kubernetes key: an optional DNS subdomain prefix and '/', then at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit, e.g. `team` or `example.com/team`.",
		check: func(s string) error {
			if errs := k8svalidation.IsQualifiedName(s); len(errs) > 0 {
				return fmt.Errorf("%q: %s", s, strings.Join(errs, "; "))
			}
			return nil
		},
	}
}

// labelValue checks a label value.
func labelValue() validator.String {
	return stringCheck{
		what:   "label value",
		remedy: "Use at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit, or an empty value.",
		check: func(s string) error {
			if errs := k8svalidation.IsValidLabelValue(s); len(errs) > 0 {
				return fmt.Errorf("%q: %s", s, strings.Join(errs, "; "))
			}
			return nil
		},
	}
}

// regex checks RE2 syntax.
func regex() validator.String {
	return stringCheck{
		what:   "regular expression",
		remedy: "Use Go regular expression syntax (RE2), e.g. `apps` or `.*-system`.",
		check: func(s string) error {
			_, err := regexp.Compile(s)
			return err
		},
	}
}

// labelSelector checks Kubernetes label selector syntax.
func labelSelector() validator.String {
	return stringCheck{
		what:   "label selector",
		remedy: "Use Kubernetes label selector syntax, e.g. `app=web`, `tier in (web, api)` or `!canary`.",
		check: func(s string) error {
			_, err := labels.Parse(s)
			return err
		},
	}
}

// semverConstraint checks a semver constraint (a Git tag range).
func semverConstraint() validator.String {
	return stringCheck{
		what:   "version constraint",
		remedy: "Use a semver constraint, e.g. `1.2.3`, `6.5.*`, `~6.5` or `>=4.0.0 <5.0.0`.",
		check: func(s string) error {
			if _, err := semver.NewConstraint(s); err != nil {
				return fmt.Errorf("%q: %w", s, err)
			}
			return nil
		},
	}
}

// chartVersion checks a chart version constraint, or a version with the
// digest of its OCI manifest (chartsource.OCIDigestVersion).
func chartVersion() validator.String {
	return stringCheck{
		what:   "version constraint",
		remedy: "Use a semver constraint, e.g. `1.2.3`, `6.5.*`, `~6.5` or `>=4.0.0 <5.0.0`, or, for an OCI registry, a version with its manifest digest, `1.2.3@sha256:<64 hex digits>`.",
		check: func(s string) error {
			if _, _, ok := chartsource.OCIDigestVersion(s); ok {
				return nil
			}
			if strings.Contains(s, "@") {
				return fmt.Errorf("%q: a version naming a manifest digest is a semver version, then @sha256: and 64 lowercase hex digits", s)
			}
			if _, err := semver.NewConstraint(s); err != nil {
				return fmt.Errorf("%q: %w", s, err)
			}
			return nil
		},
	}
}

// duration checks a positive Go duration, as HelmRelease timeouts are written.
func duration() validator.String {
	return stringCheck{
		what:   "duration",
		remedy: "Write a positive duration with a unit, e.g. `90s`, `5m` or `1h30m`.",
		check: func(s string) error {
			d, err := time.ParseDuration(s)
			if err != nil {
				return fmt.Errorf("%q: %w", s, err)
			}
			if d <= 0 {
				return fmt.Errorf("%q is not positive", s)
			}
			return nil
		},
	}
}

// jsonPointer checks RFC 6901 syntax.
func jsonPointer() validator.String {
	return stringCheck{
		what:   "JSON pointer",
		remedy: "Write an RFC 6901 JSON pointer starting with '/', e.g. `/spec/replicas` or `/metadata/annotations/example.com~1key` (`~1` for '/', `~0` for '~').",
		check: func(s string) error {
			if !strings.HasPrefix(s, "/") {
				return fmt.Errorf("%q does not start with '/'", s)
			}
			for i := 0; i < len(s); i++ {
				if s[i] == '~' && (i+1 == len(s) || (s[i+1] != '0' && s[i+1] != '1')) {
					return fmt.Errorf("%q has a '~' not followed by 0 or 1", s)
				}
			}
			return nil
		},
	}
}

// repositoryURL checks a chart repository URL without quoting it (it may
// hold a password): https://, http:// or oci:// with a host, no query
// string or fragment.
func repositoryURL() validator.String {
	return stringCheck{what: "repository URL", remedy: repositoryURLRemedy, check: func(s string) error {
		_, _, err := chartsource.SplitRepositoryURL(s, chartsource.Auth{})
		return err
	}}
}

const repositoryURLRemedy = "Write the repository as https://host/path, http://host/path or oci://host/path, without a query string or fragment. Give credentials in username and password (password is sensitive; Terraform shows a URL as written in plans and keeps it in the state)."

// repositoryURLError reports what chartsource.SplitRepositoryURL refused,
// on the attribute p, without the URL.
func repositoryURLError(diags *diag.Diagnostics, p path.Path, err error) {
	invalidValue(diags, p, "repository URL", err, repositoryURLRemedy)
}
