package provider

import (
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
)

// bucketEndpointPattern is host or host:port.
var bucketEndpointPattern = regexp.MustCompile(`^[A-Za-z0-9]([-A-Za-z0-9.]*[A-Za-z0-9])?(:[0-9]{1,5})?$|^\[[0-9a-fA-F:]+\](:[0-9]{1,5})?$`)

// bucketProviders are the values of chart.bucket.provider.
var bucketProviders = enum{chartsource.BucketGeneric, chartsource.BucketAWS}

// bucketAttribute is chart.bucket (Flux's Bucket, the HelmChart's source).
func bucketAttribute() schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		MarkdownDescription: "An S3-compatible bucket holding the chart (Flux's Bucket, named by the HelmChart's `sourceRef`), with `name` the chart's folder in it (the object keys under `<name>/`). " +
			"The plan lists the objects under `prefix` and shows the bucket's revision in `chart_source_revision` when it upgrades (the SHA-256 of the keys and ETags, as source-controller's artifact revision); the apply deploys the objects planned, and fails rather than deploy objects changed since the plan. " +
			"`username` and `password` (or `password_wo`) are the access key and secret key (Bucket `secretRef` `accesskey`, `secretkey`), `ca_file`, `cert_file` and `key_file` the endpoint's TLS files (`certSecretRef`). " +
			"With `engine = \"flux\"`, the release's own Bucket and the credentials Secret are written beside the HelmRelease. Default: none.",
		Optional: true,
		Attributes: map[string]schema.Attribute{
			"endpoint": schema.StringAttribute{
				MarkdownDescription: "The S3 endpoint, `host` or `host:port`, without a scheme (Bucket `endpoint`), e.g. `s3.amazonaws.com` or `minio.example.com:9000`.",
				Required:            true,
				Validators:          []validator.String{stringvalidator.RegexMatches(bucketEndpointPattern, "must be host or host:port, without a scheme or path")},
			},
			"bucket_name": schema.StringAttribute{
				MarkdownDescription: "The bucket (Bucket `bucketName`).",
				Required:            true,
				Validators:          []validator.String{stringvalidator.LengthBetween(3, 63)},
			},
			"prefix": schema.StringAttribute{
				MarkdownDescription: "Only the objects whose keys start with it make the bucket's revision (Bucket `prefix`). Default: every object.",
				Optional:            true,
			},
			"region": schema.StringAttribute{
				MarkdownDescription: "The bucket's region (Bucket `region`). Default: the endpoint's answer.",
				Optional:            true,
			},
			"provider": schema.StringAttribute{
				MarkdownDescription: "How to authenticate (Bucket `provider`): " + bucketProviders.markdown() + ". `generic`: the access key and secret key, or none. `aws`: without them, the AWS credentials of the machine running Terraform (environment, shared files, instance role) in-process, and of source-controller's pod with `engine = \"flux\"`. Default: `generic`.",
				Optional:            true,
				Validators:          []validator.String{bucketProviders.validator()},
			},
			"insecure": schema.BoolAttribute{
				MarkdownDescription: "Reach the endpoint over plain HTTP instead of HTTPS (Bucket `insecure`). Default: `false`.",
				Optional:            true,
			},
		},
	}
}

// bucketSource is the chartsource.Bucket of chart.bucket: nil when unset.
func bucketSource(o types.Object) *chartsource.Bucket {
	if o.IsNull() || o.IsUnknown() {
		return nil
	}
	a := o.Attributes()
	str := func(name string) string {
		v, _ := a[name].(types.String)
		return v.ValueString()
	}
	insecure, _ := a["insecure"].(types.Bool)
	b := &chartsource.Bucket{Endpoint: str("endpoint"), BucketName: str("bucket_name"), Prefix: str("prefix"), Region: str("region"), Provider: str("provider"), Insecure: insecure.ValueBool()}
	if b.Provider == "" {
		b.Provider = chartsource.BucketGeneric
	}
	return b
}

// validateBucket refuses, at plan, chart attributes that do not apply to
// a chart from a bucket.
func validateBucket(c *chartModel, chart path.Path, diags *diag.Diagnostics) {
	if bucketSource(c.Bucket) == nil {
		return
	}
	if !c.Git.IsNull() {
		attrError(diags, chart.AtName("bucket"), "Two chart sources", "chart.git and chart.bucket both name where the chart comes from.", "Keep one of them.")
	}
	refuseForSource(c, chart, "bucket", "a bucket", [4]string{
		"a chart from a bucket has the version of its Chart.yaml (HelmChart ignores spec.version there)",
		"Bucket verifies TLS: give the endpoint's CA with chart.ca_file, or set chart.bucket.insecure for plain HTTP",
		"a bucket's keys go to its endpoint only",
		"provenance files are for packaged charts, not a chart folder in a bucket",
	}, diags)
}

// recordedBucketObject is chart.bucket of a release's recorded source.
func recordedBucketObject(b *chartsource.Bucket, diags *diag.Diagnostics) types.Object {
	t := releaseChartAttribute().GetType().(types.ObjectType).AttrTypes["bucket"].(types.ObjectType)
	out, d := types.ObjectValue(t.AttrTypes, map[string]attr.Value{
		"endpoint": types.StringValue(b.Endpoint), "bucket_name": types.StringValue(b.BucketName), "prefix": stringOrNull(b.Prefix),
		"region": stringOrNull(b.Region), "provider": stringOrNull(strings.TrimPrefix(b.Provider, chartsource.BucketGeneric)), "insecure": types.BoolNull(),
	})
	diags.Append(d...)
	if b.Insecure {
		attrs := out.Attributes()
		attrs["insecure"] = types.BoolValue(true)
		out, d = types.ObjectValue(t.AttrTypes, attrs)
		diags.Append(d...)
	}
	return out
}
