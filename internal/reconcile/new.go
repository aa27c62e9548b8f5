package reconcile

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/kube"
)

// KubeConfigRef is spec.kubeConfig.secretRef: a kubeconfig in a Secret of
// the release object's namespace, on the provider's cluster (Cluster API).
type KubeConfigRef struct {
	Name string
	// Key of the Secret's data; empty tries "value", then "value.yaml".
	Key string
}

// Options say how to reach the release's cluster.
type Options struct {
	// Config reaches the provider's cluster.
	Config *rest.Config
	// KubeConfig, when set, names a Secret on the provider's cluster whose
	// kubeconfig reaches the target cluster instead.
	KubeConfig *KubeConfigRef
	// Log receives the reconciler's progress; nil discards it.
	Log Logger
	// HelmLog receives each line Helm logs; nil discards them.
	HelmLog func(string)
	// ProgressEvery is Reconciler.ProgressEvery.
	ProgressEvery time.Duration
	// Discovery, when set, is the shared discovery of Config and the
	// spec's identity (its service account, else the configuration's
	// user), used unless KubeConfig names another cluster.
	Discovery *kube.Discovery
	// Settled renders from the release's newest settled revision, pending
	// ones hidden, and writes nothing to Helm storage (helm.SettledView):
	// for plans of a release Flux's controller acts on.
	Settled bool
	// PlannedKinds, when set, are the kinds of the CRDs the releases
	// planned before this one on its cluster bring: DryRun renders objects
	// of those kinds before the cluster serves them, and records the
	// kinds of its own CRDs there. Unused with KubeConfig (another
	// cluster).
	PlannedKinds *kube.PlannedKinds
}

// New returns the reconciler of the release spec: clients of its target
// cluster (impersonating spec.serviceAccountName when set) and a Helm client
// of its storage namespace.
func New(ctx context.Context, s *Spec, o Options) (*Reconciler, error) {
	cfg := o.Config
	if o.KubeConfig != nil {
		var err error
		if cfg, err = kubeConfigFromSecret(ctx, o.Config, s.Namespace, *o.KubeConfig); err != nil {
			return nil, err
		}
		// Limited as the provider's own cluster is when qps is unset,
		// with every release of the same cluster; ThrottleByServer's
		// probe reads cfg, so it comes last.
		kube.LimitInFlightPerServer(cfg)
		kube.ThrottleByServer(cfg)
	}
	impersonate := ""
	if s.ServiceAccountName != "" {
		impersonate = kube.ServiceAccountUser(s.Namespace, s.ServiceAccountName)
	}
	shared := o.Discovery
	if o.KubeConfig != nil {
		shared = nil
	}
	e := &Reconciler{
		Logs:             helm.NewLogBuffer(helm.DefaultLogLines, o.HelmLog),
		Log:              o.Log,
		ProgressEvery:    o.ProgressEvery,
		Kube:             kube.NewGetter(cfg, s.GetTargetNamespace(), impersonate, shared),
		persistentClient: s.PersistentClient,
	}
	if o.KubeConfig == nil {
		e.plannedKinds = o.PlannedKinds
	}
	c, err := helm.NewClient(helm.ClientOptions{
		Getter:           e.Kube,
		StorageNamespace: s.GetStorageNamespace(),
		Log:              e.Logs,
		Observe:          e.Observe,
		Settled:          o.Settled,
	})
	if err != nil {
		return nil, err
	}
	e.Helm = c
	return e, nil
}

func kubeConfigFromSecret(ctx context.Context, cfg *rest.Config, namespace string, ref KubeConfigRef) (*rest.Config, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating Kubernetes client: %w", err)
	}
	sec, err := cs.CoreV1().Secrets(namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("kubeconfig Secret %s/%s not found", namespace, ref.Name)
	}
	if err != nil {
		return nil, fmt.Errorf("reading kubeconfig Secret %s/%s: %w", namespace, ref.Name, err)
	}
	keys := []string{ref.Key}
	if ref.Key == "" {
		keys = []string{"value", "value.yaml"}
	}
	for _, k := range keys {
		if data, ok := sec.Data[k]; ok {
			out, err := clientcmd.RESTConfigFromKubeConfig(data)
			if err != nil {
				return nil, fmt.Errorf("kubeconfig in key %q of Secret %s/%s: %w", k, namespace, ref.Name, err)
			}
			return out, nil
		}
	}
	return nil, fmt.Errorf("kubeconfig Secret %s/%s has no key %v", namespace, ref.Name, keys)
}
