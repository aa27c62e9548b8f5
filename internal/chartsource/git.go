package chartsource

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/fluxcd/pkg/git"
	"github.com/fluxcd/pkg/git/gogit"
	"github.com/fluxcd/pkg/git/repository"
	"github.com/fluxcd/pkg/sourceignore"
)

// ErrGit: a Git repository that cannot be cloned (unreachable, refused
// credentials, unknown reference).
var ErrGit = errors.New("git repository not usable")

// ErrChartPath: a path in a source (Git, bucket) that holds no chart.
var ErrChartPath = errors.New("no chart at the path")

// Git is a Git repository a chart is read from (Flux's GitRepository);
// the chart is the directory Source.Name in it.
type Git struct {
	// URL is https://…, http://… or ssh://… (spec.url).
	URL string
	// Ref is what to check out (spec.ref).
	Ref GitRef
	// Identity and KnownHosts are the SSH private key (PEM or OpenSSH)
	// and the known_hosts lines of the server: both required over SSH.
	Identity, KnownHosts string
	// Pinned, when set, is a revision an earlier resolve returned
	// (Resolved.SourceRevision): the checkout is that commit, or an
	// error if Ref no longer resolves to it. A plan's commit is thus the
	// apply's, however the branch moved meanwhile.
	Pinned string
}

// GitRef is a Git reference (GitRepository spec.ref): Name takes
// precedence over SemVer, SemVer over Tag, Tag over Branch; Commit over
// all, or, with Branch, the commit of that branch. Empty: the branch
// master, as GitRepository's default.
type GitRef struct {
	Branch string `json:"branch,omitempty"`
	Tag    string `json:"tag,omitempty"`
	SemVer string `json:"semver,omitempty"`
	Name   string `json:"name,omitempty"`
	Commit string `json:"commit,omitempty"`
}

// kind names the field of r that decides the checkout, for messages.
func (r GitRef) String() string {
	switch {
	case r.Commit != "" && r.Branch != "":
		return fmt.Sprintf("commit %s of branch %s", r.Commit, r.Branch)
	case r.Commit != "":
		return "commit " + r.Commit
	case r.Name != "":
		return "reference " + r.Name
	case r.SemVer != "":
		return fmt.Sprintf("the newest tag matching %q", r.SemVer)
	case r.Tag != "":
		return "tag " + r.Tag
	case r.Branch != "":
		return "branch " + r.Branch
	}
	return "branch " + git.DefaultBranch
}

// pinned is the checkout of revision: the commit it names, reached as ref
// reaches it (the branch it is on, the tag a semver range chose, the
// reference), and the commit, which the checkout must be. The revision
// may be another ref's: a plan of no Helm action keeps the one deployed
// when the configuration names another commit or reference.
func (r GitRef) pinned(revision string) (GitRef, string) {
	pointer, hash := git.SplitRevision(revision)
	commit := hash.String()
	switch {
	case r.Commit != "":
		return GitRef{Branch: r.Branch, Commit: commit}, commit
	case r.Name != "" && pointer != "":
		return GitRef{Name: pointer}, commit
	case r.Name != "":
		return GitRef{Name: r.Name}, commit
	case r.SemVer != "" || r.Tag != "":
		return GitRef{Tag: pointer}, commit
	}
	return GitRef{Branch: r.branch(), Commit: commit}, commit
}

func (r GitRef) branch() string {
	if r.Branch == "" {
		return git.DefaultBranch
	}
	return r.Branch
}

// lastObserved is the revision gogit compares with the remote's to skip a
// clone; branches, tags and names only (semver ranges and commits are
// cloned, or found in the cache).
func (r GitRef) lastObserved(c *git.Commit) string {
	switch {
	case r.Commit != "" || r.SemVer != "":
		return ""
	case r.Name != "":
		return c.AbsoluteReference()
	}
	return c.String()
}

// authOptions are src's credentials as GitRepository reads them from its
// secretRef.
func (g *Git) authOptions(auth Auth) (*git.AuthOptions, error) {
	u, err := url.Parse(g.URL)
	if err != nil {
		return nil, fmt.Errorf("git URL: %w", err)
	}
	data := map[string][]byte{}
	set := func(key, value string) {
		if value != "" {
			data[key] = []byte(value)
		}
	}
	set("username", auth.Username)
	set("password", auth.Password)
	set("identity", g.Identity)
	set("known_hosts", g.KnownHosts)
	ca, cert, key, err := auth.tlsPEM()
	if err != nil {
		return nil, fmt.Errorf("the git repository's TLS: %w", err)
	}
	for k, b := range map[string][]byte{"ca.crt": ca, "tls.crt": cert, "tls.key": key} {
		if b != nil {
			data[k] = b
		}
	}
	opts, err := git.NewAuthOptions(*u, data)
	if err != nil {
		return nil, err
	}
	return opts, nil
}

// gitCacheKey names the checkouts of src's repository in the cache: per
// URL and credentials, as indexes are (credentialID).
func (r *Repositories) gitCacheKey(g *Git, auth Auth) string {
	id := r.credentialID(auth)
	if g.Identity != "" {
		mac := hmac.New(sha256.New, r.credentialKey())
		mac.Write([]byte(g.Identity))
		id += "\x00" + hex.EncodeToString(mac.Sum(nil))
	}
	return g.URL + "\x00" + id
}

// gitCheckout is a commit of a repository, checked out in the cache.
type gitCheckout struct {
	// Dir is the work tree, without .git.
	Dir string
	// Revision is GitRepository's artifact revision: "<ref>@sha1:<hash>"
	// ("main@sha1:…", "v1.2.0@sha1:…"), or "sha1:<hash>" for a commit.
	Revision string
}

// checkoutGit clones g at its reference, shallow, into the cache, where
// each commit is kept once; a reference whose commit is cached costs one
// request of its references (gogit's LastObservedCommit), a pinned commit
// that is cached none.
func (r *Repositories) checkoutGit(ctx context.Context, g *Git, auth Auth) (*gitCheckout, error) {
	opts, err := g.authOptions(auth)
	if err != nil {
		return nil, marked{fmt.Errorf("git repository %s: %w", g.URL, err), ErrGit}
	}
	root := r.cachePath("git", r.gitCacheKey(g, auth))
	pinned := g.Pinned
	ref, want := g.Ref, ""
	if pinned != "" {
		ref, want = g.Ref.pinned(pinned)
		if dir := r.runDir(root, want); isDir(dir) {
			return &gitCheckout{Dir: dir, Revision: pinned}, nil
		}
	}
	refFile := r.cachePath("git-refs", root+"\x00"+fmt.Sprintf("%+v", ref))
	v, err, _ := r.group.Do("git\x00"+refFile, func() (any, error) {
		return r.clone(ctx, g.URL, opts, ref, root, refFile)
	})
	if err != nil {
		return nil, marked{fmt.Errorf("git repository %s, %s: %w", g.URL, g.Ref, err), ErrGit}
	}
	out := v.(*gitCheckout)
	if want != "" && git.ExtractHashFromRevision(out.Revision).String() != want {
		return nil, marked{fmt.Errorf("git repository %s: %s is now %s, not the commit %s planned", g.URL, g.Ref, out.Revision, want), ErrGit}
	}
	return out, nil
}

func (r *Repositories) clone(ctx context.Context, repoURL string, opts *git.AuthOptions, ref GitRef, root, refFile string) (*gitCheckout, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	if err := os.MkdirAll(root, 0o750); err != nil {
		return nil, fmt.Errorf("git cache: %w", err)
	}
	cfg := repository.CloneConfig{
		CheckoutStrategy: repository.CheckoutStrategy{Branch: ref.Branch, Tag: ref.Tag, SemVer: ref.SemVer, RefName: ref.Name, Commit: ref.Commit},
		ShallowClone:     true,
	}
	if last, err := os.ReadFile(refFile); err == nil && isDir(r.runDir(root, git.ExtractHashFromRevision(string(last)).String())) {
		cfg.LastObservedCommit = string(last)
	}
	tmp, err := os.MkdirTemp(root, ".clone-")
	if err != nil {
		return nil, fmt.Errorf("git cache: %w", err)
	}
	defer os.RemoveAll(tmp)
	commit, err := cloneRetrying(ctx, tmp, repoURL, opts, cfg)
	if err != nil {
		return nil, err
	}
	dir := r.runDir(root, commit.Hash.String())
	if git.IsConcreteCommit(*commit) && !isDir(dir) {
		if err := os.RemoveAll(filepath.Join(tmp, ".git")); err != nil {
			return nil, fmt.Errorf("git cache: %w", err)
		}
		if err := keepArtifactFiles(tmp); err != nil {
			return nil, fmt.Errorf("git checkout: %w", err)
		}
		// Another resolve of this run (another reference to the commit)
		// may have checked it out meanwhile: the same files.
		if err := os.Rename(tmp, dir); err != nil && !isDir(dir) {
			return nil, fmt.Errorf("git cache: %w", err)
		}
		removeOtherRuns(root)
	}
	out := &gitCheckout{Dir: dir, Revision: commit.String()}
	if last := ref.lastObserved(commit); last != "" {
		_ = os.MkdirAll(filepath.Dir(refFile), 0o750)
		_ = os.WriteFile(refFile, []byte(last), 0o600) // a cache: without it, the next resolve clones
	}
	return out, nil
}

// cloneAttempts is how many times a clone is tried while its connection
// drops. go-git reports a server that sent everything and closed its SSH
// channel before the client closed its side as "closing input: EOF": a
// race on the client, not a refusal. A clone starts over in an empty
// directory, so another attempt is safe.
const cloneAttempts = 3

// cloneRetrying clones repoURL into dir, again while the connection drops
// (droppedConnection), at most cloneAttempts times.
func cloneRetrying(ctx context.Context, dir, repoURL string, opts *git.AuthOptions, cfg repository.CloneConfig) (*git.Commit, error) {
	clientOpts := []gogit.ClientOption{gogit.WithDiskStorage()}
	if opts.Transport == git.HTTP {
		clientOpts = append(clientOpts, gogit.WithInsecureCredentialsOverHTTP())
	}
	for attempt := 1; ; attempt++ {
		client, err := gogit.NewClient(dir, opts, clientOpts...)
		if err != nil {
			return nil, err
		}
		commit, err := client.Clone(ctx, repoURL, cfg)
		client.Close()
		if err == nil || attempt == cloneAttempts || !droppedConnection(err) {
			return commit, err
		}
		if err := emptyDir(dir); err != nil {
			return nil, fmt.Errorf("git cache: %w", err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w (then: %w)", err, ctx.Err())
		case <-time.After(time.Duration(attempt) * 250 * time.Millisecond):
		}
	}
}

// droppedConnection says whether err is a connection that ended early
// (EOF, reset); go-git formats some of them with %s, so the text decides.
func droppedConnection(err error) bool {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) {
		return true
	}
	msg := err.Error()
	return strings.HasSuffix(msg, ": EOF") || strings.Contains(msg, "unexpected EOF") || strings.Contains(msg, "connection reset by peer")
}

// emptyDir removes what dir holds, keeping dir.
func emptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// resolveGit checks out src's repository and loads the chart at src.Name;
// it returns the checkout's directory too, which the chart's file://
// dependencies may not leave.
func (r *Repositories) resolveGit(ctx context.Context, src Source) (*Resolved, string, error) {
	co, err := r.checkoutGit(ctx, src.Git, src.Auth)
	if err != nil {
		return nil, "", err
	}
	chartDir, err := git.SecurePath(filepath.Join(co.Dir, src.Name))
	if err != nil || !strings.HasPrefix(chartDir, co.Dir+string(filepath.Separator)) && chartDir != co.Dir {
		return nil, "", marked{fmt.Errorf("chart path %q leaves the repository", src.Name), ErrChartPath}
	}
	if !isDir(chartDir) {
		return nil, "", marked{fmt.Errorf("git repository %s at %s has no directory %s", src.Git.URL, co.Revision, src.Name), ErrChartPath}
	}
	if _, err := os.Stat(filepath.Join(chartDir, "Chart.yaml")); err != nil {
		return nil, "", marked{fmt.Errorf("git repository %s at %s has no chart at %s (no Chart.yaml)", src.Git.URL, co.Revision, src.Name), ErrChartPath}
	}
	out, err := resolveLocal(Source{Name: chartDir})
	if err != nil {
		// Named by its path in the repository, not in the cache.
		msg := strings.ReplaceAll(err.Error(), co.Dir+string(filepath.Separator), "")
		return nil, "", marked{fmt.Errorf("git repository %s at %s: %s", src.Git.URL, co.Revision, msg), ErrChartPath}
	}
	out.SourceRevision = co.Revision
	return out, co.Dir, nil
}

// keepArtifactFiles removes from the checkout dir what source-controller
// leaves out of a GitRepository's artifact: files its .sourceignore files
// exclude, or else its default exclusions (CI files, images, archives),
// and anything that is not a regular file (symlinks). The chart then has
// the same files under both engines.
func keepArtifactFiles(dir string) error {
	domain := strings.Split(dir, string(filepath.Separator))
	patterns, err := sourceignore.LoadIgnorePatterns(dir, domain)
	if err != nil {
		return err
	}
	matcher := sourceignore.NewDefaultMatcher(patterns, domain)
	if len(patterns) > 0 {
		matcher = sourceignore.NewMatcher(append(sourceignore.VCSPatterns(domain), patterns...))
	}
	var drop []string
	err = filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		switch {
		case err != nil:
			return err
		case fi.IsDir():
			return nil
		case !fi.Mode().IsRegular() || matcher.Match(strings.Split(p, string(filepath.Separator)), false):
			drop = append(drop, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, p := range drop {
		if err := os.Remove(p); err != nil {
			return err
		}
	}
	return nil
}
