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

// newProvider is the provider served: provider.New, unless built with
// -tags floor (main_floor.go).
var newProvider = provider.New

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
	if !debug {
		quietUnreadLogs()
	}
	stop := func() {}
	if dir := os.Getenv(profileDirEnv); dir != "" {
		var err error
		if stop, err = startProfiles(dir); err != nil {
			log.Fatal(err.Error())
		}
	}

	err := providerserver.Serve(context.Background(), newProvider(version), providerserver.ServeOpts{
		Address:         "registry.terraform.io/helmrelease/helmrelease",
		Debug:           debug,
		ProtocolVersion: 6,
	})
	stop()
	if err != nil {
		log.Fatal(err.Error())
	}
}

// quietUnreadLogs turns the SDK's and the provider's loggers off when
// Terraform will drop their lines: it reads a provider's log only with
// TF_LOG or TF_LOG_PROVIDER set, and its environment is the provider's.
// Otherwise the SDK logs every request at trace level, JSON-encoded for
// Terraform to decode and discard: a tenth of a no-change plan's CPU.
// TF_LOG_SDK* and TF_LOG_PROVIDER_HELMRELEASE set by hand still win.
func quietUnreadLogs() {
	for _, v := range []string{"TF_LOG", "TF_LOG_PROVIDER"} {
		if os.Getenv(v) != "" {
			return
		}
	}
	for _, v := range []string{"TF_LOG_SDK", "TF_LOG_PROVIDER_HELMRELEASE"} {
		if _, set := os.LookupEnv(v); !set {
			_ = os.Setenv(v, "off")
		}
	}
}
