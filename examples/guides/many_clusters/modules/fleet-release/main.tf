# A release installed into each of the provider's clusters that
# var.clusters names.

terraform {
  required_providers {
    helmrelease = { source = "helmrelease/helmrelease" }
  }
}

variable "clusters" {
  description = "Names of the provider's clusters to install into."
  type        = set(string)
}

variable "name" {
  type = string
}

variable "namespace" {
  type = string
}

variable "chart_repository" {
  type = string
}

variable "chart_version" {
  type    = string
  default = "6.*"
}

variable "values" {
  type    = any
  default = {}
}

resource "helmrelease_release" "this" {
  for_each = var.clusters

  cluster   = each.key
  name      = var.name
  namespace = var.namespace
  chart = {
    name       = "podinfo"
    repository = var.chart_repository
    version    = var.chart_version
  }
  install = { create_namespace = true }
  values = merge(var.values, {
    ui = { message = "podinfo on ${each.key}" }
  })
}

output "ids" {
  value = { for name, r in helmrelease_release.this : name => r.id }
}
