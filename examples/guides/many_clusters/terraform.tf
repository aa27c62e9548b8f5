terraform {
  required_providers {
    helmrelease = { source = "helmrelease/helmrelease" }
  }
}
