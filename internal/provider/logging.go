package provider

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"
)

// logMu serialises every line the provider writes to Terraform's log.
// tflog is not safe for concurrent calls on one context once values are
// masked (the redactor masks secrets): it rewrites the context's field map
// in place while other calls iterate it, and the Go runtime aborts the
// process on that. Helm logs from parallel goroutines (it creates, updates
// and deletes the objects of one kind at once), drift detection compares
// objects concurrently, and a Helm action cut off by its context goes on
// logging after the call returned: one lock for the whole process is the
// only order that holds for all of them. Logging is a small part of any
// request, so the lock costs nothing measurable.
var logMu sync.Mutex

// logInfo writes msg at info level to Terraform's log, from any goroutine.
func logInfo(ctx context.Context, msg string, fields map[string]any) {
	logMu.Lock()
	defer logMu.Unlock()
	tflog.Info(ctx, msg, fields)
}

// logDebug writes msg at debug level to Terraform's log, from any goroutine.
func logDebug(ctx context.Context, msg string, fields map[string]any) {
	logMu.Lock()
	defer logMu.Unlock()
	tflog.Debug(ctx, msg, fields)
}

// progressEvery is how often a long wait says what it still waits for:
// helmrelease_test's progress events, and the log lines of an apply
// waiting for a release's objects.
const progressEvery = 15 * time.Second

// waitProgressEvery is progressEvery when Terraform reads the provider's
// log, else 0: each progress line reads the objects not ready yet, which
// is not worth doing for a log nobody reads.
func waitProgressEvery() time.Duration {
	if strings.EqualFold(os.Getenv("TF_LOG_PROVIDER_HELMRELEASE"), "off") {
		return 0
	}
	for _, v := range []string{"TF_LOG", "TF_LOG_PROVIDER", "TF_LOG_PROVIDER_HELMRELEASE"} {
		if s := os.Getenv(v); s != "" && !strings.EqualFold(s, "off") {
			return progressEvery
		}
	}
	return 0
}

// reconcilerLogger sends the reconciler's progress and Helm's log lines to
// Terraform's log; safe for concurrent use. Its context is replaced once
// the reconciler knows the credentials of its cluster (a kube_config Secret's),
// which the new one masks.
type reconcilerLogger struct {
	ctx *atomic.Pointer[context.Context]
}

func newReconcilerLogger(ctx context.Context) reconcilerLogger {
	l := reconcilerLogger{ctx: &atomic.Pointer[context.Context]{}}
	l.setContext(ctx)
	return l
}

func (l reconcilerLogger) setContext(ctx context.Context) { l.ctx.Store(&ctx) }

func (l reconcilerLogger) Info(msg string, kv ...any)  { logInfo(*l.ctx.Load(), msg, fields(kv)) }
func (l reconcilerLogger) Debug(msg string, kv ...any) { logDebug(*l.ctx.Load(), msg, fields(kv)) }

// helm logs one line of Helm's.
func (l reconcilerLogger) helm(line string) { logDebug(*l.ctx.Load(), "helm: "+line, nil) }

func fields(kv []any) map[string]any {
	out := make(map[string]any, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		out[fmt.Sprint(kv[i])] = kv[i+1]
	}
	return out
}
