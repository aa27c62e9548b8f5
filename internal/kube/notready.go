package kube

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
)

// Cause classifies why an object is not ready; it decides the remedy a
// failed wait suggests.
type Cause string

// Causes, most specific first: an object's cause is the first that holds
// for it or its pods.
const (
	// CauseUnschedulable: pods the scheduler cannot place (resources,
	// node selectors, affinity, taints).
	CauseUnschedulable Cause = "unschedulable"
	// CauseVolume: PersistentVolumeClaims that are not bound.
	CauseVolume Cause = "volume"
	// CauseLoadBalancer: a Service of type LoadBalancer without an address.
	CauseLoadBalancer Cause = "load-balancer"
	// CauseFailed: Jobs or pods that failed.
	CauseFailed Cause = "failed"
	// CauseHealthCheck: a health check expression (healthCheckExprs)
	// that does not hold, or whose failed expression holds.
	CauseHealthCheck Cause = "health-check"
	// CauseContainer: containers that do not start or keep crashing (image
	// pulls, configuration, crash loops).
	CauseContainer Cause = "container"
	// CauseMissing: the object does not exist (never created, or deleted).
	CauseMissing Cause = "missing"
	// CauseProgressing: none of the above; the object is still on its way.
	CauseProgressing Cause = "progressing"
)

// Causes are every cause, most specific first.
var Causes = []Cause{CauseUnschedulable, CauseVolume, CauseLoadBalancer, CauseFailed, CauseHealthCheck, CauseContainer, CauseMissing, CauseProgressing}

// NotReady says why one object is not ready.
type NotReady struct {
	// Object is "<Kind> <namespace>/<name>" ("<Kind> <name>" when
	// cluster-scoped).
	Object string
	Cause  Cause
	// Reason is what the object, its pods and their events say, on one line.
	Reason string
	// Logs are the last log lines of a failed pod of the object, with a
	// line naming the pod, or why they could not be read.
	Logs string
}

func (n NotReady) String() string { return n.Object + ": " + n.Reason }

// ObjectRef names an object.
type ObjectRef struct {
	GVK       schema.GroupVersionKind
	Namespace string
	Name      string
}

func (r ObjectRef) String() string {
	if r.Namespace == "" {
		return r.GVK.Kind + " " + r.Name
	}
	return r.GVK.Kind + " " + r.Namespace + "/" + r.Name
}

// Explainer reads what the cluster says of objects that are not ready: the
// objects themselves, their pods, claims and events, and the logs of pods
// that failed. It writes nothing.
type Explainer struct {
	Client kubernetes.Interface
	// LogLines is how many log lines of a failed pod to read; 0 reads none.
	LogLines int64
}

// maxPodsNamed is how many pods one explanation names.
const maxPodsNamed = 3

// Explain says why ref is not ready. Reading errors become part of the
// reason: an explanation is best effort and never fails.
func (x *Explainer) Explain(ctx context.Context, ref ObjectRef) NotReady {
	out := NotReady{Object: ref.String(), Cause: CauseProgressing}
	var err error
	switch ref.GVK.GroupKind().String() {
	case "Deployment.apps":
		err = x.deployment(ctx, ref, &out)
	case "StatefulSet.apps":
		err = x.statefulSet(ctx, ref, &out)
	case "DaemonSet.apps":
		err = x.daemonSet(ctx, ref, &out)
	case "ReplicaSet.apps":
		err = x.replicaSet(ctx, ref, &out)
	case "Job.batch":
		err = x.job(ctx, ref, &out)
	case "Pod":
		var pod *corev1.Pod
		if pod, err = x.Client.CoreV1().Pods(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{}); err == nil {
			x.pod(ctx, pod, &out)
		}
	case "PersistentVolumeClaim":
		var pvc *corev1.PersistentVolumeClaim
		if pvc, err = x.Client.CoreV1().PersistentVolumeClaims(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{}); err == nil {
			out.Cause, out.Reason = CauseVolume, x.claim(ctx, pvc)
		}
	case "Service":
		err = x.service(ctx, ref, &out)
	default:
		out.Reason = "not ready" + x.lastWarning(ctx, ref.Namespace, ref.GVK.Kind, ref.Name)
	}
	switch {
	case apierrors.IsNotFound(err):
		out.Cause, out.Reason = CauseMissing, "not found"
	case err != nil:
		out.Reason = "not readable: " + err.Error()
	}
	return out
}

func (x *Explainer) deployment(ctx context.Context, ref ObjectRef, out *NotReady) error {
	d, err := x.Client.AppsV1().Deployments(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	out.Reason = fmt.Sprintf("%d of %d replicas ready, %d updated", d.Status.ReadyReplicas, desired(d.Spec.Replicas), d.Status.UpdatedReplicas)
	for _, c := range d.Status.Conditions {
		if (c.Type == appsv1.DeploymentReplicaFailure && c.Status == corev1.ConditionTrue) ||
			(c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse) {
			out.Reason += "; " + c.Reason + ": " + c.Message
		}
	}
	return x.pods(ctx, ref.Namespace, d.Spec.Selector, out)
}

func (x *Explainer) statefulSet(ctx context.Context, ref ObjectRef, out *NotReady) error {
	s, err := x.Client.AppsV1().StatefulSets(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	out.Reason = fmt.Sprintf("%d of %d replicas ready", s.Status.ReadyReplicas, desired(s.Spec.Replicas)) +
		x.lastWarning(ctx, ref.Namespace, "StatefulSet", ref.Name)
	return x.pods(ctx, ref.Namespace, s.Spec.Selector, out)
}

func (x *Explainer) daemonSet(ctx context.Context, ref ObjectRef, out *NotReady) error {
	d, err := x.Client.AppsV1().DaemonSets(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	out.Reason = fmt.Sprintf("%d of %d scheduled pods ready, %d updated", d.Status.NumberReady, d.Status.DesiredNumberScheduled, d.Status.UpdatedNumberScheduled) +
		x.lastWarning(ctx, ref.Namespace, "DaemonSet", ref.Name)
	return x.pods(ctx, ref.Namespace, d.Spec.Selector, out)
}

func (x *Explainer) replicaSet(ctx context.Context, ref ObjectRef, out *NotReady) error {
	r, err := x.Client.AppsV1().ReplicaSets(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	out.Reason = fmt.Sprintf("%d of %d replicas ready", r.Status.ReadyReplicas, desired(r.Spec.Replicas)) +
		x.lastWarning(ctx, ref.Namespace, "ReplicaSet", ref.Name)
	return x.pods(ctx, ref.Namespace, r.Spec.Selector, out)
}

func (x *Explainer) job(ctx context.Context, ref ObjectRef, out *NotReady) error {
	j, err := x.Client.BatchV1().Jobs(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	out.Reason = fmt.Sprintf("not complete: %d active, %d succeeded, %d failed", j.Status.Active, j.Status.Succeeded, j.Status.Failed)
	for _, c := range j.Status.Conditions {
		if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
			out.Cause = CauseFailed
			out.Reason = fmt.Sprintf("failed: %s: %s", c.Reason, c.Message)
		}
	}
	if j.Status.Active == 0 && j.Status.Failed == 0 && j.Status.Succeeded == 0 {
		out.Reason += x.lastWarning(ctx, ref.Namespace, "Job", ref.Name)
	}
	return x.pods(ctx, ref.Namespace, j.Spec.Selector, out)
}

func (x *Explainer) service(ctx context.Context, ref ObjectRef, out *NotReady) error {
	s, err := x.Client.CoreV1().Services(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	switch {
	case s.Spec.Type == corev1.ServiceTypeLoadBalancer && len(s.Status.LoadBalancer.Ingress) == 0:
		out.Cause = CauseLoadBalancer
		out.Reason = "type LoadBalancer without an address: no load balancer controller of the cluster has given it one"
		if s.Spec.LoadBalancerClass != nil {
			out.Reason += fmt.Sprintf(" (its loadBalancerClass is %q)", *s.Spec.LoadBalancerClass)
		}
		out.Reason += x.lastWarning(ctx, ref.Namespace, "Service", ref.Name)
	case s.Spec.ClusterIP == "":
		out.Reason = "no cluster IP assigned" + x.lastWarning(ctx, ref.Namespace, "Service", ref.Name)
	default:
		out.Reason = "not ready" + x.lastWarning(ctx, ref.Namespace, "Service", ref.Name)
	}
	return nil
}

// pods adds what the not-ready pods selected by selector say: the first
// pods in full, the count of the others; the cause becomes theirs.
func (x *Explainer) pods(ctx context.Context, namespace string, selector *metav1.LabelSelector, out *NotReady) error {
	if selector == nil {
		return nil
	}
	sel, err := metav1.LabelSelectorAsSelector(selector)
	if err != nil {
		return nil //nolint:nilerr // an invalid selector selects no pod to explain
	}
	list, err := x.Client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		out.Reason += "; pods not readable: " + err.Error()
		return nil
	}
	pods := list.Items
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	var notReady []NotReady
	for i := range pods {
		if podReady(&pods[i]) || pods[i].DeletionTimestamp != nil {
			continue
		}
		p := NotReady{Object: pods[i].Name, Cause: CauseProgressing}
		x.pod(ctx, &pods[i], &p)
		notReady = append(notReady, p)
	}
	if len(notReady) == 0 {
		if len(pods) == 0 {
			out.Reason += "; no pod exists"
		}
		return nil
	}
	// The most specific cause among the pods is the object's.
	slices.SortStableFunc(notReady, func(a, b NotReady) int { return causeRank(a.Cause) - causeRank(b.Cause) })
	out.Cause = notReady[0].Cause
	for i, p := range notReady {
		if i == maxPodsNamed {
			out.Reason += fmt.Sprintf("; %d more pods not ready", len(notReady)-maxPodsNamed)
			break
		}
		out.Reason += "; pod " + p.Object + " " + p.Reason
		if out.Logs == "" && p.Logs != "" {
			out.Logs = p.Logs
		}
	}
	return nil
}

// pod fills out with what pod says of itself: scheduling, claims,
// containers, events.
func (x *Explainer) pod(ctx context.Context, pod *corev1.Pod, out *NotReady) {
	phase := string(pod.Status.Phase)
	if pod.Status.Phase == corev1.PodFailed {
		out.Cause = CauseFailed
		out.Reason = "Failed" + terminated(pod)
		out.Logs = x.logs(ctx, pod)
		return
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			out.Cause = CauseUnschedulable
			out.Reason = phase + ", not scheduled: " + oneLine(c.Message)
			if claims := x.podClaims(ctx, pod); claims != "" {
				out.Cause = CauseVolume
				out.Reason += "; " + claims
			}
			return
		}
	}
	statuses := append(slices.Clone(pod.Status.InitContainerStatuses), pod.Status.ContainerStatuses...)
	for _, s := range statuses {
		if w := s.State.Waiting; w != nil && w.Reason != "" && w.Reason != "ContainerCreating" && w.Reason != "PodInitializing" {
			out.Cause = CauseContainer
			out.Reason = fmt.Sprintf("%s, container %s waiting: %s", phase, s.Name, w.Reason)
			if w.Message != "" {
				out.Reason += ": " + oneLine(w.Message)
			}
			if t := s.LastTerminationState.Terminated; t != nil {
				out.Reason += fmt.Sprintf(" (last exit code %d, %s)", t.ExitCode, t.Reason)
				out.Logs = x.logs(ctx, pod)
			}
			return
		}
	}
	if pod.Status.Phase == corev1.PodRunning {
		out.Reason = "Running, not ready" + x.lastWarning(ctx, pod.Namespace, "Pod", pod.Name)
		return
	}
	out.Reason = phase + x.lastWarning(ctx, pod.Namespace, "Pod", pod.Name)
}

// podClaims says which claims of pod are not bound, and why.
func (x *Explainer) podClaims(ctx context.Context, pod *corev1.Pod) string {
	var out []string
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim == nil {
			continue
		}
		pvc, err := x.Client.CoreV1().PersistentVolumeClaims(pod.Namespace).Get(ctx, v.PersistentVolumeClaim.ClaimName, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			out = append(out, "PersistentVolumeClaim "+v.PersistentVolumeClaim.ClaimName+" not found")
		case err == nil && pvc.Status.Phase != corev1.ClaimBound:
			out = append(out, "PersistentVolumeClaim "+pvc.Name+" "+x.claim(ctx, pvc))
		}
	}
	return strings.Join(out, "; ")
}

// claim says why pvc is not bound.
func (x *Explainer) claim(ctx context.Context, pvc *corev1.PersistentVolumeClaim) string {
	s := string(pvc.Status.Phase)
	if pvc.Status.Phase == corev1.ClaimBound {
		return s
	}
	class := "the default StorageClass"
	if pvc.Spec.StorageClassName != nil {
		class = fmt.Sprintf("StorageClass %q", *pvc.Spec.StorageClassName)
	}
	s += " (" + class + ")"
	if w := x.lastWarning(ctx, pvc.Namespace, "PersistentVolumeClaim", pvc.Name); w != "" {
		return s + w
	}
	// Without a warning the newest event says what the claim waits for
	// ("waiting for first consumer", "waiting for a volume to be created").
	if e := x.lastEvent(ctx, pvc.Namespace, "PersistentVolumeClaim", pvc.Name, ""); e != nil {
		return s + ": " + e.Reason + ": " + oneLine(e.Message)
	}
	return s + ": no provisioner has acted on it"
}

// lastWarning is "; <reason>: <message>" of the newest Warning event of
// the object, or "".
func (x *Explainer) lastWarning(ctx context.Context, namespace, kind, name string) string {
	if e := x.lastEvent(ctx, namespace, kind, name, corev1.EventTypeWarning); e != nil {
		return "; " + e.Reason + ": " + oneLine(e.Message)
	}
	return ""
}

// lastEvent is the newest event of the object (of type typ unless empty).
func (x *Explainer) lastEvent(ctx context.Context, namespace, kind, name, typ string) *corev1.Event {
	set := fields.Set{"involvedObject.kind": kind, "involvedObject.name": name}
	if typ != "" {
		set["type"] = typ
	}
	list, err := x.Client.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{FieldSelector: set.AsSelector().String()})
	if err != nil || len(list.Items) == 0 {
		return nil
	}
	newest := &list.Items[0]
	for i := range list.Items {
		if eventTime(&list.Items[i]).After(eventTime(newest)) {
			newest = &list.Items[i]
		}
	}
	return newest
}

func eventTime(e *corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

// logs are the last log lines of the pod's first container that
// terminated with an error, or a note why they cannot be read.
func (x *Explainer) logs(ctx context.Context, pod *corev1.Pod) string {
	if x.LogLines <= 0 {
		return ""
	}
	container := ""
	statuses := append(slices.Clone(pod.Status.InitContainerStatuses), pod.Status.ContainerStatuses...)
	for _, s := range statuses {
		if t := s.State.Terminated; t != nil && t.ExitCode != 0 {
			container = s.Name
			break
		}
		if t := s.LastTerminationState.Terminated; t != nil && t.ExitCode != 0 {
			container = s.Name
			break
		}
	}
	if container == "" && len(pod.Spec.Containers) > 0 {
		container = pod.Spec.Containers[0].Name
	}
	lines := x.LogLines
	b, err := x.Client.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{Container: container, TailLines: &lines}).DoRaw(ctx)
	if err != nil {
		return fmt.Sprintf("log of pod %s not readable: %s", pod.Name, oneLine(err.Error()))
	}
	if s := strings.TrimSpace(string(b)); s != "" {
		return fmt.Sprintf("last log lines of pod %s, container %s:\n%s", pod.Name, container, s)
	}
	return ""
}

func terminated(pod *corev1.Pod) string {
	statuses := append(slices.Clone(pod.Status.InitContainerStatuses), pod.Status.ContainerStatuses...)
	for _, s := range statuses {
		if t := s.State.Terminated; t != nil && t.ExitCode != 0 {
			out := fmt.Sprintf(", container %s exited with code %d", s.Name, t.ExitCode)
			if t.Reason != "" {
				out += " (" + t.Reason + ")"
			}
			return out
		}
	}
	if pod.Status.Message != "" {
		return ": " + oneLine(pod.Status.Message)
	}
	return ""
}

func podReady(pod *corev1.Pod) bool {
	if pod.Status.Phase == corev1.PodSucceeded {
		return true
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func causeRank(c Cause) int {
	return slices.Index(Causes, c)
}

func desired(replicas *int32) int32 {
	if replicas == nil {
		return 1
	}
	return *replicas
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
