package helm

import (
	"context"

	"k8s.io/client-go/kubernetes"

	k8s "github.com/helmrelease/terraform-provider-helmrelease/internal/kube"
)

// Actions is what the engine asks of Helm for the releases of one storage
// namespace: the release records, the actions, the CRDs of charts, and the
// readiness of a release's objects. Client is the implementation on the
// Helm SDK; tests, or another Helm major, may stand behind it.
type Actions interface {
	// LastRelease is the newest revision of release name; nil when it
	// has none.
	LastRelease(name string) (*Release, error)
	// History is every revision of release name.
	History(name string) ([]*Release, error)
	// CreateRelease and UpdateRelease write a release record as it is.
	CreateRelease(rel *Release) error
	UpdateRelease(rel *Release) error

	Install(ctx context.Context, chart *Chart, values map[string]any, o InstallOptions) (*Release, error)
	Upgrade(ctx context.Context, name string, chart *Chart, values map[string]any, o UpgradeOptions) (*Release, error)
	Test(name string, o TestOptions) (*Release, error)
	Rollback(name string, o RollbackOptions) error
	Uninstall(name string, o UninstallOptions) (*Uninstalled, error)
	// TestPodLogs is the last maxLines log lines of each of rel's test
	// pods that failed.
	TestPodLogs(ctx context.Context, rel *Release, maxLines int64) (map[string]string, error)

	// ApplyCRDs writes chart's CRDs as o says; CRDsToWrite is the
	// manifest of those it would write.
	ApplyCRDs(chart *Chart, o CRDOptions) error
	CRDsToWrite(chart *Chart, o CRDOptions) (string, error)

	// NotCurrent, NotReady and Objects look at the objects of a release
	// manifest in the cluster (see Client).
	NotCurrent(ctx context.Context, namespace, manifest string, p *Poller, limit int) (notCurrent []k8s.ObjectRef, reasons []string, total int, err error)
	NotReady(ctx context.Context, namespace, manifest string, waitForJobs bool, limit int) (notReady []k8s.ObjectRef, checked, total int, err error)
	Objects(namespace, manifest string) ([]k8s.ObjectRef, error)
	// Clientset is the typed client of the release's cluster.
	Clientset() (kubernetes.Interface, error)
}

var _ Actions = (*Client)(nil)
