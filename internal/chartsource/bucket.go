package chartsource

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fluxcd/pkg/sourceignore"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"golang.org/x/sync/errgroup"
)

// ErrBucket: a bucket that cannot be read (unreachable, refused
// credentials, no such bucket).
var ErrBucket = errors.New("bucket not usable")

// ErrChangedSincePlan: a bucket's objects are not those the plan read,
// and a bucket keeps no history to read them from.
var ErrChangedSincePlan = errors.New("source changed since the plan")

// Bucket providers (Bucket spec.provider) the provider reads.
const (
	BucketGeneric = "generic"
	BucketAWS     = "aws"
)

// Bucket is an S3-compatible bucket a chart is read from (Flux's Bucket):
// the objects under Prefix, as source-controller makes its artifact of
// them; the chart is the folder Source.Name. Auth's Username and Password
// are the access key and the secret key, its TLS files those of the
// endpoint.
type Bucket struct {
	// Endpoint is host[:port] (spec.endpoint).
	Endpoint   string `json:"endpoint"`
	BucketName string `json:"bucketName"`
	// Prefix selects the objects (spec.prefix).
	Prefix string `json:"prefix,omitempty"`
	Region string `json:"region,omitempty"`
	// Provider is BucketGeneric (the default) or BucketAWS: without an
	// access key, the AWS provider takes the machine's AWS credentials
	// (environment, shared files, instance role).
	Provider string `json:"provider,omitempty"`
	// Insecure reaches the endpoint over plain HTTP (spec.insecure).
	Insecure bool `json:"insecure,omitempty"`
	// Pinned is Git's: the revision planned.
	Pinned string `json:"-"`
}

// bucketClient is the S3 client of b.
func bucketClient(b *Bucket, auth Auth) (*minio.Client, error) {
	opts := &minio.Options{Region: b.Region, Secure: !b.Insecure}
	switch {
	case auth.Username != "" || auth.Password != "":
		opts.Creds = credentials.NewStaticV4(auth.Username, auth.Password, "")
	case b.Provider == BucketAWS:
		opts.Creds = credentials.NewChainCredentials([]credentials.Provider{
			&credentials.EnvAWS{}, &credentials.FileAWSCredentials{}, &credentials.IAM{},
		})
	}
	if opts.Secure && auth.hasTLS() {
		cfg, err := tlsConfig(auth)
		if err != nil {
			return nil, err
		}
		transport, err := minio.DefaultTransport(true)
		if err != nil {
			return nil, err
		}
		transport.TLSClientConfig = cfg
		opts.Transport = transport
	}
	return minio.New(b.Endpoint, opts)
}

// bucketIndex is the objects of a bucket: key → ETag.
type bucketIndex map[string]string

// revision is source-controller's revision of the index: the SHA-256 of
// its "key etag" lines in key order.
func (idx bucketIndex) revision() string {
	keys := make([]string, 0, len(idx))
	for k := range idx {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	h := sha256.New()
	for _, k := range keys {
		fmt.Fprintf(h, "%s %s\n", k, idx[k])
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// indexBucket lists the objects of b under its prefix that its
// .sourceignore does not exclude, as source-controller does.
func indexBucket(ctx context.Context, client *minio.Client, b *Bucket, tmp string) (bucketIndex, error) {
	exists, err := client.BucketExists(ctx, b.BucketName)
	if err != nil {
		return nil, err
	}
	if !exists {
		return nil, fmt.Errorf("bucket %q not found", b.BucketName)
	}
	ignoreFile := filepath.Join(tmp, sourceignore.IgnoreFile)
	if err := client.FGetObject(ctx, b.BucketName, sourceignore.IgnoreFile, ignoreFile, minio.GetObjectOptions{}); err != nil {
		var resp minio.ErrorResponse
		if !errors.As(err, &resp) || resp.Code != "NoSuchKey" {
			return nil, fmt.Errorf("reading %s: %w", sourceignore.IgnoreFile, err)
		}
	}
	patterns, err := sourceignore.ReadIgnoreFile(ignoreFile, nil)
	if err != nil {
		return nil, err
	}
	matcher := sourceignore.NewMatcher(patterns)
	idx := bucketIndex{}
	for obj := range client.ListObjects(ctx, b.BucketName, minio.ListObjectsOptions{Recursive: true, Prefix: b.Prefix}) {
		if obj.Err != nil {
			return nil, obj.Err
		}
		if strings.HasSuffix(obj.Key, "/") || obj.Key == sourceignore.IgnoreFile || matcher.Match(strings.Split(obj.Key, "/"), false) {
			continue
		}
		idx[obj.Key] = obj.ETag
	}
	return idx, nil
}

// checkoutBucket downloads the chart's objects of the bucket into the
// cache, once per revision of the bucket's index: a bucket whose objects
// have not changed costs one listing. A pinned revision that is cached
// costs nothing; one that is not, and that the bucket no longer has,
// is an error: a bucket keeps no history to read it from.
func (r *Repositories) checkoutBucket(ctx context.Context, b *Bucket, chartPath string, auth Auth) (dir, revision string, err error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	root := r.cachePath("bucket", b.Endpoint+"\x00"+b.BucketName+"\x00"+b.Prefix+"\x00"+chartPath+"\x00"+r.credentialID(auth))
	pinned := b.Pinned
	cached := func(rev string) string { return r.runDir(root, strings.TrimPrefix(rev, "sha256:")) }
	if pinned != "" && isDir(cached(pinned)) {
		return cached(pinned), pinned, nil
	}
	client, err := bucketClient(b, auth)
	if err != nil {
		return "", "", err
	}
	if err := os.MkdirAll(root, 0o750); err != nil {
		return "", "", fmt.Errorf("bucket cache: %w", err)
	}
	tmp, err := os.MkdirTemp(root, ".fetch-")
	if err != nil {
		return "", "", fmt.Errorf("bucket cache: %w", err)
	}
	defer os.RemoveAll(tmp)
	idx, err := indexBucket(ctx, client, b, tmp)
	if err != nil {
		return "", "", err
	}
	revision = idx.revision()
	if pinned != "" && revision != pinned {
		return "", "", marked{fmt.Errorf("its objects changed since the plan (revision %s, planned %s)", revision, pinned), ErrChangedSincePlan}
	}
	dir = cached(revision)
	if !isDir(dir) {
		files := filepath.Join(tmp, "files")
		if err := downloadChart(ctx, client, b.BucketName, idx, chartPath, files); err != nil {
			return "", "", err
		}
		// Another resolve of this run may have downloaded the revision
		// meanwhile: the same objects.
		if err := os.Rename(files, dir); err != nil && !isDir(dir) {
			return "", "", fmt.Errorf("bucket cache: %w", err)
		}
		removeOtherRuns(root)
	}
	return dir, revision, nil
}

// downloadChart downloads the objects of idx under chartPath into dir,
// by their keys, a few at a time.
func downloadChart(ctx context.Context, client *minio.Client, bucket string, idx bucketIndex, chartPath, dir string) error {
	prefix := strings.Trim(path.Clean("/"+chartPath), "/") + "/"
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for key := range idx {
		if !strings.HasPrefix(key, prefix) {
			continue
		}
		target := filepath.Join(dir, filepath.FromSlash(key))
		if !within(dir, target) {
			return fmt.Errorf("object key %q leaves the chart's folder", key)
		}
		g.Go(func() error { return client.FGetObject(ctx, bucket, key, target, minio.GetObjectOptions{}) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return os.MkdirAll(dir, 0o750) // a folder without objects is a missing chart, said by the caller
}

// resolveBucket reads the chart at src.Name from src.Bucket; it returns
// the folder holding the chart's files, which its file:// dependencies
// may not leave.
func (r *Repositories) resolveBucket(ctx context.Context, src Source) (*Resolved, string, error) {
	b := src.Bucket
	dir, revision, err := r.checkoutBucket(ctx, b, src.Name, src.Auth)
	where := fmt.Sprintf("bucket %s on %s", b.BucketName, b.Endpoint)
	if err != nil {
		return nil, "", marked{fmt.Errorf("%s: %w", where, err), ErrBucket}
	}
	chartDir := filepath.Join(dir, filepath.FromSlash(src.Name))
	if !within(dir, chartDir) {
		return nil, "", marked{fmt.Errorf("chart path %q leaves the bucket", src.Name), ErrChartPath}
	}
	if _, err := os.Stat(filepath.Join(chartDir, "Chart.yaml")); err != nil {
		return nil, "", marked{fmt.Errorf("%s at %s has no chart at %s (no %s/Chart.yaml)", where, revision, src.Name, src.Name), ErrChartPath}
	}
	out, err := resolveLocal(Source{Name: chartDir})
	if err != nil {
		msg := strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), "")
		return nil, "", marked{fmt.Errorf("%s at %s: %s", where, revision, msg), ErrChartPath}
	}
	out.SourceRevision = revision
	return out, dir, nil
}
