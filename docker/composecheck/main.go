// Command composecheck validates compose files against the Compose
// Specification with compose-go (the loader Docker Compose itself uses), with
// schema validation, interpolation and the consistency check all on, and
// prints the resolved project as JSON on stdout so that tests can assert policy
// (healthchecks, depends_on conditions, pinned images) on the normalised model.
//
// Usage: composecheck [-e NAME=VALUE]... FILE [FILE...]
// Later files override earlier ones, as `docker compose -f A -f B` does. The
// environment used for interpolation is only what -e gives (never the host's).
// Exit status 0 and the project as JSON, or 1 and the loader's error on stderr.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/compose-spec/compose-go/v2/cli"
)

func main() {
	env := []string{}
	args := os.Args[1:]
	for len(args) >= 2 && args[0] == "-e" {
		env = append(env, args[1])
		args = args[2:]
	}
	if len(args) < 1 {
		fmt.Fprintln(os.Stderr, "usage: composecheck [-e NAME=VALUE]... FILE [FILE...]")
		os.Exit(2)
	}
	if err := run(args, env); err != nil {
		fmt.Fprintln(os.Stderr, "composecheck:", err)
		os.Exit(1)
	}
}

func run(files []string, env []string) error {
	options, err := cli.NewProjectOptions(
		files,
		cli.WithWorkingDirectory(filepath.Dir(files[0])),
		cli.WithEnv(env), // only what -e says: no host environment
		cli.WithInterpolation(true),
		cli.WithNormalization(true),
		cli.WithConsistency(true),
		cli.WithResolvedPaths(true),
	)
	if err != nil {
		return err
	}
	project, err := options.LoadProject(context.Background())
	if err != nil {
		return err
	}
	for name, service := range project.Services {
		if service.Build == nil {
			continue
		}
		dockerfile := service.Build.Dockerfile
		if !filepath.IsAbs(dockerfile) {
			dockerfile = filepath.Join(service.Build.Context, dockerfile)
		}
		if _, err := os.Stat(dockerfile); err != nil {
			return fmt.Errorf("service %q: dockerfile: %w", name, err)
		}
	}
	out, err := project.MarshalJSON()
	if err != nil {
		return err
	}
	_, err = os.Stdout.Write(append(out, '\n'))
	return err
}
