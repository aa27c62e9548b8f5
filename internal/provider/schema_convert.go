package provider

import (
	"fmt"

	dschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	rschema "github.com/hashicorp/terraform-plugin-framework/resource/schema"
)

// resourceAttribute converts an attribute written for data sources (the ones
// helmrelease_template shares with helmrelease_release) to a resource
// attribute: descriptions, optionality, sensitivity and validators carry
// over. It panics on a kind it does not know, which a unit test catches.
func resourceAttribute(a dschema.Attribute) rschema.Attribute {
	switch t := a.(type) {
	case dschema.StringAttribute:
		return rschema.StringAttribute{MarkdownDescription: t.MarkdownDescription, Required: t.Required, Optional: t.Optional, Computed: t.Computed, Sensitive: t.Sensitive, Validators: t.Validators, DeprecationMessage: t.DeprecationMessage}
	case dschema.BoolAttribute:
		return rschema.BoolAttribute{MarkdownDescription: t.MarkdownDescription, Required: t.Required, Optional: t.Optional, Computed: t.Computed, Sensitive: t.Sensitive, Validators: t.Validators, DeprecationMessage: t.DeprecationMessage}
	case dschema.Int64Attribute:
		return rschema.Int64Attribute{MarkdownDescription: t.MarkdownDescription, Required: t.Required, Optional: t.Optional, Computed: t.Computed, Sensitive: t.Sensitive, Validators: t.Validators, DeprecationMessage: t.DeprecationMessage}
	case dschema.DynamicAttribute:
		return rschema.DynamicAttribute{MarkdownDescription: t.MarkdownDescription, Required: t.Required, Optional: t.Optional, Computed: t.Computed, Sensitive: t.Sensitive, Validators: t.Validators, DeprecationMessage: t.DeprecationMessage}
	case dschema.ListAttribute:
		return rschema.ListAttribute{MarkdownDescription: t.MarkdownDescription, ElementType: t.ElementType, Required: t.Required, Optional: t.Optional, Computed: t.Computed, Sensitive: t.Sensitive, Validators: t.Validators, DeprecationMessage: t.DeprecationMessage}
	case dschema.MapAttribute:
		return rschema.MapAttribute{MarkdownDescription: t.MarkdownDescription, ElementType: t.ElementType, Required: t.Required, Optional: t.Optional, Computed: t.Computed, Sensitive: t.Sensitive, Validators: t.Validators, DeprecationMessage: t.DeprecationMessage}
	case dschema.SingleNestedAttribute:
		return rschema.SingleNestedAttribute{MarkdownDescription: t.MarkdownDescription, Attributes: resourceAttributes(t.Attributes), Required: t.Required, Optional: t.Optional, Computed: t.Computed, Sensitive: t.Sensitive, Validators: t.Validators, DeprecationMessage: t.DeprecationMessage}
	case dschema.ListNestedAttribute:
		return rschema.ListNestedAttribute{
			MarkdownDescription: t.MarkdownDescription,
			NestedObject:        rschema.NestedAttributeObject{Attributes: resourceAttributes(t.NestedObject.Attributes), Validators: t.NestedObject.Validators},
			Required:            t.Required, Optional: t.Optional, Computed: t.Computed, Sensitive: t.Sensitive, Validators: t.Validators, DeprecationMessage: t.DeprecationMessage,
		}
	default:
		panic(fmt.Sprintf("resourceAttribute: no conversion of %T", a))
	}
}

func resourceAttributes(in map[string]dschema.Attribute) map[string]rschema.Attribute {
	out := make(map[string]rschema.Attribute, len(in))
	for k, a := range in {
		out[k] = resourceAttribute(a)
	}
	return out
}
