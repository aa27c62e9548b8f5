// Command terraform-provider-helmrelease is the Terraform provider that runs
// Helm releases with the semantics of Flux's HelmRelease.
package main

import (
	"context"
	"flag"
	"log"
	"os"
	debugpkg "runtime/debug"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/provider"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// memoryLimit is the heap size the garbage collector works to stay under
// unless GOMEMLIMIT says otherwise: a plan of many releases renders them in
// parallel, and without a limit the heap grows to twice what is live.
const memoryLimit = 96 << 20

func main() {
	var debug bool
	flag.BoolVar(&debug, "debug", false, "run the provider with support for debuggers like delve")
	flag.Parse()
	if os.Getenv("GOMEMLIMIT") == "" {
		debugpkg.SetMemoryLimit(memoryLimit)
	}

	err := providerserver.Serve(context.Background(), provider.New(version), providerserver.ServeOpts{
		Address:         "registry.terraform.io/helmrelease/helmrelease",
		Debug:           debug,
		ProtocolVersion: 6,
	})
	if err != nil {
		log.Fatal(err.Error())
	}
}
