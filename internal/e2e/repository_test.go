//go:build unix

package e2e

import (
	"net/http"
	"testing"
)

// TestRepositoryFails: the chart repository answers 500, serves garbage,
// then is down. A no-change plan keeps working from the index cached in
// cache_dir, with a warning naming the repository; without a cached index
// the plan fails with an error naming it.
func TestRepositoryFails(t *testing.T) {
	parallelMatrix(t)
	ns := newNamespace(t)
	repo := newRepository(t)
	c := config{namespace: ns, repo: repo, cacheDir: t.TempDir()}
	w := newWorkspace(t, "repository")
	body := `  values = { message = "v1" }`
	w.write(c.hcl(map[string]string{"svc": body}))
	w.apply()

	for _, fault := range []struct {
		name   string
		break_ func()
		want   string
	}{
		{"500", func() { repo.FailWith(http.StatusInternalServerError) }, "500 Internal Server Error"},
		{"garbage", func() { repo.FailWith(0); repo.ServeGarbage(true) }, "index"},
		{"down", func() { repo.Close() }, "unreachable"},
	} {
		t.Run(fault.name, func(t *testing.T) {
			fault.break_()
			w.write(c.hcl(map[string]string{"svc": body}))
			res := w.must(0, "plan", "-input=false", "-no-color", "-detailed-exitcode")
			out := res.stdout + res.stderr
			if !has(out, "cached index used") || !has(out, repo.URL) || !has(out, fault.want) {
				t.Errorf("no warning naming the repository %s and %q:\n%s", repo.URL, fault.want, res)
			}

			cold := c
			cold.cacheDir = t.TempDir()
			w.write(cold.hcl(map[string]string{"svc": body}))
			res = w.must(1, "plan", "-input=false", "-no-color")
			if !has(res.stderr, "Chart repository failed") || !has(res.stderr, repo.URL) || !has(res.stderr, fault.want) {
				t.Errorf("without a cached index, the error does not name the repository %s and %q:\n%s", repo.URL, fault.want, res)
			}
		})
	}
}
