package testrepo

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fluxcd/gitkit"
	"github.com/fluxcd/pkg/gittestserver"
	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"golang.org/x/crypto/ssh"
)

// Git is a Git server on loopback, Flux's own test server (gitkit over the
// machine's git): smart HTTP with the basic auth of Username and Password,
// and SSH taking the key Identity. Tests commit to its repositories with
// Commit and Tag.
type Git struct {
	server *gittestserver.GitServer
	// Identity is a private key (OpenSSH PEM) the SSH server accepts.
	Identity string
	// KnownHosts is the SSH server's host key as a known_hosts line.
	KnownHosts string

	fetches atomic.Int64
	mu      sync.Mutex // one commit at a time
	// branches are the branches pushed, by repository.
	branches map[string]map[string]bool
}

// acceptedKeys are the public keys (authorized_keys form) of every Git
// server's Identity: gittestserver's key lookup is one for the process.
var acceptedKeys sync.Map

func init() {
	// Once for the process, before any server: gittestserver keeps the
	// lookup in a package variable its SSH servers read.
	(&gittestserver.GitServer{}).PublicKeyLookupFunc(func(content string) (*gitkit.PublicKey, error) {
		if _, ok := acceptedKeys.Load(content); !ok {
			return nil, errors.New("unknown public key")
		}
		return &gitkit.PublicKey{Id: "test"}, nil
	})
}

// NewGit starts a Git server, over HTTP and SSH, stopped with the test.
func NewGit(t testing.TB) *Git {
	t.Helper()
	root := t.TempDir()
	g := &Git{server: gittestserver.NewGitServer(root).AutoCreate().Auth(Username, Password).KeyDir(filepath.Join(root, ".keys")), branches: map[string]map[string]bool{}}
	g.server.AddHTTPMiddlewares(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/git-upload-pack") {
				g.fetches.Add(1)
			}
			next.ServeHTTP(w, r)
		})
	})
	if err := g.server.StartHTTP(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.server.StopHTTP)
	g.Identity = NewSSHKey(t, true)
	if err := g.server.ListenSSH(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = g.server.StartSSH() }()
	t.Cleanup(func() { _ = g.server.StopSSH() })
	hostKey, err := os.ReadFile(filepath.Join(root, ".keys", "gitkit.rsa.pub"))
	if err != nil {
		t.Fatal(err)
	}
	host := strings.TrimPrefix(g.server.SSHAddress(), "ssh://git@")
	hostname, port, _ := strings.Cut(host, ":")
	g.KnownHosts = "[" + hostname + "]:" + port + " " + strings.TrimSpace(string(hostKey))
	return g
}

// NewSSHKey makes an Ed25519 private key (OpenSSH PEM); with accepted,
// every Git server of the process accepts it.
func NewSSHKey(t testing.TB, accepted bool) string {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	if accepted {
		sshPub, err := ssh.NewPublicKey(pub)
		if err != nil {
			t.Fatal(err)
		}
		acceptedKeys.Store(strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sshPub))), true)
	}
	return string(pem.EncodeToMemory(block))
}

// HTTPURL is the repository's URL over HTTP, without credentials.
func (g *Git) HTTPURL(repo string) string { return g.server.HTTPAddress() + "/" + repo + ".git" }

// SSHURL is the repository's URL over SSH (user git).
func (g *Git) SSHURL(repo string) string { return g.server.SSHAddress() + "/" + repo + ".git" }

// Fetches is how many fetches (clones) the HTTP server answered; listing
// references is not one.
func (g *Git) Fetches() int64 { return g.fetches.Load() }

// Commit writes files (path → content; "" deletes) on branch of repo (a
// new repository or branch starts empty), and pushes the commit,
// returning its hash.
func (g *Git) Commit(t testing.TB, repo, branch string, files map[string]string) string {
	t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	auth := &githttp.BasicAuth{Username: Username, Password: Password}
	dir := t.TempDir()
	var r *gogit.Repository
	var err error
	if g.branches[repo][branch] {
		r, err = gogit.PlainClone(dir, false, &gogit.CloneOptions{URL: g.HTTPURL(repo), Auth: auth, ReferenceName: plumbing.NewBranchReferenceName(branch), SingleBranch: true})
	} else {
		// A new branch starts empty.
		r, err = gogit.PlainInit(dir, false)
		if err == nil {
			_, err = r.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{g.HTTPURL(repo)}})
		}
		if err == nil {
			err = r.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.NewBranchReferenceName(branch)))
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	w, err := r.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if content == "" {
			if _, err := w.Remove(name); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Add(name); err != nil {
			t.Fatal(err)
		}
	}
	hash, err := w.Commit("test commit", &gogit.CommitOptions{AllowEmptyCommits: true, Author: &object.Signature{Name: "test", Email: "test@example.com", When: time.Now()}})
	if err != nil {
		t.Fatal(err)
	}
	ref := config.RefSpec("refs/heads/" + branch + ":refs/heads/" + branch)
	if err := r.Push(&gogit.PushOptions{Auth: auth, RefSpecs: []config.RefSpec{ref}, Force: true}); err != nil {
		t.Fatal(err)
	}
	if g.branches[repo] == nil {
		// The repository's first branch is its default (HEAD), as a Git
		// host makes it.
		bare, err := gogit.PlainOpen(filepath.Join(g.server.Root(), repo+".git"))
		if err == nil {
			err = bare.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.NewBranchReferenceName(branch)))
		}
		if err != nil {
			t.Fatal(err)
		}
		g.branches[repo] = map[string]bool{}
	}
	g.branches[repo][branch] = true
	return hash.String()
}

// Tag pushes a lightweight tag of commit to repo.
func (g *Git) Tag(t testing.TB, repo, tag, commit string) {
	t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	auth := &githttp.BasicAuth{Username: Username, Password: Password}
	dir := t.TempDir()
	r, err := gogit.PlainInit(dir, true)
	if err == nil {
		_, err = r.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{g.HTTPURL(repo)}})
	}
	if err == nil {
		err = r.Fetch(&gogit.FetchOptions{Auth: auth, RefSpecs: []config.RefSpec{"+refs/heads/*:refs/heads/*"}})
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.CreateTag(tag, plumbing.NewHash(commit), nil); err != nil {
		t.Fatal(err)
	}
	if err := r.Push(&gogit.PushOptions{Auth: auth, RefSpecs: []config.RefSpec{config.RefSpec("refs/tags/" + tag + ":refs/tags/" + tag)}}); err != nil {
		t.Fatal(err)
	}
}

// ChartFiles are the files of a chart directory dir (from a chart on
// disk, e.g. testdata), as Commit takes them under prefix.
func ChartFiles(t testing.TB, dir, prefix string) map[string]string {
	t.Helper()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	out := map[string]string{}
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(root.FS(), p)
		if err != nil {
			return err
		}
		out[prefix+"/"+p] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
