package kube

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// TestManyRequestsFewConnections: 400 objects created at once, as Helm
// creates a release's objects of a kind, go over one or two connections to
// the API server (without the limit, each request over the server's stream
// limit dialed its own); and watches, held open, do not take the places of
// other requests.
func TestManyRequestsFewConnections(t *testing.T) {
	if testKubeconfig == "" {
		t.Skip("needs the test cluster")
	}
	cfg, err := Config{ConfigPath: testKubeconfig}.RESTConfig(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	// As on an API server that throttles with API Priority and Fairness:
	// no client-side limit (ServerThrottles).
	cfg.RateLimiter, cfg.QPS = nil, -1
	var dials atomic.Int64
	cfg.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns := "in-flight-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	before := dials.Load()
	const objects = 400
	var wg sync.WaitGroup
	errs := make(chan error, objects)
	for i := range objects {
		wg.Go(func() {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}, Data: map[string]string{"i": strconv.Itoa(i)}}
			if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := dials.Load() - before; got > 2 {
		t.Errorf("%d objects created at once dialed the API server %d times, want at most 2", objects, got)
	}

	for range MaxInFlight + 1 {
		w, err := cs.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
	}
	list, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("a list beside %d open watches: %v", MaxInFlight+1, err)
	}
	if len(list.Items) < objects {
		t.Errorf("listed %d ConfigMaps, want %d", len(list.Items), objects)
	}
}

// TestInFlightPerServer: the configurations of one API server built
// apart (kubeconfigs read from Secrets, one per release) share one limit
// of MaxInFlight requests held open at once; a configuration limited on
// its own does not take their places.
func TestInFlightPerServer(t *testing.T) {
	if testKubeconfig == "" {
		t.Skip("needs the test cluster")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var open atomic.Int64
	client := func(limit func(*rest.Config)) kubernetes.Interface {
		cfg, err := Config{ConfigPath: testKubeconfig}.RESTConfig(env(nil))
		if err != nil {
			t.Fatal(err)
		}
		cfg.RateLimiter, cfg.QPS = nil, -1
		limit(cfg)
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	releases := []kubernetes.Interface{client(LimitInFlightPerServer), client(LimitInFlightPerServer), client(LimitInFlightPerServer)}
	var bodies sync.WaitGroup
	stop := make(chan struct{})
	hold := func(cs kubernetes.Interface) {
		defer bodies.Done()
		body, err := cs.CoreV1().RESTClient().Get().AbsPath("/api/v1/namespaces").Stream(ctx)
		if err != nil {
			return
		}
		open.Add(1)
		<-stop
		_ = body.Close()
	}
	for _, cs := range releases {
		for range MaxInFlight {
			bodies.Add(1)
			go hold(cs)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for open.Load() < MaxInFlight && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(time.Second) // any more than the limit would be through by now
	if got := open.Load(); got != MaxInFlight {
		t.Errorf("%d requests held open at once by %d configurations of one server, want %d", got, len(releases), MaxInFlight)
	}
	// A configuration of its own is not held by theirs.
	own := client(LimitInFlight)
	if _, err := own.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err != nil {
		t.Errorf("a request of another limit while theirs are full: %v", err)
	}
	close(stop)
	bodies.Wait()
	if got := open.Load(); got != int64(len(releases)*MaxInFlight) {
		t.Errorf("%d of %d requests ran once places were free", got, len(releases)*MaxInFlight)
	}
}
