package chartsource

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// userAgents records the User-Agent of every request a test server
// answers.
type userAgents struct {
	mu   sync.Mutex
	seen []string
}

func (u *userAgents) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.seen = append(u.seen, r.Header.Get("User-Agent"))
		u.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

// since returns the agents of the requests after the first n.
func (u *userAgents) since(n int) []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.seen[n:]...)
}

func (u *userAgents) count() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.seen)
}

// TestUserAgent: index, archive and registry requests name the provider's
// version; Helm's registry client keeps its own agent after it.
func TestUserAgent(t *testing.T) {
	const agent = "terraform-provider-helmrelease/1.2.3 Terraform/1.11.0"
	ctx := context.Background()

	repo := newRepoServer(t, false, relative)
	repos := NewRepositories(t.TempDir(), 0).WithUserAgent(agent)
	if _, err := repos.Resolve(ctx, Source{Name: "web", Version: "1.2.3", Repository: repo.URL}); err != nil {
		t.Fatal(err)
	}
	seen := repo.agents.since(0)
	if len(seen) < 2 {
		t.Fatalf("the repository answered %d requests, want the index and the archive", len(seen))
	}
	for _, got := range seen {
		if got != agent {
			t.Errorf("repository request with User-Agent %q, want %q", got, agent)
		}
	}

	reg := newOCIRegistry(t)
	reg.push(t, "1.0.0", "pushed")
	pushed := reg.agents.count()
	repos = NewRepositories(t.TempDir(), 0).WithUserAgent(agent)
	if _, err := repos.Resolve(ctx, Source{Name: "web", Version: "1.0.0", Repository: reg.url, Auth: reg.auth}); err != nil {
		t.Fatal(err)
	}
	seen = reg.agents.since(pushed)
	if len(seen) == 0 {
		t.Fatal("the registry answered no request")
	}
	for _, got := range seen {
		if !strings.HasPrefix(got, agent+" Helm/") {
			t.Errorf("registry request with User-Agent %q, want %q followed by Helm's", got, agent)
		}
	}

	// Without WithUserAgent the provider is still named.
	repos = NewRepositories(t.TempDir(), 0)
	before := repo.agents.count()
	if _, err := repos.Index(ctx, repo.URL, Auth{}); err != nil {
		t.Fatal(err)
	}
	for _, got := range repo.agents.since(before) {
		if got != DefaultUserAgent {
			t.Errorf("User-Agent %q, want %q", got, DefaultUserAgent)
		}
	}
}
