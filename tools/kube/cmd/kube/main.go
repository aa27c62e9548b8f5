// Command kube is the local test cluster in one executable: etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler and kwok, chosen
// by the name it is run under (the build links each name to it), as k3s and
// the former hyperkube do. One executable is one link of the packages the
// five share, where five executables were five links and kwok's own module
// versions a second compile of client-go.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	_ "time/tzdata" // CronJob time zones, as kube-apiserver and kube-controller-manager link it

	"github.com/spf13/pflag"
	"go.etcd.io/etcd/server/v3/etcdmain"
	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"          // the JSON log format
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go's metrics
	_ "k8s.io/component-base/metrics/prometheus/version"  // the version metric
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
	kwokconfig "sigs.k8s.io/kwok/pkg/config"
	kwok "sigs.k8s.io/kwok/pkg/kwok/cmd"
	kwoklog "sigs.k8s.io/kwok/pkg/log"
	"sigs.k8s.io/kwok/pkg/utils/signals"
)

func main() {
	switch name := filepath.Base(os.Args[0]); name {
	case "etcd":
		etcdmain.Main(os.Args)
	case "kube-apiserver":
		os.Exit(cli.Run(apiserver.NewAPIServerCommand()))
	case "kube-controller-manager":
		os.Exit(cli.Run(controllermanager.NewControllerManagerCommand()))
	case "kube-scheduler":
		os.Exit(cli.Run(scheduler.NewSchedulerCommand()))
	case "kwok":
		os.Exit(runKwok())
	default:
		fmt.Fprintf(os.Stderr, "%s: run as etcd, kube-apiserver, kube-controller-manager, kube-scheduler or kwok (a link of that name to this executable)\n", name)
		os.Exit(2)
	}
}

// runKwok is kwok's own main (sigs.k8s.io/kwok/cmd/kwok), which is not a
// package that can be imported.
func runKwok() int {
	// Cobra adds pflag's global flags to every command. Linked with
	// Kubernetes, they hold component-base's --version, whose type clashes
	// with the boolean --version cobra gives kwok; kwok registers none there.
	pflag.CommandLine = pflag.NewFlagSet(os.Args[0], pflag.ExitOnError)
	flags := pflag.NewFlagSet("global", pflag.ContinueOnError)
	flags.ParseErrorsAllowlist.UnknownFlags = true
	flags.Usage = func() {}
	ctx := signals.SetupSignalContext()
	ctx, logger := kwoklog.InitFlags(ctx, flags)
	ctx, err := kwokconfig.InitFlags(ctx, flags)
	if err != nil {
		_, _ = os.Stderr.Write([]byte(flags.FlagUsages()))
		logger.Error("Init config flags", "err", err)
		return 1
	}
	command := kwok.NewCommand(ctx)
	command.PersistentFlags().AddFlagSet(flags)
	if err := command.ExecuteContext(ctx); err != nil {
		logger.Error("Execute exit", "err", err)
		return 1
	}
	return 0
}
