//go:build unix

package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
)

// outOfBandEdit is one row of the table of edits made by hand to a
// release's objects: each object of the edits chart has its own row.
type outOfBandEdit struct {
	name string
	// key is the object's key in resources (NS for the namespace).
	key string
	// edit changes the object in the cluster.
	edit func(ctx context.Context, ns string) error
	// planned reports what is wrong with the object's planned change:
	// before is the object as the plan shows it now, after as it will be.
	planned func(before, after string) string
	// corrected reports what is wrong with the object after the apply.
	corrected func(ctx context.Context, ns, message string) string
}

// secretByHand is the Secret value the table sets by hand; it must never
// appear in a plan, its JSON or the state.
const secretByHand = "set-by-hand-Zq81vX"

var outOfBandEdits = []outOfBandEdit{{
	name: "a data key removed with a JSON patch",
	key:  "v1/ConfigMap/NS/json-remove",
	edit: func(ctx context.Context, ns string) error {
		_, err := clientset.CoreV1().ConfigMaps(ns).Patch(ctx, "json-remove", types.JSONPatchType,
			[]byte(`[{"op":"remove","path":"/data/message"}]`), metav1.PatchOptions{FieldManager: "kubectl-patch"})
		return err
	},
	planned:   fieldComesBack("message:"),
	corrected: configMapData("json-remove", "message"),
}, {
	name: "a data key removed with an update, as kubectl edit does",
	key:  "v1/ConfigMap/NS/update-remove",
	edit: func(ctx context.Context, ns string) error {
		cm, err := clientset.CoreV1().ConfigMaps(ns).Get(ctx, "update-remove", metav1.GetOptions{})
		if err != nil {
			return err
		}
		delete(cm.Data, "message")
		_, err = clientset.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{FieldManager: "kubectl-edit"})
		return err
	},
	planned:   fieldComesBack("message:"),
	corrected: configMapData("update-remove", "message"),
}, {
	name: "a label and an annotation removed",
	key:  "v1/ConfigMap/NS/meta-remove",
	edit: func(ctx context.Context, ns string) error {
		_, err := clientset.CoreV1().ConfigMaps(ns).Patch(ctx, "meta-remove", types.MergePatchType,
			[]byte(`{"metadata":{"labels":{"tier":null},"annotations":{"example.com/note":null}}}`), metav1.PatchOptions{FieldManager: "kubectl-annotate"})
		return err
	},
	planned: func(before, after string) string {
		if msg := fieldComesBack("tier: web")(before, after); msg != "" {
			return msg
		}
		return fieldComesBack("example.com/note: kept")(before, after)
	},
	corrected: func(ctx context.Context, ns, _ string) string {
		cm, err := clientset.CoreV1().ConfigMaps(ns).Get(ctx, "meta-remove", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if cm.Labels["tier"] != "web" || cm.Annotations["example.com/note"] != "kept" {
			return fmt.Sprintf("labels %v, annotations %v", cm.Labels, cm.Annotations)
		}
		return ""
	},
}, {
	name: "a merge patch setting a field to null",
	key:  "v1/ConfigMap/NS/merge-null",
	edit: func(ctx context.Context, ns string) error {
		_, err := clientset.CoreV1().ConfigMaps(ns).Patch(ctx, "merge-null", types.MergePatchType,
			[]byte(`{"data":{"message":null}}`), metav1.PatchOptions{FieldManager: "kubectl-patch"})
		return err
	},
	planned:   fieldComesBack("message:"),
	corrected: configMapData("merge-null", "message"),
}, {
	name: "a server-side apply by another manager",
	key:  "v1/ConfigMap/NS/applied",
	edit: func(ctx context.Context, ns string) error {
		_, err := clientset.CoreV1().ConfigMaps(ns).Patch(ctx, "applied", types.ApplyPatchType,
			[]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"applied"},"data":{"message":"applied by hand"}}`),
			metav1.PatchOptions{FieldManager: "another-tool", Force: new(true)})
		return err
	},
	planned: func(before, after string) string {
		if !strings.Contains(before, "applied by hand") || strings.Contains(after, "applied by hand") {
			return "want the value applied by hand before and the chart's after"
		}
		return ""
	},
	corrected: configMapData("applied", "message"),
}, {
	name: "a scale through the subresource",
	key:  "apps/v1/Deployment/NS/scaled",
	edit: func(ctx context.Context, ns string) error {
		_, err := clientset.AppsV1().Deployments(ns).UpdateScale(ctx, "scaled",
			&autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "scaled", Namespace: ns}, Spec: autoscalingv1.ScaleSpec{Replicas: 5}},
			metav1.UpdateOptions{FieldManager: "kubectl-scale"})
		return err
	},
	planned: func(before, after string) string {
		if !strings.Contains(before, "replicas: 5") || !strings.Contains(after, "replicas: 2") {
			return "want replicas 5 before and 2 after"
		}
		return ""
	},
	corrected: func(ctx context.Context, ns, _ string) string {
		d, err := clientset.AppsV1().Deployments(ns).Get(ctx, "scaled", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if d.Spec.Replicas == nil || *d.Spec.Replicas != 2 {
			return fmt.Sprintf("replicas %v, want 2", d.Spec.Replicas)
		}
		return ""
	},
}, {
	name: "a container env var removed",
	key:  "apps/v1/Deployment/NS/env",
	edit: func(ctx context.Context, ns string) error {
		_, err := clientset.AppsV1().Deployments(ns).Patch(ctx, "env", types.JSONPatchType,
			[]byte(`[{"op":"remove","path":"/spec/template/spec/containers/0/env/1"}]`), metav1.PatchOptions{FieldManager: "kubectl-patch"})
		return err
	},
	planned: fieldComesBack("LEVEL"),
	corrected: func(ctx context.Context, ns, _ string) string {
		d, err := clientset.AppsV1().Deployments(ns).Get(ctx, "env", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if env := d.Spec.Template.Spec.Containers[0].Env; len(env) != 2 || env[1].Name != "LEVEL" {
			return fmt.Sprintf("env %v, want MODE and LEVEL", env)
		}
		return ""
	},
}, {
	name: "an object deleted",
	key:  "v1/ConfigMap/NS/deleted",
	edit: func(ctx context.Context, ns string) error {
		return clientset.CoreV1().ConfigMaps(ns).Delete(ctx, "deleted", metav1.DeleteOptions{})
	},
	planned: func(before, after string) string {
		if strings.Contains(before, "message:") || !strings.Contains(after, "message:") {
			return "want the object missing before and the chart's after"
		}
		return ""
	},
	corrected: configMapData("deleted", "message"),
}, {
	name: "an object deleted and created again by hand with other content",
	key:  "v1/ConfigMap/NS/recreated",
	edit: func(ctx context.Context, ns string) error {
		if err := clientset.CoreV1().ConfigMaps(ns).Delete(ctx, "recreated", metav1.DeleteOptions{}); err != nil {
			return err
		}
		_, err := clientset.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "recreated"},
			Data:       map[string]string{"message": "made by hand"},
		}, metav1.CreateOptions{FieldManager: "kubectl-create"})
		return err
	},
	planned: func(before, after string) string {
		if !strings.Contains(before, "made by hand") || !strings.Contains(after, "other: unchanged") {
			return "want the content made by hand before and the chart's after"
		}
		return ""
	},
	corrected: configMapData("recreated", "other"),
}, {
	name: "a Secret's value changed",
	key:  "v1/Secret/NS/credentials",
	edit: func(ctx context.Context, ns string) error {
		_, err := clientset.CoreV1().Secrets(ns).Patch(ctx, "credentials", types.MergePatchType,
			[]byte(`{"stringData":{"password":"`+secretByHand+`"}}`), metav1.PatchOptions{FieldManager: "kubectl-patch"})
		return err
	},
	planned: func(before, after string) string {
		if before == after {
			return "the plan shows the same value before and after"
		}
		if !strings.Contains(before, "password: ") || !strings.Contains(before, "hmac-sha256:") && !strings.Contains(before, "sha256:") {
			return "want the password shown as a keyed hash"
		}
		return ""
	},
	corrected: func(ctx context.Context, ns, _ string) string {
		s, err := clientset.CoreV1().Secrets(ns).Get(ctx, "credentials", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if string(s.Data["password"]) != "chart-secret-value" {
			return "the password is not the chart's"
		}
		return ""
	},
}, secretKeyRemoved("string-json-remove", removeByJSONPatch("/data/password")),
	secretKeyRemoved("string-replace-remove", removeByReplace("password")),
	secretKeyRemoved("string-data-removed", removeByJSONPatch("/data")),
	secretKeyRemoved("data-json-remove", removeByJSONPatch("/data/password")),
	secretKeyRemoved("data-replace-remove", removeByReplace("password")),
}

// secretKeyRemoved is the row of a Secret of the edits chart whose
// password key the edit removes: planned back as a keyed hash, never in
// clear, and the chart's value is in the Secret again after the apply.
func secretKeyRemoved(name string, remove func(ctx context.Context, ns, name string) error) outOfBandEdit {
	return outOfBandEdit{
		name: "Secret " + name + " loses its key",
		key:  "v1/Secret/NS/" + name,
		edit: func(ctx context.Context, ns string) error { return remove(ctx, ns, name) },
		planned: func(before, after string) string {
			if msg := fieldComesBack("password: ")(before, after); msg != "" {
				return msg
			}
			if !strings.Contains(after, "password: (sensitive value) hmac-sha256:") {
				return "want the password shown as a keyed hash"
			}
			return ""
		},
		corrected: func(ctx context.Context, ns, _ string) string {
			s, err := clientset.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err.Error()
			}
			if string(s.Data["password"]) != "chart-secret-value" || string(s.Data["user"]) != "admin" {
				return fmt.Sprintf("Secret keys %v, want the chart's password and user", slices.Sorted(maps.Keys(s.Data)))
			}
			return ""
		},
	}
}

// removeByJSONPatch removes a Secret's field as
// kubectl patch --type=json -p '[{"op":"remove","path":…}]' does.
func removeByJSONPatch(path string) func(ctx context.Context, ns, name string) error {
	return func(ctx context.Context, ns, name string) error {
		_, err := clientset.CoreV1().Secrets(ns).Patch(ctx, name, types.JSONPatchType,
			[]byte(`[{"op":"remove","path":"`+path+`"}]`), metav1.PatchOptions{FieldManager: "kubectl-patch"})
		return err
	}
}

// removeByReplace removes a Secret's data key with an update of the whole
// object, as kubectl replace and kubectl edit do.
func removeByReplace(key string) func(ctx context.Context, ns, name string) error {
	return func(ctx context.Context, ns, name string) error {
		s, err := clientset.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		delete(s.Data, key)
		_, err = clientset.CoreV1().Secrets(ns).Update(ctx, s, metav1.UpdateOptions{FieldManager: "kubectl-replace"})
		return err
	}
}

// fieldComesBack checks that the planned change adds text the object
// lost.
func fieldComesBack(text string) func(before, after string) string {
	return func(before, after string) string {
		if strings.Contains(before, text) || !strings.Contains(after, text) {
			return fmt.Sprintf("want %q missing before and back after", text)
		}
		return ""
	}
}

// configMapData checks that a ConfigMap's key holds the chart's value
// again (message, or "unchanged" for other).
func configMapData(name, key string) func(ctx context.Context, ns, message string) string {
	return func(ctx context.Context, ns, message string) string {
		cm, err := clientset.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		want := message
		if key == "other" {
			want = "unchanged"
		}
		if cm.Data[key] != want {
			return fmt.Sprintf("data %v, want %s=%q", cm.Data, key, want)
		}
		return ""
	}
}

// TestOutOfBandEdits: every edit of the table, made by hand to a release's
// objects, is planned back by the next plan (the object named, the field
// shown), corrected by apply without a new Helm revision, and followed by
// an empty plan; a release's objects as the cluster defaults and its
// controllers update them never show. The table runs on the release as
// installed, after an upgrade, and after a failed upgrade was rolled back,
// for a release written by server-side apply (the default) and for one
// written client-side: the upgrades and the rollback follow the install's
// apply method, which every record says.
func TestOutOfBandEdits(t *testing.T) {
	parallelMatrix(t)
	for _, m := range []struct {
		name, method string
		ssa          bool
	}{{"server-side", "ssa", true}, {"client-side", "csa", false}} {
		t.Run(m.name, func(t *testing.T) {
			parallelMatrix(t)
			outOfBandEditsBy(t, m.ssa, m.method)
		})
	}
}

// upgradeTimeout is the upgrade's timeout for values: short where its pods
// never schedule (the wait must expire), a loaded machine's worth
// otherwise (the wait must end ready).
func upgradeTimeout(values string) string {
	if strings.Contains(values, "stuck = true") {
		return "20s"
	}
	return "5m"
}

func outOfBandEditsBy(t *testing.T, ssa bool, method string) {
	ns := newNamespace(t)
	chart := testdataPath("charts", "edits")
	w := newWorkspace(t, "edits")
	st := newStorage(t, ns)
	configure := func(values string) {
		w.write(fmt.Sprintf(`terraform {
  required_providers {
    helmrelease = { source = "helmrelease/helmrelease" }
  }
}

provider "helmrelease" {
  kubernetes = { config_path = %q }
}

resource "helmrelease_release" "edits" {
  name               = "edits"
  namespace          = %q
  chart              = { name = %q }
  values             = %s
  sensitive_values   = jsonencode({ secret = "chart-secret-value" })
  timeout            = "5m"
  install            = { server_side_apply = %t }
  upgrade            = { timeout = %q, remediation = { retries = 0, remediate_last_failure = true, strategy = "rollback" } }
  drift_detection    = { mode = "enabled" }
}
`, cluster.Kubeconfig, ns, chart, values, ssa, upgradeTimeout(values)))
	}

	round := func(phase, message string) {
		t.Helper()
		// A minute for the edits, another for the checks after the
		// apply: plan and apply in between take what they take.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		revisions := len(st.history("edits"))
		for _, e := range outOfBandEdits {
			if err := e.edit(ctx, ns); err != nil {
				t.Fatalf("%s: %s: %v", phase, e.name, err)
			}
		}
		res := w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode", "-out=drift.plan")
		planned := w.plannedRelease("drift.plan")
		before, after := planned.Before, planned.After
		if got := planned.PlannedAction; got != nil {
			t.Errorf("%s: correcting drift plans the Helm action %q, want none", phase, *got)
		}
		var want []string
		for _, e := range outOfBandEdits {
			key := strings.ReplaceAll(e.key, "NS", ns)
			want = append(want, key)
			if before[key] == after[key] {
				t.Errorf("%s: %s: the plan does not change %s", phase, e.name, key)
				continue
			}
			if msg := e.planned(before[key], after[key]); msg != "" {
				t.Errorf("%s: %s: %s\nbefore:\n%s\nafter:\n%s", phase, e.name, msg, before[key], after[key])
			}
		}
		slices.Sort(want)
		if got := planned.Changed(); !slices.Equal(got, want) {
			t.Errorf("%s: the plan changes %v, want exactly %v", phase, got, want)
		}
		shown := res.stdout + res.stderr + w.must(0, "show", "-json", "drift.plan").stdout
		if strings.Contains(shown, secretByHand) {
			t.Errorf("%s: the Secret's value set by hand is in the plan", phase)
		}

		w.must(0, "apply", "-auto-approve", "-input=false", "-no-color", "drift.plan")
		if got := len(st.history("edits")); got != revisions {
			t.Errorf("%s: correcting the drift made %d Helm revisions, want none", phase, got-revisions)
		}
		ctx, cancel = context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, e := range outOfBandEdits {
			if msg := e.corrected(ctx, ns, message); msg != "" {
				t.Errorf("%s: %s: not corrected: %s", phase, e.name, msg)
			}
		}
		if strings.Contains(string(w.stateBytes()), secretByHand) {
			t.Errorf("%s: the Secret's value set by hand is in the state", phase)
		}
		w.planIsEmpty()
		w.planIsEmpty()
		for _, r := range st.history("edits") {
			if r.ApplyMethod != method {
				t.Errorf("%s: revision %d (%s) records apply_method %q, want %q", phase, r.Version, r.Info.Description, r.ApplyMethod, method)
			}
		}
	}

	configure(`{ message = "hello" }`)
	w.apply()
	waitRolledOut(t, ns, "scaled", "env")
	// Defaults and the controllers' status updates are not drift.
	w.planIsEmpty()
	round("installed", "hello")

	upgraded := `{ message = "upgraded", tag = "1.1" }`
	configure(upgraded)
	res := w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode", "-out=upgrade.plan")
	if got := w.plannedRelease("upgrade.plan").PlannedAction; got == nil || *got != "upgrade: values changed" {
		t.Errorf("the upgrade's planned_action is %v, want \"upgrade: values changed\"", got)
	}
	if out := strings.ReplaceAll(res.stdout+res.stderr, "Warning: Provider development overrides", ""); has(out, "Warning:") {
		t.Errorf("an ordinary upgrade's plan warns:\n%s", res)
	}
	w.must(0, "apply", "-auto-approve", "-input=false", "-no-color", "upgrade.plan")
	if got := st.latest("edits").Version; got != 2 {
		t.Fatalf("the upgrade made revision %d, want 2", got)
	}
	waitRolledOut(t, ns, "scaled", "env")
	w.planIsEmpty()
	round("upgraded", "upgraded")

	// An upgrade whose pods never schedule fails its wait and is rolled
	// back to revision 2's manifest (revision 4); going back to its values
	// needs no Helm action.
	configure(`{ message = "upgraded", tag = "1.1", stuck = true }`)
	w.must(1, "apply", "-auto-approve", "-input=false", "-no-color")
	if rel := st.latest("edits"); rel.Version != 4 || !strings.Contains(rel.Info.Description, "Rollback") {
		t.Fatalf("after the failed upgrade: %s", st.describe("edits"))
	}
	configure(upgraded)
	w.apply()
	if got := st.latest("edits").Version; got != 4 {
		t.Fatalf("going back to the rolled-back values made revision %d", got)
	}
	waitRolledOut(t, ns, "scaled", "env")
	w.planIsEmpty()
	round("rolled back", "upgraded")
}

// waitRolledOut waits until the Deployments' controllers are done with
// their rollouts, so that the plans after it see status updates settle.
func waitRolledOut(t *testing.T, ns string, names ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, name := range names {
		err := wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			d, err := clientset.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return false, nil
			}
			if err != nil {
				return false, err
			}
			return d.Status.ObservedGeneration >= d.Generation && d.Status.UpdatedReplicas == *d.Spec.Replicas &&
				d.Status.AvailableReplicas == *d.Spec.Replicas, nil
		})
		if err != nil {
			t.Fatalf("Deployment %s/%s did not roll out: %v", ns, name, err)
		}
	}
}
