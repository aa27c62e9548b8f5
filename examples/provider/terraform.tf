terraform {
  required_version = ">= 1.5"
  required_providers {
    helmrelease = { source = "helmrelease/helmrelease" }
  }
}

variable "kubeconfig" {
  description = "Path of the kubeconfig file."
  type        = string
  default     = "~/.kube/config"
}

variable "kube_context" {
  description = "Context of the kubeconfig to use; null for its current context."
  type        = string
  default     = null
}

variable "cluster_endpoint" {
  description = "API server URL of the workload cluster, e.g. a cluster module's output."
  type        = string
  default     = "https://127.0.0.1:6443"
}

variable "cluster_ca_certificate" {
  description = "PEM CA certificate of the workload cluster."
  type        = string
  default     = null
}

variable "cluster_token" {
  description = "Bearer token for the workload cluster, e.g. from aws_eks_cluster_auth."
  type        = string
  sensitive   = true
  default     = null
}

variable "registry_token" {
  description = "Password or token of the OCI registry."
  type        = string
  sensitive   = true
  default     = null
}
