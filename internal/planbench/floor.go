package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// buildProvider builds the provider from the repository root at out, as
// the release archives build it (.goreleaser.yml): a static binary without
// symbol tables, whose pages the provider's RSS counts. tags are Go build
// tags.
func buildProvider(ctx context.Context, out string, tags ...string) error {
	args := []string{"build", "-trimpath", "-ldflags", "-s -w", "-o", out}
	for _, tag := range tags {
		args = append(args, "-tags", tag)
	}
	build := exec.CommandContext(ctx, "go", append(args, ".")...)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("building the provider %v: %w: %s", tags, err, b)
	}
	return nil
}

// floorBuild is the floor provider (provider.NewFloor) and the Terraform
// CLI configuration that runs it in the provider's place.
type floorBuild struct {
	binary, rc string
}

// buildFloor builds the floor provider into work.
func buildFloor(ctx context.Context, work string) (*floorBuild, error) {
	f := &floorBuild{binary: filepath.Join(work, "floor-bin", "terraform-provider-helmrelease"), rc: filepath.Join(work, "terraformrc-floor")}
	if err := buildProvider(ctx, f.binary, "floor"); err != nil {
		return nil, err
	}
	rc := fmt.Sprintf("provider_installation {\n  dev_overrides {\n    \"helmrelease/helmrelease\" = %q\n  }\n  direct {}\n}\n", filepath.Dir(f.binary))
	if err := os.WriteFile(f.rc, []byte(rc), 0o600); err != nil {
		return nil, err
	}
	return f, nil
}

// leanFloor applies config in dir with the lean floor provider (the
// release without its computed-only attributes: status, objects, notes),
// then measures the plan of args: what the state's shape costs. tf gives
// the context and the API counter.
func leanFloor(tf terraform, floor *floorBuild, dir, config string, args []string) (measure, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return measure{}, err
	}
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(config), 0o600); err != nil {
		return measure{}, err
	}
	t := terraform{ctx: tf.ctx, dir: dir, rc: floor.rc, provider: floor.binary, api: tf.api, env: []string{"HELMRELEASE_FLOOR_SCHEMA=lean"}}
	if _, err := t.run([]string{"apply", "-auto-approve", "-input=false"}, 0); err != nil {
		return measure{}, err
	}
	return t.run(args, 0)
}
