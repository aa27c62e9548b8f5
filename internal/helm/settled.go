package helm

import (
	"errors"
	"fmt"

	ri "helm.sh/helm/v4/pkg/release"
	"helm.sh/helm/v4/pkg/storage/driver"
)

// ErrSettledView: a write through a settled view of Helm storage.
var ErrSettledView = errors.New("the settled view of Helm storage is read-only")

// SettledView wraps a storage driver for renders of a release another
// client may be acting on (Flux's helm-controller, on its own schedule): it
// shows the history as of its newest settled revision, pending ones hidden,
// and refuses writes. A dry-run upgrade then renders from that revision,
// where Helm would otherwise refuse it ("another operation is in
// progress"); it takes no lock and waits for none.
func SettledView(d driver.Driver) driver.Driver { return &settled{Driver: d} }

type settled struct{ driver.Driver }

func (s *settled) Create(key string, _ ri.Releaser) error {
	return fmt.Errorf("creating %s: %w", key, ErrSettledView)
}

func (s *settled) Update(key string, _ ri.Releaser) error {
	return fmt.Errorf("updating %s: %w", key, ErrSettledView)
}

func (s *settled) Delete(key string) (ri.Releaser, error) {
	return nil, fmt.Errorf("deleting %s: %w", key, ErrSettledView)
}

func (s *settled) List(filter func(ri.Releaser) bool) ([]ri.Releaser, error) {
	return s.Driver.List(func(r ri.Releaser) bool { return !pending(r) && filter(r) })
}

func (s *settled) Query(labels map[string]string) ([]ri.Releaser, error) {
	found, err := s.Driver.Query(labels)
	if err != nil {
		return nil, err
	}
	out := found[:0:0]
	for _, r := range found {
		if !pending(r) {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return nil, driver.ErrReleaseNotFound
	}
	return out, nil
}

// pending: a record under way. One of another type than Helm's v1 is
// shown, for Helm to refuse.
func pending(r ri.Releaser) bool {
	rel, err := asRelease(r)
	return err == nil && rel != nil && rel.Info != nil && rel.Info.Status.IsPending()
}
