package helm

import (
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
)

// LogBuffer keeps the last lines Helm logged, to attach to a failure: the
// lines before an error usually say what Helm was waiting for.
type LogBuffer struct {
	mu    sync.Mutex
	lines []string
	next  int
	full  bool
	sink  func(string)
}

// DefaultLogLines is how many lines a LogBuffer keeps by default.
const DefaultLogLines = 10

// NewLogBuffer keeps the last size lines; each line is also passed to sink
// (the provider's logger) when sink is not nil.
func NewLogBuffer(size int, sink func(string)) *LogBuffer {
	if size <= 0 {
		size = DefaultLogLines
	}
	return &LogBuffer{lines: make([]string, size), sink: sink}
}

// Handler is the slog handler Helm logs through: each record, at every
// level, becomes one line, `msg key=value …` (time and level left out).
func (b *LogBuffer) Handler() slog.Handler {
	return slog.NewTextHandler(lineWriter{b}, &slog.HandlerOptions{
		Level: slog.LevelDebug,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && (a.Key == slog.TimeKey || a.Key == slog.LevelKey) {
				return slog.Attr{}
			}
			return a
		},
	})
}

// lineWriter takes the text handler's lines: one Write per record.
type lineWriter struct{ b *LogBuffer }

func (w lineWriter) Write(p []byte) (int, error) {
	line := string(p)
	if rest, ok := strings.CutPrefix(line, "msg="); ok {
		line = rest
		// The message unquoted, as Helm 3 wrote its lines.
		if q, err := strconv.QuotedPrefix(rest); err == nil {
			if msg, err := strconv.Unquote(q); err == nil {
				line = msg + rest[len(q):]
			}
		}
	}
	w.b.Log("%s", line)
	return len(p), nil
}

// Log keeps one line, formatted as fmt.Sprintf does.
func (b *LogBuffer) Log(format string, v ...any) {
	line := strings.TrimSpace(fmt.Sprintf(format, v...))
	if line == "" {
		return
	}
	b.mu.Lock()
	b.lines[b.next] = line
	b.next = (b.next + 1) % len(b.lines)
	if b.next == 0 {
		b.full = true
	}
	b.mu.Unlock()
	if b.sink != nil {
		b.sink(line)
	}
}

// Lines returns the kept lines, oldest first.
func (b *LogBuffer) Lines() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	if b.full {
		out = append(out, b.lines[b.next:]...)
	}
	return append(out, b.lines[:b.next]...)
}

// Reset forgets the kept lines.
func (b *LogBuffer) Reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	clear(b.lines)
	b.next, b.full = 0, false
}

// String is the kept lines, one per line.
func (b *LogBuffer) String() string { return strings.Join(b.Lines(), "\n") }
