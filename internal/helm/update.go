package helm

import (
	"strings"
	"sync"

	"helm.sh/helm/v4/pkg/kube"
)

// updateWorkers is how many parts of a kind's objects an upgrade applies
// at once; updateChunk the fewest objects a part has.
const (
	updateWorkers = 16
	updateChunk   = 8
)

// Update is Helm's, with each kind's objects applied in parallel parts:
// Helm 4 reads then applies an upgrade's objects one after another (1,000
// ConfigMaps took 7.8 s so), where its install applies a kind's objects
// at once. Kinds keep the manifest's order, one after another (a
// Namespace before what it holds), as Helm's install does. Each part is
// Helm's own Update of those objects, so a create, an apply, a conflict
// and their errors are Helm's; the objects the new manifest no longer
// has are deleted after, by Helm's Update too, and only when every part
// succeeded, as Helm does. Helm's read of each object before it writes it
// is answered by a list of its kind where there are many (readAhead.updating).
func (k *kubeClient) Update(originals, targets kube.ResourceList, options ...kube.ClientUpdateOption) (*kube.Result, error) {
	defer k.reads.updating(targets)()
	res := &kube.Result{}
	for _, run := range kindRuns(targets) {
		parts := split(run)
		results, errs := make([]*kube.Result, len(parts)), make([]error, len(parts))
		var wg sync.WaitGroup
		for i, part := range parts {
			wg.Go(func() { results[i], errs[i] = k.Client.Update(originals.Intersect(part), part, options...) })
		}
		wg.Wait()
		for _, r := range results {
			if r != nil {
				res.Created = append(res.Created, r.Created...)
				res.Updated = append(res.Updated, r.Updated...)
			}
		}
		if err := joinUpdateErrors(errs); err != nil {
			return res, err
		}
	}
	if removed := originals.Difference(targets); len(removed) > 0 {
		r, err := k.Client.Update(removed, nil, options...)
		if r != nil {
			res.Deleted = r.Deleted
		}
		return res, err
	}
	return res, nil
}

// kindRuns splits list where the kind changes.
func kindRuns(list kube.ResourceList) []kube.ResourceList {
	var runs []kube.ResourceList
	for i, info := range list {
		kind := info.Object.GetObjectKind().GroupVersionKind().GroupKind()
		if i == 0 || kind != list[i-1].Object.GetObjectKind().GroupVersionKind().GroupKind() {
			runs = append(runs, nil)
		}
		runs[len(runs)-1] = append(runs[len(runs)-1], info)
	}
	return runs
}

// split cuts run into at most updateWorkers parts of at least updateChunk
// objects (the last may have fewer), in order.
func split(run kube.ResourceList) []kube.ResourceList {
	n := min(updateWorkers, max(1, len(run)/updateChunk))
	size := (len(run) + n - 1) / n
	var parts []kube.ResourceList
	for len(run) > 0 {
		m := min(size, len(run))
		parts = append(parts, run[:m:m])
		run = run[m:]
	}
	return parts
}

// joinUpdateErrors joins the parts' errors as Helm joins an update's: " && ".
func joinUpdateErrors(errs []error) error {
	var out updateErrors
	for _, err := range errs {
		if err != nil {
			out = append(out, err)
		}
	}
	switch len(out) {
	case 0:
		return nil
	case 1:
		return out[0]
	}
	return out
}

// updateErrors are the errors of parts of an update; errors.Is and
// errors.As reach each.
type updateErrors []error

func (e updateErrors) Error() string {
	msgs := make([]string, len(e))
	for i, err := range e {
		msgs[i] = err.Error()
	}
	return strings.Join(msgs, " && ")
}

func (e updateErrors) Unwrap() []error { return e }
