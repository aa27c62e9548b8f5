package testcluster

import "io"

// NodeName is the name of the simulated node.
const NodeName = "kwok-node-0"

// BuildOptions says where the build modules are and where binaries go.
type BuildOptions struct {
	// RepoRoot is the root of this repository, holding tools/kube. Empty
	// means: found by walking up from the working directory.
	RepoRoot string
	// CacheDir holds one bin directory per build key. Empty means DefaultCacheDir().
	CacheDir string
	// Log receives the output of the go commands; nil discards it.
	Log io.Writer
}

// Options configure Start.
type Options struct {
	// BinDir holds the binaries made by Build.
	BinDir string
	// Dir receives the cluster's data, certificates, logs and kubeconfig.
	Dir string
	// Detach leaves the processes running when the calling process exits
	// (the command line "up"); otherwise they die with it.
	Detach bool
	// Log receives progress lines; nil discards them.
	Log io.Writer
	// AuditNamespaces are namespaces whose requests the API server writes
	// to Cluster.AuditLog, one JSON event per request at the Metadata level
	// (user, verb, object, User-Agent, response code): what tests check of
	// the requests a client sent. None: no audit log.
	AuditNamespaces []string
}

// Cluster is a running local cluster.
type Cluster struct {
	// Dir holds everything the cluster wrote.
	Dir string
	// Kubeconfig is the path of an admin kubeconfig for the cluster.
	Kubeconfig string
	// Host is the API server URL.
	Host string
	// AuditLog is the API server's audit log of the requests in
	// Options.AuditNamespaces; empty when there are none.
	AuditLog string
}
