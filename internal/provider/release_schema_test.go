package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	dschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	rschema "github.com/hashicorp/terraform-plugin-framework/resource/schema"
)

// describedAttribute is what every schema attribute tells.
type describedAttribute interface {
	GetMarkdownDescription() string
	IsOptional() bool
	IsRequired() bool
}

// TestSchemaDescriptions: every attribute has a description; every
// optional one says its default.
func TestSchemaDescriptions(t *testing.T) {
	ctx := context.Background()
	var rresp resource.SchemaResponse
	NewReleaseResource().Schema(ctx, resource.SchemaRequest{}, &rresp)
	if rresp.Diagnostics.HasError() {
		t.Fatal(rresp.Diagnostics)
	}
	if diags := rresp.Schema.ValidateImplementation(ctx); diags.HasError() {
		t.Fatal(diags)
	}
	walkResource(t, "helmrelease_release", rresp.Schema.Attributes)
	for _, ds := range []datasource.DataSource{NewTemplateDataSource(), NewChartDataSource()} {
		var dresp datasource.SchemaResponse
		ds.Schema(ctx, datasource.SchemaRequest{}, &dresp)
		walkDataSource(t, "data source", dresp.Schema.Attributes)
	}
}

func checkDescription(t *testing.T, path string, a describedAttribute) {
	t.Helper()
	d := a.GetMarkdownDescription()
	switch {
	case strings.TrimSpace(d) == "":
		t.Errorf("%s has no description", path)
	case a.IsOptional() && !strings.Contains(d, "Default"):
		t.Errorf("%s is optional and its description names no default: %q", path, d)
	}
}

func walkResource(t *testing.T, prefix string, attrs map[string]rschema.Attribute) {
	for name, a := range attrs {
		p := prefix + "." + name
		checkDescription(t, p, a)
		switch n := a.(type) {
		case rschema.SingleNestedAttribute:
			walkResource(t, p, n.Attributes)
		case rschema.ListNestedAttribute:
			walkResource(t, p, n.NestedObject.Attributes)
		case rschema.MapNestedAttribute:
			walkResource(t, p, n.NestedObject.Attributes)
		}
	}
}

func walkDataSource(t *testing.T, prefix string, attrs map[string]dschema.Attribute) {
	for name, a := range attrs {
		p := prefix + "." + name
		checkDescription(t, p, a)
		switch n := a.(type) {
		case dschema.SingleNestedAttribute:
			walkDataSource(t, p, n.Attributes)
		case dschema.ListNestedAttribute:
			walkDataSource(t, p, n.NestedObject.Attributes)
		}
	}
}
