package helm

import (
	"helm.sh/helm/v4/pkg/chart/common"
	chartutil "helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/strvals"
)

// ParseSet sets into values what `helm --set` would of s (path=value,
// typed: numbers, booleans, null, {a,b} lists).
func ParseSet(s string, values map[string]any) error { return strvals.ParseInto(s, values) }

// ParseSetString sets into values what `helm --set-string` would of s
// (path=value, always a string).
func ParseSetString(s string, values map[string]any) error {
	return strvals.ParseIntoString(s, values)
}

// ReadValues parses a values document (YAML or JSON).
func ReadValues(data []byte) (map[string]any, error) {
	v, err := common.ReadValues(data)
	if err != nil {
		return nil, err
	}
	return v.AsMap(), nil
}

// MergeTables merges src into dst, as Helm merges values files: maps
// deeply, dst's values winning; it returns dst.
func MergeTables(dst, src map[string]any) map[string]any { return chartutil.MergeTables(dst, src) }
