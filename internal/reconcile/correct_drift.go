package reconcile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	ssajsondiff "github.com/fluxcd/pkg/ssa/jsondiff"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/kube"
)

// TypeDrift is the type of drift correction.
const TypeDrift ActionType = "drift"

// CorrectDrift puts the cluster back to the release manifest without a new
// Helm revision: missing objects are created, drifted fields are patched
// back (a JSON patch from the live object to the server-side dry-run of the
// manifest's object, ignore rules applied). It corrects what it can and
// reports every object it could not correct; drift correction failures are
// not release failures and are not counted.
type CorrectDrift struct {
	e      *Reconciler
	report *DriftReport
}

func (a *CorrectDrift) Name() string     { return "correct drift" }
func (a *CorrectDrift) Type() ActionType { return TypeDrift }

func (a *CorrectDrift) Reconcile(ctx context.Context, req *Request) error {
	c, err := a.e.controllerClient()
	if err != nil {
		return err
	}
	var errs []error
	for _, d := range a.report.diffs {
		ref := fmt.Sprintf("%s %s/%s", d.GroupVersionKind().Kind, d.GetNamespace(), d.GetName())
		switch d.Type {
		case ssajsondiff.DiffTypeCreate:
			obj, ok := d.DesiredObject.DeepCopyObject().(client.Object)
			if !ok {
				continue
			}
			obj.SetResourceVersion("")
			if err := c.Create(ctx, obj, client.FieldOwner(kube.FieldManager)); err != nil {
				errs = append(errs, fmt.Errorf("creating %s: %w", ref, err))
				continue
			}
			a.e.logger().Info("drift corrected: created", "object", ref)
		case ssajsondiff.DiffTypeUpdate:
			patch, err := json.Marshal(d.Patch)
			if err != nil {
				errs = append(errs, fmt.Errorf("encoding the patch of %s: %w", ref, err))
				continue
			}
			if err := c.Patch(ctx, d.ClusterObject, client.RawPatch(types.JSONPatchType, patch), client.FieldOwner(kube.FieldManager)); err != nil {
				errs = append(errs, fmt.Errorf("patching %s: %w", ref, err))
				continue
			}
			a.e.logger().Info("drift corrected: patched", "object", ref, "operations", len(d.Patch))
		}
	}
	if err := errors.Join(errs...); err != nil {
		req.Status.SetCondition(Condition{Type: ConditionReady, Status: false, Reason: ReasonDriftFailed, Message: err.Error()})
		return fmt.Errorf("correcting the drift of release %s: %w", releaseRef(req), err)
	}
	return nil
}
