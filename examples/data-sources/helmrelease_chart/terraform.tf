terraform {
  required_version = ">= 1.5"
  required_providers {
    helmrelease = { source = "helmrelease/helmrelease" }
  }
}

provider "helmrelease" {}

variable "chart_repository" {
  description = "Helm repository serving the podinfo chart."
  type        = string
  default     = "https://stefanprodan.github.io/podinfo"
}

variable "oci_repository" {
  description = "OCI repository holding the podinfo chart."
  type        = string
  default     = "oci://ghcr.io/stefanprodan/charts"
}

variable "oci_ca_file" {
  description = "PEM file of a CA the OCI registry's certificate chains to; null for the system's roots."
  type        = string
  default     = null
}
