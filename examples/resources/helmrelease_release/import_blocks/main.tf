# Terraform >= 1.12: releases installed by helm (or Flux, or another tool)
# taken over without reinstalling, by identity or by ID
# (<storage_namespace>/<release_name>). The next plan shows only what the
# configuration changes.
import {
  to       = helmrelease_release.podinfo
  identity = { namespace = "apps", name = "podinfo" }
}

resource "helmrelease_release" "podinfo" {
  name      = "podinfo"
  namespace = "apps"
  chart     = { repository = var.chart_repository, name = "podinfo", version = "6.*" }
}

import {
  to = helmrelease_release.backend
  id = "apps/backend"
}

resource "helmrelease_release" "backend" {
  name      = "backend"
  namespace = "apps"
  chart     = { repository = var.chart_repository, name = "podinfo", version = "6.*" }
}
