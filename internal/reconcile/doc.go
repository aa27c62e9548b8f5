// Package reconcile is the engine that gives a Helm release the semantics of
// Flux's HelmRelease (helm-controller API v2). It imports no Terraform
// package and is tested against a real cluster without Terraform.
package reconcile
