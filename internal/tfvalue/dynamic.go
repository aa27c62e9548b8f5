package tfvalue

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/big"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// ValuesMap converts a dynamic HCL value to Helm values. Null is an empty
// map; anything but an object or map is an error, since values are a map.
func ValuesMap(d types.Dynamic) (map[string]any, error) {
	if d.IsNull() || d.IsUnderlyingValueNull() {
		return map[string]any{}, nil
	}
	v, err := GoValue(d.UnderlyingValue())
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("values must be an object, e.g. { replicaCount = 2 }, not %T", v)
	}
	return m, nil
}

// GoValue converts a known Terraform value to what Helm expects of YAML:
// maps, slices, strings, bools, int64 for whole numbers, float64 otherwise.
func GoValue(v attr.Value) (any, error) {
	if v == nil || v.IsNull() {
		return nil, nil
	}
	if v.IsUnknown() {
		return nil, fmt.Errorf("value is not known yet")
	}
	switch t := v.(type) {
	case basetypes.DynamicValue:
		return GoValue(t.UnderlyingValue())
	case basetypes.StringValue:
		return t.ValueString(), nil
	case basetypes.BoolValue:
		return t.ValueBool(), nil
	case basetypes.NumberValue:
		f := t.ValueBigFloat()
		if f.IsInt() {
			if i, acc := f.Int64(); acc == 0 {
				return i, nil
			}
		}
		x, _ := f.Float64()
		if math.IsInf(x, 0) {
			return nil, fmt.Errorf("number %s is out of range", f.String())
		}
		return x, nil
	case basetypes.Int64Value:
		return t.ValueInt64(), nil
	case basetypes.Float64Value:
		return t.ValueFloat64(), nil
	case basetypes.ObjectValue:
		return goMap(t.Attributes())
	case basetypes.MapValue:
		return goMap(t.Elements())
	case basetypes.ListValue:
		return goList(t.Elements())
	case basetypes.TupleValue:
		return goList(t.Elements())
	case basetypes.SetValue:
		return goList(t.Elements())
	default:
		return nil, fmt.Errorf("unsupported value type %s", v.Type(context.Background()))
	}
}

func goMap(in map[string]attr.Value) (map[string]any, error) {
	out := make(map[string]any, len(in))
	for k, v := range in {
		g, err := GoValue(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		out[k] = g
	}
	return out, nil
}

func goList(in []attr.Value) ([]any, error) {
	out := make([]any, len(in))
	for i, v := range in {
		g, err := GoValue(v)
		if err != nil {
			return nil, fmt.Errorf("[%d]: %w", i, err)
		}
		out[i] = g
	}
	return out, nil
}

// FullyKnown reports whether v and everything inside it is known.
func FullyKnown(v attr.Value) bool {
	if v == nil || v.IsNull() {
		return true
	}
	if v.IsUnknown() {
		return false
	}
	var children []attr.Value
	switch t := v.(type) {
	case basetypes.DynamicValue:
		if t.IsUnderlyingValueUnknown() {
			return false
		}
		return FullyKnown(t.UnderlyingValue())
	case basetypes.ObjectValue:
		for _, c := range t.Attributes() {
			children = append(children, c)
		}
	case basetypes.MapValue:
		for _, c := range t.Elements() {
			children = append(children, c)
		}
	case basetypes.ListValue:
		children = t.Elements()
	case basetypes.SetValue:
		children = t.Elements()
	case basetypes.TupleValue:
		children = t.Elements()
	}
	for _, c := range children {
		if !FullyKnown(c) {
			return false
		}
	}
	return true
}

// FromGo converts Helm values (decoded JSON or YAML) to the value
// HCL would make of them: objects, tuples, strings, numbers, bools.
func FromGo(v any) attr.Value {
	switch t := v.(type) {
	case map[string]any:
		attrs := make(map[string]attr.Value, len(t))
		attrTypes := make(map[string]attr.Type, len(t))
		for k, e := range t {
			attrs[k] = FromGo(e)
			attrTypes[k] = attrs[k].Type(context.Background())
		}
		return types.ObjectValueMust(attrTypes, attrs)
	case []any:
		elems := make([]attr.Value, len(t))
		elemTypes := make([]attr.Type, len(t))
		for i, e := range t {
			elems[i] = FromGo(e)
			elemTypes[i] = elems[i].Type(context.Background())
		}
		return types.TupleValueMust(elemTypes, elems)
	case string:
		return types.StringValue(t)
	case bool:
		return types.BoolValue(t)
	case float64:
		return types.NumberValue(big.NewFloat(t))
	case int64:
		return types.NumberValue(new(big.Float).SetInt64(t))
	case int:
		return types.NumberValue(new(big.Float).SetInt64(int64(t)))
	case json.Number:
		f, _, err := big.ParseFloat(string(t), 10, 512, big.ToNearestEven)
		if err != nil {
			return types.StringValue(string(t))
		}
		return types.NumberValue(f)
	case nil:
		return types.DynamicNull()
	default:
		return types.StringValue(fmt.Sprint(t))
	}
}

// Null is the null value of type t.
func Null(t attr.Type) attr.Value {
	v, err := t.ValueFromTerraform(context.Background(), tftypes.NewValue(t.TerraformType(context.Background()), nil))
	if err != nil {
		return types.DynamicNull()
	}
	return v
}
