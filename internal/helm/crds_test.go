package helm

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// TestApplyCRDsAtOnce: releases of charts that share a CRD, applied at the
// same moment, all succeed: the one whose create finds the CRD created
// since it looked takes it as existing, as Helm does (round after round,
// so that the creates meet), and with Replace replaces it.
func TestApplyCRDsAtOnce(t *testing.T) {
	const writers = 4
	run := time.Now().UnixNano() % 1e6 // names of this run (-count): deletions take a while
	clients := make([]*Client, writers)
	for i := range clients {
		clients[i], _, _ = newTestClient(t, fmt.Sprintf("crds-at-once-%d-%d", run, i))
	}
	crds := dynamic.NewForConfigOrDie(testRESTConfig).Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	for round := range 5 {
		group := fmt.Sprintf("r%d.at-once-%d.example.com", round, run)
		t.Cleanup(func() { _ = crds.Delete(context.Background(), "gadgets."+group, metav1.DeleteOptions{}) })
		c := &chart.Chart{
			Metadata: &chart.Metadata{APIVersion: "v2", Name: "shared", Version: "1.0.0"},
			Files:    []*common.File{{Name: "crds/gadgets.yaml", Data: gadgetCRD(group)}},
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make([]error, writers)
		for i, client := range clients {
			wg.Go(func() {
				<-start
				errs[i] = client.ApplyCRDs(c, CRDOptions{Replace: i%2 == 1, Timeout: time.Minute})
			})
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("round %d, writer %d: %v", round, i, err)
			}
		}
		if _, err := crds.Get(context.Background(), "gadgets."+group, metav1.GetOptions{}); err != nil {
			t.Errorf("round %d: the CRD: %v", round, err)
		}
	}
}

// gadgetCRD is a CustomResourceDefinition of kind Gadget in group, which
// keeps any field.
func gadgetCRD(group string) []byte {
	return []byte(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.` + group + `
spec:
  group: ` + group + `
  names: {kind: Gadget, plural: gadgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`)
}
