// Package helm is the thin layer over the Helm SDK (Helm 3): its actions,
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
// One more module ties the build to Helm 3: github.com/fluxcd/pkg/chartutil
// v1.17.0, for DigestValues in internal/flux (the values digest
// helm-controller records); its later versions require Helm 4 (`go mod why
// -m github.com/fluxcd/pkg/chartutil`).
//
// # What a move to Helm 4 changes here
//
// Helm 4 moves the types (pkg/release/v1, with actions returning a
// release.Releaser to assert; pkg/release/common for statuses;
// pkg/chart/v2 and its loader; pkg/repo/v1; pkg/postrenderer) and renames
// action options (Atomic becomes RollbackOnFailure, Force ForceReplace,
// DryRun and ClientOnly a DryRunStrategy; new ServerSideApply,
// WaitStrategy and PostRenderStrategy); it logs through slog, which
// LogBuffer would take as a handler. The aliases of types.go and the
// option structs of this package absorb the moves: their users keep their
// names.
//
// # Behaviours that differ between Helm 3 and Helm 4
//
// What this package does (Helm 3), against what Helm 4 does (Flux's
// helm-controller v1.5 and later run it, so a release handed to Flux
// meets it):
//   - Apply method. Helm 3 creates objects, then updates them by three-way
//     merge patches, client-side, as the field manager FieldManager. Helm 4
//     installs by server-side apply by default (helm-controller's
//     install.serverSideApply defaults to true) and records it in the
//     release record's apply_method ("ssa", "csa"); an upgrade or rollback
//     in "auto" mode applies as the previous record says, and a record
//     written by Helm 3 has none, so a release this provider installed
//     stays client-side under a Helm 4 controller until
//     upgrade.server_side_apply says otherwise.
//   - Release records. Helm 4 adds apply_method; Helm 3 reads such records
//     and ignores the field, and the records it writes have none. So a
//     release the controller installed ("ssa"), taken back by this
//     provider and handed over again, is upgraded client-side from then
//     on; its objects stay in place throughout (e2e
//     TestFluxHandOverRecords).
//   - Waiting. Helm 3's waiter checks Deployments, StatefulSets, Jobs and
//     the like by kind (wait_strategy "legacy"); this package also waits
//     by kstatus (Poller, "poller"), which is Helm 4's default (its
//     "watcher" strategy).
//   - Hooks and post-renderers. Helm 3 post-renders the release's objects,
//     never its hooks. Helm 4.2 post-renders hooks with them by default;
//     helm-controller v1.6 says how with postRenderStrategy, which the
//     provider writes as "nohooks" unless told otherwise, so that hooks are
//     what the plan rendered.
//   - Manifest splitting. Helm 3 trims each document of a rendered
//     manifest of its surrounding white space, Helm 4.2 (pkg/release/v1/util)
//     of its leading white space only. Renders that differ between the
//     Helms have been seen (a block scalar's final newline under
//     helm-controller v1.5.5, Helm 4.2.0; the Flux guide lists them by
//     controller version); with engine = "flux" the apply reports each
//     object and field the controller deployed otherwise than planned, and
//     the state records what was deployed.
//   - Install order. Helm 4 orders MutatingWebhookConfiguration and
//     ValidatingWebhookConfiguration last among the kinds it knows; Helm 3
//     knows neither and installs them with the other unknown kinds, after
//     the known ones.
package helm
