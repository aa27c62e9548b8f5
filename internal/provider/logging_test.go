package provider

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"
	"github.com/hashicorp/terraform-plugin-log/tflogtest"
)

// lockedBuffer is a log output written from many goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestEngineLoggerFromManyGoroutines: Helm logs from parallel goroutines
// (one per object of a kind it creates, updates or deletes) on a context
// whose secrets are masked, as every apply of a release with
// sensitive_values has. tflog alone rewrites the context's field map in
// place under masking, which the Go runtime aborts on ("concurrent map
// iteration and map write"); run with -race, this test also fails on the
// unsynchronised access itself. Masking must still hold.
func TestEngineLoggerFromManyGoroutines(t *testing.T) {
	const secret = "s3cr3t-password"
	var out lockedBuffer
	ctx := tflogtest.RootLogger(context.Background(), &out)
	ctx = tflog.SetField(ctx, "tf_resource_type", "helmrelease_release")
	r := &redactor{}
	r.add(secret)
	ctx = r.context(ctx)

	log := newReconcilerLogger(ctx)
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 50 {
				switch j % 3 {
				case 0:
					log.helm("Deleting \"cm-" + secret + "\" in namespace apps...")
				case 1:
					log.Debug("compared", "object", secret, "goroutine", i)
				default:
					log.Info("waiting", "object", "cm")
				}
			}
		}()
	}
	wg.Wait()
	got := out.String()
	if n := strings.Count(got, "\n"); n != 64*50 {
		t.Errorf("%d log lines, want %d", n, 64*50)
	}
	if strings.Contains(got, secret) {
		t.Errorf("a masked secret was logged:\n%.500s", got)
	}
}

// TestWaitProgressOnlyWhenLogsAreRead: progress lines cost requests, so an
// apply writes them only when Terraform reads the provider's log.
func TestWaitProgressOnlyWhenLogsAreRead(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want time.Duration
	}{
		{map[string]string{}, 0},
		{map[string]string{"TF_LOG": "off"}, 0},
		{map[string]string{"TF_LOG": "info"}, progressEvery},
		{map[string]string{"TF_LOG_PROVIDER": "debug"}, progressEvery},
		{map[string]string{"TF_LOG": "trace", "TF_LOG_PROVIDER_HELMRELEASE": "off"}, 0},
		{map[string]string{"TF_LOG_PROVIDER_HELMRELEASE": "info"}, progressEvery},
	} {
		for _, v := range []string{"TF_LOG", "TF_LOG_PROVIDER", "TF_LOG_PROVIDER_HELMRELEASE"} {
			t.Setenv(v, tc.env[v])
		}
		if got := waitProgressEvery(); got != tc.want {
			t.Errorf("with %v: every %s, want %s", tc.env, got, tc.want)
		}
	}
}
