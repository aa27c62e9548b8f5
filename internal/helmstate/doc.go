// Package helmstate reads what HashiCorp's helm provider keeps of a
// helm_release in Terraform's state (schema versions 1 and 2: helm provider
// 2.x and 3.x), and composes its values as that provider does, for a
// `moved` block to take the release over.
package helmstate
