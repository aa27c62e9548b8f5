// Package show shows a release's objects as a plan and the state show
// them: each object by key (manifest.Key) as YAML, Secret values hashed
// under the release's key, sensitive strings masked in every object,
// drifted objects as they are live; and, for a chart whose templates call
// functions of changing results (random values, the time), which objects
// a second render with those results perturbed makes otherwise: those a
// plan cannot promise.
package show
