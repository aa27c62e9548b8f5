package main

import (
	"reflect"
	"testing"
)

func TestHCLValues(t *testing.T) {
	for _, tc := range []struct {
		expr, message string
		want          map[string]any
	}{
		{"{ message = var.message }", "hello", map[string]any{"message": "hello"}},
		{"{ commonLabels = { bench = var.message } }", "changed", map[string]any{"commonLabels": map[string]any{"bench": "changed"}}},
		{`{ replicas = 2, name = "x-${var.message}" }`, "a", map[string]any{"replicas": float64(2), "name": "x-a"}},
	} {
		got, err := hclValues(tc.expr, tc.message)
		if err != nil {
			t.Fatalf("%s: %v", tc.expr, err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s with %q: got %v, want %v", tc.expr, tc.message, got, tc.want)
		}
	}
	if _, err := hclValues("{ message = var.nope }", "x"); err == nil {
		t.Error("an unknown variable evaluated without error")
	}
}
