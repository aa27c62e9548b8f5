package values

import (
	"slices"
	"strconv"
)

// SensitivePaths are the paths (keys, list indexes in decimal) of the
// strings of v equal to one of sensitive, in a stable order.
func SensitivePaths(v map[string]any, sensitive map[string]bool) [][]string {
	var out [][]string
	var walk func(v any, at []string)
	walk = func(v any, at []string) {
		switch t := v.(type) {
		case string:
			if sensitive[t] {
				out = append(out, slices.Clone(at))
			}
		case map[string]any:
			for k, e := range t {
				walk(e, append(at, k))
			}
		case []any:
			for i, e := range t {
				walk(e, append(at, strconv.Itoa(i)))
			}
		}
	}
	walk(v, nil)
	slices.SortFunc(out, func(a, b []string) int { return slices.Compare(a, b) })
	return out
}

// StringsAt are the strings at paths in v; paths that lead elsewhere are
// left out.
func StringsAt(v map[string]any, paths [][]string) []string {
	var out []string
	for _, p := range paths {
		var cur any = v
		for _, seg := range p {
			switch t := cur.(type) {
			case map[string]any:
				cur = t[seg]
			case []any:
				i, err := strconv.Atoi(seg)
				if err != nil || i < 0 || i >= len(t) {
					cur = nil
				} else {
					cur = t[i]
				}
			default:
				cur = nil
			}
		}
		if s, ok := cur.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
