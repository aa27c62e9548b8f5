// Package testcluster builds and runs the project's local Kubernetes cluster
// for tests: etcd, kube-apiserver, kube-controller-manager, kube-scheduler and
// kwok simulating one node, built from the official Go modules into one
// executable (tools/kube/cmd/kube) that runs as the component it is named
// after. Everything listens on loopback.
//
// The simulated node runs no containers; kwok moves pods through the Stages in
// kwok.yaml: pods become Running and Ready, so Deployments become Ready; pods
// of Jobs and bare pods whose restartPolicy is not Always then succeed, so
// Jobs complete and Helm test pods pass; such a pod labelled
//
//	testcluster.helmrelease/fail: "true"
//
// fails with exit code 1 instead, so a chart can make a test or hook fail.
// Test charts that must also run on a real cluster (kind) give such a pod
// a real image and a command that exits 1 as well.
//
// Enough of a real cluster for public charts: the node has ephemeral-storage
// capacity and the well-known labels (os, arch, hostname, zone, region,
// instance type); the default StorageClass provisions volumes, so
// PersistentVolumeClaims bind; a Service of type LoadBalancer gets an
// address (its cluster IP) as with a cloud's load balancer.
//
// The executable is built once into a cache keyed by tools/kube's go.mod,
// go.sum and main.go; a cluster then starts in a few seconds.
package testcluster

// StorageClassName is the cluster's default StorageClass: the
// controller-manager's hostPath provisioner makes a volume for each claim.
const StorageClassName = "standard"

// FailLabel is the label that makes a terminating pod fail in the test cluster.
const FailLabel = "testcluster.helmrelease/fail"
