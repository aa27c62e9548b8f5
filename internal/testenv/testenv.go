// Package testenv decides what a test does when a tool it needs is
// missing. Only tests import it.
package testenv

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// AllowSkipVariable names the tests that may skip for a missing tool while
// TF_ACC is set: a comma-separated list of test names (top-level, as
// `go test -run` takes them). It is the one way to opt out.
const AllowSkipVariable = "HELMRELEASE_TEST_ALLOW_SKIP"

// SkipUnlessRequired skips t for reason (what it needs and how to give
// it) outside acceptance runs. With TF_ACC set, a missing tool fails the
// test instead, so that a run meant to test everything cannot pass by
// testing less, unless AllowSkipVariable names the test.
func SkipUnlessRequired(t testing.TB, reason string) {
	t.Helper()
	if os.Getenv("TF_ACC") == "" || Allowed(t.Name()) {
		t.Skip(reason)
	}
	t.Fatalf("%s\n\nWith TF_ACC set a test does not skip for a missing tool: provide it, or name the test in %s to skip it on purpose.", reason, AllowSkipVariable)
}

// Allowed reports whether AllowSkipVariable names the test name (or the
// top-level test of a subtest name).
func Allowed(name string) bool {
	top, _, _ := strings.Cut(name, "/")
	return slices.Contains(strings.Split(os.Getenv(AllowSkipVariable), ","), top)
}
