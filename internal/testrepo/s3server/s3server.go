// Package s3server serves S3 for tests: versitygw, a real S3
// implementation, on loopback. Apart from testrepo, so that only the test
// binaries that need an S3 server link it.
package s3server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/versity/versitygw/backend/meta"
	"github.com/versity/versitygw/backend/posix"
	"github.com/versity/versitygw/embedgw"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo"
)

// s3ServeEnv, set in the environment of a process of a binary importing
// this package, makes it an S3 server (serveS3) instead of what it is.
const s3ServeEnv = "HELMRELEASE_TESTREPO_S3_SERVE"

// Region is the region the S3 server answers for.
const Region = "us-east-1"

// S3 is an S3 server on loopback: versitygw, a real S3 implementation, over
// a directory. It runs in a child process, this test binary started again:
// its POSIX backend changes the working directory of its process, which a
// test's own process must keep. testrepo's Username and Password are its
// access key and secret key.
type S3 struct {
	// Endpoint is host:port, without a scheme (Bucket spec.endpoint).
	Endpoint string
	client   *minio.Client
}

// s3Serve is what the child process serves.
type s3Serve struct {
	Root, SideCar, Addr string
}

func init() {
	spec := os.Getenv(s3ServeEnv)
	if spec == "" {
		return
	}
	var s s3Serve
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		fmt.Fprintln(os.Stderr, "testrepo S3 server:", err)
		os.Exit(2)
	}
	if err := serveS3(s); err != nil {
		fmt.Fprintln(os.Stderr, "testrepo S3 server:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// serveS3 serves s until the process is told to stop.
func serveS3(s s3Serve) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	sideCar, err := meta.NewSideCar(s.SideCar)
	if err != nil {
		return err
	}
	opts := posix.PosixOpts{SideCarDir: s.SideCar, Concurrency: 64}
	opts.SetNewDirPerm(0o755)
	be, err := posix.New(s.Root, sideCar, opts)
	if err != nil {
		return err
	}
	err = embedgw.RunVersityGW(ctx, be, &embedgw.Config{
		RootUserAccess: testrepo.Username, RootUserSecret: testrepo.Password, Region: Region, Ports: []string{s.Addr},
		MaxConnections: 256, MaxRequests: 256, MultipartMaxParts: 10000, Quiet: true,
	})
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// New starts an S3 server, stopped with the test.
func New(t testing.TB) *S3 {
	t.Helper()
	dir := t.TempDir()
	root, sideCar := filepath.Join(dir, "root"), filepath.Join(dir, "sidecar")
	for _, d := range []string{root, sideCar} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			t.Fatal(err)
		}
	}
	l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	spec, _ := json.Marshal(s3Serve{Root: root, SideCar: sideCar, Addr: addr}) // strings
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(context.Background(), self, "-test.run=^$")
	cmd.Env = append(os.Environ(), s3ServeEnv+"="+string(spec))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	stopWithParent(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	client, err := minio.New(addr, &minio.Options{Creds: credentials.NewStaticV4(testrepo.Username, testrepo.Password, ""), Region: Region})
	if err != nil {
		t.Fatal(err)
	}
	s := &S3{Endpoint: addr, client: client}
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := client.ListBuckets(ctx)
		cancel()
		if err == nil {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("S3 server on %s not answering: %v\n%s", addr, err, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// MakeBucket creates a bucket.
func (s *S3) MakeBucket(t testing.TB, bucket string) {
	t.Helper()
	if err := s.client.MakeBucket(context.Background(), bucket, minio.MakeBucketOptions{Region: Region}); err != nil {
		t.Fatal(err)
	}
}

// Put writes objects (key → content; "" deletes) into bucket.
func (s *S3) Put(t testing.TB, bucket string, objects map[string]string) {
	t.Helper()
	ctx := context.Background()
	for key, content := range objects {
		var err error
		if content == "" {
			err = s.client.RemoveObject(ctx, bucket, key, minio.RemoveObjectOptions{})
		} else {
			_, err = s.client.PutObject(ctx, bucket, key, bytes.NewReader([]byte(content)), int64(len(content)), minio.PutObjectOptions{})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}
