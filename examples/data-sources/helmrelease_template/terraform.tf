terraform {
  required_version = ">= 1.5"
  required_providers {
    helmrelease = { source = "helmrelease/helmrelease" }
  }
}

# Rendering needs no cluster unless values_from is used (it reads them).
provider "helmrelease" {}

variable "api_key" {
  description = "API key the web chart puts into its Secret."
  type        = string
  sensitive   = true
  default     = "change-me"
}

variable "chart_repository" {
  description = "Helm repository serving the podinfo chart."
  type        = string
  default     = "https://stefanprodan.github.io/podinfo"
}
