// Command composecheck validates compose files against the Compose
// Specification with compose-go (the loader Docker Compose itself uses), with
// schema validation, interpolation and the consistency check all on, and
// prints the resolved project as JSON on stdout so that tests can assert policy
// (healthchecks, depends_on conditions, pinned images) on the normalised model.
//
// Usage: composecheck FILE [FILE...]
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
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: composecheck FILE [FILE...]")
		os.Exit(2)
	}
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "composecheck:", err)
		os.Exit(1)
	}
}

func run(files []string) error {
	options, err := cli.NewProjectOptions(
		files,
		cli.WithWorkingDirectory(filepath.Dir(files[0])),
		cli.WithEnv([]string{}), // only what the files say: no host environment
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
