//go:build unix

package testcluster

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
)

// TestCluster starts a cluster and checks what later tests rely on:
// Deployments become Ready, Jobs complete, bare pods succeed, and pods with
// FailLabel fail; volumes are provisioned, ephemeral storage and zone
// spreading schedule, load balancers get an address; then it stops the cluster and checks nothing is left.
func TestCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	bin, err := Build(ctx, BuildOptions{Log: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "cluster")
	c, err := Start(ctx, Options{BinDir: bin, Dir: dir, Log: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = c.Stop()
		}
	}()
	if _, err := Start(ctx, Options{BinDir: bin, Dir: dir}); err == nil {
		t.Error("a second cluster started in the same directory")
	}

	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	ns := metav1.NamespaceDefault
	labels := map[string]string{"app": "web"}
	container := []corev1.Container{{Name: "c", Image: "example.com/app:1"}}
	pod := func(name string, fail bool) *corev1.Pod {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: container},
		}
		if fail {
			p.Labels = map[string]string{FailLabel: "true"}
		}
		return p
	}
	job := func(name string, fail bool) *batchv1.Job {
		return &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: batchv1.JobSpec{
				BackoffLimit: ptr.To[int32](0),
				Template:     corev1.PodTemplateSpec{ObjectMeta: pod("", fail).ObjectMeta, Spec: pod("", fail).Spec},
			},
		}
	}
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(cs.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: container}},
		},
	}, metav1.CreateOptions{}))
	must(cs.BatchV1().Jobs(ns).Create(ctx, job("job-ok", false), metav1.CreateOptions{}))
	must(cs.BatchV1().Jobs(ns).Create(ctx, job("job-fail", true), metav1.CreateOptions{}))
	must(cs.CoreV1().Pods(ns).Create(ctx, pod("pod-ok", false), metav1.CreateOptions{}))
	must(cs.CoreV1().Pods(ns).Create(ctx, pod("pod-fail", true), metav1.CreateOptions{}))

	eventually(ctx, t, "Deployment web is available with 2 ready replicas", func() bool {
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		return err == nil && d.Status.ReadyReplicas == 2 && d.Status.AvailableReplicas == 2
	})
	jobCondition := func(name string, want batchv1.JobConditionType) func() bool {
		return func() bool {
			j, err := cs.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false
			}
			for _, c := range j.Status.Conditions {
				if c.Type == want && c.Status == corev1.ConditionTrue {
					return true
				}
			}
			return false
		}
	}
	eventually(ctx, t, "Job job-ok is Complete", jobCondition("job-ok", batchv1.JobComplete))
	eventually(ctx, t, "Job job-fail is Failed", jobCondition("job-fail", batchv1.JobFailed))
	podPhase := func(name string, want corev1.PodPhase) func() bool {
		return func() bool {
			p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			return err == nil && p.Status.Phase == want
		}
	}
	eventually(ctx, t, "pod pod-ok Succeeded", podPhase("pod-ok", corev1.PodSucceeded))
	eventually(ctx, t, "pod pod-fail Failed", podPhase("pod-fail", corev1.PodFailed))

	// What public charts need of a real cluster: a StatefulSet whose pods
	// request ephemeral storage, spread over zones, and claim a volume of
	// the default StorageClass; a Service of type LoadBalancer.
	dbLabels := map[string]string{"app": "db"}
	must(cs.AppsV1().StatefulSets(ns).Create(ctx, &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "db"},
		Spec: appsv1.StatefulSetSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: dbLabels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: dbLabels}, Spec: corev1.PodSpec{
				Containers: []corev1.Container{{
					Name: "db", Image: "example.com/db:1",
					Resources:    corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse("1Gi")}},
					VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
				}},
				TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{
					MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.DoNotSchedule,
					LabelSelector: &metav1.LabelSelector{MatchLabels: dbLabels},
				}},
			}},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("8Gi")}},
				},
			}},
		},
	}, metav1.CreateOptions{}))
	must(cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "lb"},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeLoadBalancer,
			Selector: labels,
			Ports:    []corev1.ServicePort{{Port: 80}},
		},
	}, metav1.CreateOptions{}))
	eventually(ctx, t, "PersistentVolumeClaim data-db-0 is Bound", func() bool {
		pvc, err := cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "data-db-0", metav1.GetOptions{})
		return err == nil && pvc.Status.Phase == corev1.ClaimBound && pvc.Spec.StorageClassName != nil && *pvc.Spec.StorageClassName == StorageClassName
	})
	eventually(ctx, t, "StatefulSet db has 1 ready replica", func() bool {
		s, err := cs.AppsV1().StatefulSets(ns).Get(ctx, "db", metav1.GetOptions{})
		return err == nil && s.Status.ReadyReplicas == 1
	})
	eventually(ctx, t, "Service lb has a load balancer address", func() bool {
		s, err := cs.CoreV1().Services(ns).Get(ctx, "lb", metav1.GetOptions{})
		return err == nil && len(s.Status.LoadBalancer.Ingress) == 1 && s.Status.LoadBalancer.Ingress[0].IP == s.Spec.ClusterIP
	})

	// Outages of the API server and of etcd: requests fail while one is
	// stopped; once started again the cluster serves its data and rolls
	// Deployments out.
	for i, component := range []string{ComponentAPIServer, ComponentEtcd} {
		if err := c.StopComponent(component); err != nil {
			t.Fatal(err)
		}
		short, cancelShort := context.WithTimeout(ctx, 3*time.Second)
		_, err := cs.AppsV1().Deployments(ns).Get(short, "web", metav1.GetOptions{})
		cancelShort()
		if err == nil {
			t.Errorf("the API answered with %s stopped", component)
		}
		if err := c.StartComponent(ctx, component); err != nil {
			t.Fatal(err)
		}
		replicas := int32(3 + i)
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("after %s came back: %v", component, err)
		}
		d.Spec.Replicas = &replicas
		must(cs.AppsV1().Deployments(ns).Update(ctx, d, metav1.UpdateOptions{}))
		eventually(ctx, t, fmt.Sprintf("Deployment web ready with %d replicas after the %s outage", replicas, component), func() bool {
			d, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
			return err == nil && d.Status.ReadyReplicas == replicas
		})
	}

	b, err := os.ReadFile(filepath.Join(dir, stateFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	stopped = true
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("cluster directory still exists after Stop: %v", err)
	}
	var st state
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	for _, pid := range st.pids() {
		// A stopped child may linger as a zombie until reaped; signal 0 to a
		// zombie succeeds, so check its state instead.
		if alive(pid) {
			t.Errorf("process %d still runs after Stop", pid)
		}
	}
}

func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name.
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == ')' && i+2 < len(b) {
			return b[i+2] != 'Z'
		}
	}
	return true
}

func eventually(ctx context.Context, t *testing.T, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("gave up waiting: %s", what)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}
