package tfvalue

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
)

// Models (structs of framework values with tfsdk tags) are read from and
// written to framework values here rather than by the framework's reflection (tfsdk.Plan.Get, Set,
// types.Object.As, ObjectValueFrom), which looks every struct field's tag up
// again on each conversion and compiles a regular expression per field to
// check it: with a 35-attribute resource converted five times per plan, a
// tenth of a no-change plan's CPU. The rules are the framework's for the
// field types the models use: attr.Value fields hold the value as it is;
// string, bool and int64 fields hold known values (null reads as the zero
// value); a pointer to a struct is a null object when nil; a nil slice or
// map is a null list or map; embedded structs add their fields.

// modelField is a struct field with a tfsdk tag.
type modelField struct {
	name  string
	index []int
}

var modelFieldsByType sync.Map // reflect.Type → []modelField

// modelFields lists the tagged fields of struct type t, embedded structs'
// included, once per type.
func modelFields(t reflect.Type) []modelField {
	if f, ok := modelFieldsByType.Load(t); ok {
		return f.([]modelField)
	}
	var fields []modelField
	for i := range t.NumField() {
		sf := t.Field(i)
		if sf.Anonymous && sf.Type.Kind() == reflect.Struct {
			for _, inner := range modelFields(sf.Type) {
				fields = append(fields, modelField{name: inner.name, index: append([]int{i}, inner.index...)})
			}
			continue
		}
		name, _, _ := strings.Cut(sf.Tag.Get("tfsdk"), ",")
		if name == "" || name == "-" {
			continue
		}
		fields = append(fields, modelField{name: name, index: []int{i}})
	}
	modelFieldsByType.Store(t, fields)
	return fields
}

var attrValueType = reflect.TypeFor[attr.Value]()

// decodeValue sets dst from v.
func decodeValue(ctx context.Context, dst reflect.Value, v attr.Value) error {
	if dst.Type().Implements(attrValueType) {
		rv := reflect.ValueOf(v)
		if !rv.Type().AssignableTo(dst.Type()) {
			return fmt.Errorf("a %T cannot hold a %T", dst.Interface(), v)
		}
		dst.Set(rv)
		return nil
	}
	if v.IsUnknown() {
		return fmt.Errorf("an unknown value cannot be read into a %s", dst.Type())
	}
	switch dst.Kind() {
	case reflect.String:
		s, ok := v.(basetypes.StringValue)
		if !ok {
			return fmt.Errorf("a string cannot hold a %T", v)
		}
		dst.SetString(s.ValueString())
	case reflect.Bool:
		b, ok := v.(basetypes.BoolValue)
		if !ok {
			return fmt.Errorf("a bool cannot hold a %T", v)
		}
		dst.SetBool(b.ValueBool())
	case reflect.Int64:
		n, ok := v.(basetypes.Int64Value)
		if !ok {
			return fmt.Errorf("an int64 cannot hold a %T", v)
		}
		dst.SetInt(n.ValueInt64())
	case reflect.Pointer:
		if v.IsNull() {
			dst.SetZero()
			return nil
		}
		p := reflect.New(dst.Type().Elem())
		if err := decodeValue(ctx, p.Elem(), v); err != nil {
			return err
		}
		dst.Set(p)
	case reflect.Struct:
		o, ok := v.(basetypes.ObjectValuable)
		if !ok {
			return fmt.Errorf("a struct cannot hold a %T", v)
		}
		obj, d := o.ToObjectValue(ctx)
		if d.HasError() {
			return fmt.Errorf("reading an object: %s", diagSummary(d))
		}
		return decodeAttributes(ctx, dst, obj.Attributes())
	case reflect.Slice:
		if v.IsNull() {
			dst.SetZero()
			return nil
		}
		var elems []attr.Value
		switch l := v.(type) {
		case basetypes.ListValue:
			elems = l.Elements()
		case basetypes.SetValue:
			elems = l.Elements()
		default:
			return fmt.Errorf("a slice cannot hold a %T", v)
		}
		s := reflect.MakeSlice(dst.Type(), len(elems), len(elems))
		for i, e := range elems {
			if err := decodeValue(ctx, s.Index(i), e); err != nil {
				return fmt.Errorf("element %d: %w", i, err)
			}
		}
		dst.Set(s)
	case reflect.Map:
		if v.IsNull() {
			dst.SetZero()
			return nil
		}
		m, ok := v.(basetypes.MapValue)
		if !ok || dst.Type().Key().Kind() != reflect.String {
			return fmt.Errorf("a %s cannot hold a %T", dst.Type(), v)
		}
		out := reflect.MakeMapWithSize(dst.Type(), len(m.Elements()))
		for k, e := range m.Elements() {
			ev := reflect.New(dst.Type().Elem()).Elem()
			if err := decodeValue(ctx, ev, e); err != nil {
				return fmt.Errorf("element %q: %w", k, err)
			}
			out.SetMapIndex(reflect.ValueOf(k).Convert(dst.Type().Key()), ev)
		}
		dst.Set(out)
	default:
		return fmt.Errorf("fields of type %s are not supported", dst.Type())
	}
	return nil
}

// decodeAttributes sets the fields of struct dst from the attributes of an
// object; every field must have its attribute.
func decodeAttributes(ctx context.Context, dst reflect.Value, attrs map[string]attr.Value) error {
	for _, f := range modelFields(dst.Type()) {
		v, ok := attrs[f.name]
		if !ok {
			return fmt.Errorf("no attribute %q", f.name)
		}
		if err := decodeValue(ctx, dst.FieldByIndex(f.index), v); err != nil {
			return fmt.Errorf("attribute %q: %w", f.name, err)
		}
	}
	return nil
}

// encodeValue is the value of type t that src holds.
func encodeValue(ctx context.Context, src reflect.Value, t attr.Type) (attr.Value, error) {
	if src.Type().Implements(attrValueType) {
		return src.Interface().(attr.Value), nil
	}
	switch src.Kind() {
	case reflect.String:
		return types.StringValue(src.String()), nil
	case reflect.Bool:
		return types.BoolValue(src.Bool()), nil
	case reflect.Int64:
		return types.Int64Value(src.Int()), nil
	case reflect.Pointer:
		if src.IsNil() {
			return Null(t), nil
		}
		return encodeValue(ctx, src.Elem(), t)
	case reflect.Struct:
		ot, ok := t.(basetypes.ObjectType)
		if !ok {
			return nil, fmt.Errorf("a struct is not a %s", t)
		}
		return encodeObject(ctx, src, ot.AttrTypes)
	case reflect.Slice:
		lt, ok := t.(basetypes.ListType)
		if !ok {
			return nil, fmt.Errorf("a slice is not a %s", t)
		}
		if src.IsNil() {
			return types.ListNull(lt.ElemType), nil
		}
		elems := make([]attr.Value, src.Len())
		for i := range elems {
			e, err := encodeValue(ctx, src.Index(i), lt.ElemType)
			if err != nil {
				return nil, fmt.Errorf("element %d: %w", i, err)
			}
			elems[i] = e
		}
		l, d := types.ListValue(lt.ElemType, elems)
		if d.HasError() {
			return nil, fmt.Errorf("making a list: %s", diagSummary(d))
		}
		return l, nil
	case reflect.Map:
		mt, ok := t.(basetypes.MapType)
		if !ok || src.Type().Key().Kind() != reflect.String {
			return nil, fmt.Errorf("a %s is not a %s", src.Type(), t)
		}
		if src.IsNil() {
			return types.MapNull(mt.ElemType), nil
		}
		elems := make(map[string]attr.Value, src.Len())
		for it := src.MapRange(); it.Next(); {
			e, err := encodeValue(ctx, it.Value(), mt.ElemType)
			if err != nil {
				return nil, fmt.Errorf("element %q: %w", it.Key().String(), err)
			}
			elems[it.Key().String()] = e
		}
		m, d := types.MapValue(mt.ElemType, elems)
		if d.HasError() {
			return nil, fmt.Errorf("making a map: %s", diagSummary(d))
		}
		return m, nil
	default:
		return nil, fmt.Errorf("fields of type %s are not supported", src.Type())
	}
}

// encodeObject is the object of struct src.
func encodeObject(ctx context.Context, src reflect.Value, attrTypes map[string]attr.Type) (types.Object, error) {
	attrs := make(map[string]attr.Value, len(attrTypes))
	for _, f := range modelFields(src.Type()) {
		t, ok := attrTypes[f.name]
		if !ok {
			return types.Object{}, fmt.Errorf("no attribute %q", f.name)
		}
		v, err := encodeValue(ctx, src.FieldByIndex(f.index), t)
		if err != nil {
			return types.Object{}, fmt.Errorf("attribute %q: %w", f.name, err)
		}
		attrs[f.name] = v
	}
	o, d := types.ObjectValue(attrTypes, attrs)
	if d.HasError() {
		return types.Object{}, fmt.Errorf("making an object: %s", diagSummary(d))
	}
	return o, nil
}

func diagSummary(d diag.Diagnostics) string {
	var parts []string
	for _, e := range d.Errors() {
		parts = append(parts, e.Summary()+": "+e.Detail())
	}
	return strings.Join(parts, "; ")
}

// ConversionError is the diagnostic of a model that does not match its
// schema: a defect of the provider, never of the configuration.
func ConversionError(what string, err error) diag.Diagnostics {
	var d diag.Diagnostics
	d.AddError("Provider defect: "+what+" does not match the schema",
		fmt.Sprintf("The provider could not convert %s: %s.\n\nThis is a defect of the provider; please report it with this message.", what, err))
	return d
}

// ObjectInto reads object o into target, a pointer to a model struct.
func ObjectInto(ctx context.Context, o basetypes.ObjectValue, target any) diag.Diagnostics {
	if err := decodeAttributes(ctx, reflect.ValueOf(target).Elem(), o.Attributes()); err != nil {
		return ConversionError(fmt.Sprintf("%T", target), err)
	}
	return nil
}

// ObjectFrom is the object of model struct m (a value or a pointer).
func ObjectFrom(ctx context.Context, attrTypes map[string]attr.Type, m any) (types.Object, diag.Diagnostics) {
	rv := reflect.Indirect(reflect.ValueOf(m))
	o, err := encodeObject(ctx, rv, attrTypes)
	if err != nil {
		return types.ObjectNull(attrTypes), ConversionError(rv.Type().String(), err)
	}
	return o, nil
}
