// Package helm is the thin layer over the Helm SDK (Helm 4): its actions,
// its release storage and the types the rest of the project speaks
// (types.go: releases, hooks, statuses, charts, post-renderers; values.go:
// --set parsing and values merging). The reconciler holds Actions, not the
// Client, so that tests or another Helm major can stand behind it.
//
// # The seam
//
// No package imports helm.sh/helm but three, which the depguard rule of
// .golangci.yml enforces:
//   - internal/helm: the actions, storage, rendering and types;
//   - internal/chartsource: chart archives, repositories (index.yaml),
//     OCI registries and provenance, as Helm reads them;
//   - internal/testrepo: the tests' repositories and registries, which
//     write Helm's formats.
//
// github.com/fluxcd/pkg/chartutil (DigestValues, in internal/flux: the
// values digest helm-controller records) is built on the same Helm 4.
//
// # Helm 4 as helm-controller runs it
//
// The options of this package say what helm-controller v1.6 decides, so
// that both engines deploy alike:
//   - Apply method. An install writes by server-side apply unless told
//     otherwise; an upgrade or rollback as ApplyMethod says, by default as
//     the release's record says it was written (apply_method "ssa",
//     "csa"; a record Helm 3 wrote has none and is client-side). Server-
//     side applies force conflicts, and client-side ones alone replace
//     objects on Force, as helm-controller resolves "auto" itself
//     (serverSideApply) to set both.
//   - Waiting. Helm's legacy waiter, or the Poller: fluxcd/pkg/ssa's
//     kstatus polling, health checks first, which helm-controller runs for
//     its poller strategy (it gives Helm "watcher" and answers GetWaiter
//     itself; Helm's own watcher is not used). With the Poller, hooks and
//     tests are waited for by polling too (Jobs complete, Pods succeeded).
//     A hook-only wait (an action that does not wait) still waits for
//     hooks, with the waiter of the strategy.
//   - Hooks and post-renderers. PostRenderStrategy; the zero value is
//     PostRenderNoHooks (hooks as Helm 3 rendered them).
//   - Logging. Helm logs through slog into the LogBuffer of the client;
//     Helm's legacy waiter logs to slog's default logger, which the
//     provider process leaves as it is.
//
// # Requests
//
// Helm 4 reads each object one after another before it adopts, creates
// or deletes it, and before an update writes it. Those reads still go
// out, but ahead of Helm or as one list of a kind (readahead.go), each
// answer given to Helm's own read under rules that keep what it reads
// what it would have read; an update applies a kind's objects in
// parallel parts (update.go); Build decodes a manifest once per process
// (built.go).
//
// # Behaviours no option takes back (against Helm 3)
//
//   - Manifest splitting: each document of a template is trimmed of its
//     leading white space only, so a block scalar kept with "|+" that
//     ends a document keeps its trailing empty lines (Helm 3 left one
//     line break).
//   - Post-rendering: the objects of every template file go through the
//     post-renderers in one stream, each annotated with its file
//     (PostRenderFileAnnotation), and are re-serialised after them.
//   - Install order: MutatingWebhookConfiguration and
//     ValidatingWebhookConfiguration last among the kinds Helm knows.
//   - Records: apply_method, which Helm 3 ignores and drops on rewrite.
package helm
