// Package e2e holds the tests that drive the terraform binary and a build
// of this provider against a local cluster of their own.
//
// The fault matrix breaks things around them the way production does —
// terraform killed mid-apply, the API server gone during an upgrade, the
// cluster or the chart repository unreachable, two state files claiming
// one release, hooks that never finish — then checks that Helm storage,
// the cluster and the Terraform state end consistent; it also walks every
// input that can carry a secret through every output a user or a log can
// see. docs/guides/what-survives-what.md lists the cases.
//
// The tests run with TF_ACC set (make test; make test-all adds those that
// need Flux's controllers, the race build and the release tools) and need
// the local test cluster (they stop and start its API server, so they
// never use the shared cluster HELMRELEASE_TEST_KUBECONFIG names).
package e2e
