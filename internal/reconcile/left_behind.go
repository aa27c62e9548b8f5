package reconcile

import (
	"context"
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/chartsource"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/manifest"
)

// LeftBehind is an object an uninstall leaves in the cluster by design.
type LeftBehind struct {
	// Object is "<Kind> <namespace>/<name>" ("<Kind> <name>" when
	// cluster-scoped).
	Object string
	// Why Helm leaves it.
	Why string
}

func (l LeftBehind) String() string { return l.Object + " (" + l.Why + ")" }

// Reasons objects are left behind.
const (
	whyResourcePolicy = "annotated helm.sh/resource-policy: keep"
	whyVolumeClaim    = "volume claim of StatefulSet %s: the StatefulSet's pods made it, not Helm, and its data outlives them"
	whyCRD            = "from a crds/ directory of the chart or a subchart: Helm never deletes those, their custom resources would go with them"
	whyNotOwned       = "its meta.helm.sh/release-name or release-namespace annotation names another release: Helm deletes only the release's own objects"
)

// notOwned are the objects of rel's manifest that its uninstall left as
// another release's (helm.Uninstalled.NotOwned, "<Kind> <name>").
func notOwned(rel *helm.Release, kept []string) []LeftBehind {
	if len(kept) == 0 {
		return nil
	}
	objects, err := manifest.Parse(rel.Manifest, rel.Namespace, nil)
	if err != nil {
		return nil
	}
	var out []LeftBehind
	for _, o := range objects {
		if slices.Contains(kept, o.Object.GetKind()+" "+o.Object.GetName()) {
			out = append(out, LeftBehind{Object: objectName(o.Object.GetKind(), o.Object.GetNamespace(), o.Object.GetName()), Why: whyNotOwned})
		}
	}
	return out
}

// leftBehind lists what still exists in the cluster, after rel was
// uninstalled, of what Helm leaves by design: objects of the manifest
// annotated helm.sh/resource-policy: keep, the PersistentVolumeClaims the
// manifest's StatefulSets made from their volumeClaimTemplates (unless
// their retention policy deletes them), and the CRDs of the chart's crds/
// directory. Reading errors leave an object out: the list informs, it
// never fails an uninstall.
func leftBehind(ctx context.Context, cs kubernetes.Interface, rel *helm.Release) []LeftBehind {
	var out []LeftBehind
	objects, err := manifest.Parse(rel.Manifest, rel.Namespace, nil)
	if err != nil {
		return nil
	}
	for _, o := range objects {
		ns := o.Object.GetNamespace()
		switch {
		case o.Object.GetAnnotations()["helm.sh/resource-policy"] == "keep":
			out = append(out, LeftBehind{Object: objectName(o.Object.GetKind(), ns, o.Object.GetName()), Why: whyResourcePolicy})
		case o.Object.GetKind() == "StatefulSet" && strings.HasPrefix(o.Object.GetAPIVersion(), "apps/"):
			out = append(out, statefulSetClaims(ctx, cs, o.Object.Object, ns)...)
		}
	}
	if rel.Chart != nil {
		// Helm stores the chart without its subcharts: their CRDs are
		// known from what the chart recorded when it was resolved.
		names := chartsource.RecordedCRDs(rel.Chart)
		for _, f := range rel.Chart.CRDObjects() {
			var crd struct {
				Metadata metav1.ObjectMeta `json:"metadata"`
			}
			if yaml.Unmarshal(f.File.Data, &crd) == nil && crd.Metadata.Name != "" {
				names = append(names, crd.Metadata.Name)
			}
		}
		slices.Sort(names)
		for _, name := range slices.Compact(names) {
			if _, err := cs.Discovery().RESTClient().Get().AbsPath("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", name).DoRaw(ctx); err == nil {
				out = append(out, LeftBehind{Object: "CustomResourceDefinition " + name, Why: whyCRD})
			}
		}
	}
	slices.SortFunc(out, func(a, b LeftBehind) int { return strings.Compare(a.Object, b.Object) })
	return slices.CompactFunc(out, func(a, b LeftBehind) bool { return a.Object == b.Object })
}

// statefulSetClaims are the claims of the StatefulSet's volumeClaimTemplates
// that exist: "<template>-<statefulset>-<ordinal>".
func statefulSetClaims(ctx context.Context, cs kubernetes.Interface, obj map[string]any, namespace string) []LeftBehind {
	var sts appsv1.StatefulSet
	b, err := yaml.Marshal(obj)
	if err != nil || yaml.Unmarshal(b, &sts) != nil || len(sts.Spec.VolumeClaimTemplates) == 0 {
		return nil
	}
	if p := sts.Spec.PersistentVolumeClaimRetentionPolicy; p != nil && p.WhenDeleted == appsv1.DeletePersistentVolumeClaimRetentionPolicyType {
		return nil
	}
	claims, err := cs.CoreV1().PersistentVolumeClaims(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil
	}
	var out []LeftBehind
	for _, t := range sts.Spec.VolumeClaimTemplates {
		prefix := t.Name + "-" + sts.Name + "-"
		for _, c := range claims.Items {
			if strings.HasPrefix(c.Name, prefix) && isOrdinal(strings.TrimPrefix(c.Name, prefix)) && c.DeletionTimestamp == nil {
				out = append(out, LeftBehind{Object: objectName("PersistentVolumeClaim", namespace, c.Name), Why: fmt.Sprintf(whyVolumeClaim, sts.Name)})
			}
		}
	}
	return out
}

func isOrdinal(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func objectName(kind, namespace, name string) string {
	if namespace == "" {
		return kind + " " + name
	}
	return kind + " " + namespace + "/" + name
}
