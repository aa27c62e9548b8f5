// Package testenv decides what a test does when a tool it needs is
// missing. Only tests import it.
package testenv

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// AllowSkipVariable names the tests that may skip for a missing tool in
// CI: a comma-separated list of test names (top-level, as `go test -run`
// takes them). It is the one way to opt out there.
const AllowSkipVariable = "HELMRELEASE_TEST_ALLOW_SKIP"

// SkipUnlessRequired skips t for reason (what it needs and how to give
// it). In CI (CI=true) a missing tool fails the test instead, so that a
// run meant to test everything cannot pass by testing less, unless
// AllowSkipVariable names the test. make test lists every skip, with its
// reason, at the end of the run.
func SkipUnlessRequired(t testing.TB, reason string) {
	t.Helper()
	if !Strict() || Allowed(t.Name()) {
		t.Skip(reason)
	}
	t.Fatalf("%s\n\nIn CI a test does not skip for a missing tool: provide it, or name the test in %s to skip it on purpose.", reason, AllowSkipVariable)
}

// Strict reports whether a missing tool fails a test: CI is set to a
// true value, as CI services set it.
func Strict() bool {
	ci, _ := strconv.ParseBool(os.Getenv("CI"))
	return ci
}

// Allowed reports whether AllowSkipVariable names the test name (or the
// top-level test of a subtest name).
func Allowed(name string) bool {
	top, _, _ := strings.Cut(name, "/")
	return slices.Contains(strings.Split(os.Getenv(AllowSkipVariable), ","), top)
}

// FullSuiteVariable, set to a true value by make test-all (which CI
// runs), adds to make test what it leaves out to stay short: Flux's
// controllers and every helm-controller version, the race detector's
// builds, OpenTofu, the Helm 3 CLI and the release archives.
const FullSuiteVariable = "HELMRELEASE_TEST_ALL"

// FullSuite reports whether the run is make test-all's.
func FullSuite() bool {
	all, _ := strconv.ParseBool(os.Getenv(FullSuiteVariable))
	return all
}

// FullSuiteOnly skips t unless the run is make test-all's; what names
// the work make test leaves to it. It is not a missing tool: CI's
// strictness does not apply, as make test-all runs the test.
func FullSuiteOnly(t testing.TB, what string) {
	t.Helper()
	if !FullSuite() {
		t.Skipf("make test-all runs this (%s=1): %s", FullSuiteVariable, what)
	}
}
