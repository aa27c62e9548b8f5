// Package tfvalue converts between Go values and terraform-plugin-framework
// values: models (structs of framework values with tfsdk tags) from and to
// objects (ObjectInto, ObjectFrom), faster than the framework's own
// reflection; dynamic HCL values to Helm values and back (ValuesMap,
// GoValue, FromGo); whether a value is known all through (FullyKnown); the
// null of a type (Null). It knows no schema of the provider's.
package tfvalue
