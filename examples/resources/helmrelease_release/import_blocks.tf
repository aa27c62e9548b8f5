# Terraform >= 1.12: import blocks, by identity or by ID.
import {
  to       = helmrelease_release.web
  identity = { namespace = "apps", name = "web" }
}

import {
  to = helmrelease_release.api
  id = "apps/api"
}

# Terraform >= 1.8: a helm_release of HashiCorp's helm provider moves in
# place, without reinstalling the release.
moved {
  from = helm_release.cache
  to   = helmrelease_release.cache
}
