package helm

import (
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"testing"
)

func TestLogBuffer(t *testing.T) {
	var sunk []string
	b := NewLogBuffer(3, func(s string) { sunk = append(sunk, s) })
	if len(b.Lines()) != 0 {
		t.Fatalf("new buffer has lines: %v", b.Lines())
	}
	b.Log("one %d", 1)
	b.Log("  ")
	b.Log("two")
	if got := b.Lines(); !reflect.DeepEqual(got, []string{"one 1", "two"}) {
		t.Errorf("Lines = %v", got)
	}
	b.Log("three")
	b.Log("four")
	b.Log("five")
	if got := b.Lines(); !reflect.DeepEqual(got, []string{"three", "four", "five"}) {
		t.Errorf("Lines after wrapping = %v", got)
	}
	if len(sunk) != 5 {
		t.Errorf("sink got %d lines, want 5", len(sunk))
	}
	b.Reset()
	if b.String() != "" {
		t.Errorf("after Reset: %q", b.String())
	}
}

func TestLogBufferConcurrent(t *testing.T) {
	b := NewLogBuffer(5, nil)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b.Log("line %d", i)
		}()
	}
	wg.Wait()
	if got := b.Lines(); len(got) != 5 || !strings.HasPrefix(got[0], "line ") {
		t.Errorf("Lines = %v", got)
	}
}

// TestLogBufferHandler: Helm 4's slog records become one line each, the
// message first and unquoted, then the attributes (of every level, with
// the logger's own attributes and groups), without time and level.
func TestLogBufferHandler(t *testing.T) {
	b := NewLogBuffer(5, nil)
	log := slog.New(b.Handler())
	log.Debug("creating resource(s)", "resources", 2)
	log.With("release", "web").Warn("skipping delete", "kind", "ConfigMap", "error", `not "owned"`)
	log.WithGroup("wait").Info("done")
	want := []string{
		"creating resource(s) resources=2",
		`skipping delete release=web kind=ConfigMap error="not \"owned\""`,
		"done",
	}
	if got := b.Lines(); !reflect.DeepEqual(got, want) {
		t.Errorf("Lines =\n%q\nwant\n%q", got, want)
	}
}
