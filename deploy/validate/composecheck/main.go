// Command composecheck loads a compose file as `docker compose config` does, with compose-go, the loader that
// Docker Compose itself is built on: schema validation, interpolation from the environment and an env file,
// normalization and the consistency checks (unknown services in depends_on, missing volumes and networks, ...).
// It prints the resolved project and exits 1 on any error, and also on any warning (such as a variable that is
// used but not set), which Docker Compose would only print.
//
//	composecheck [-env-file FILE] COMPOSE_FILE...
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/sirupsen/logrus"
)

// warnings counts what compose-go reports without failing.
type warnings struct{ count int }

func (w *warnings) Levels() []logrus.Level { return []logrus.Level{logrus.WarnLevel} }

func (w *warnings) Fire(*logrus.Entry) error {
	w.count++
	return nil
}

func main() {
	envFile := flag.String("env-file", "", "env file for interpolation (default: .env beside the first compose file)")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: composecheck [-env-file FILE] COMPOSE_FILE...")
		os.Exit(2)
	}
	seen := &warnings{}
	logrus.AddHook(seen)

	var envFiles []string
	if *envFile != "" {
		envFiles = append(envFiles, *envFile)
	}
	options, err := cli.NewProjectOptions(flag.Args(),
		// The project directory is the first file's, as with `docker compose -f`.
		cli.WithWorkingDirectory(filepath.Dir(flag.Arg(0))),
		cli.WithOsEnv,
		cli.WithEnvFiles(envFiles...),
		cli.WithDotEnv,
		cli.WithInterpolation(true),
		cli.WithNormalization(true),
		cli.WithResolvedPaths(true),
		cli.WithConsistency(true),
	)
	if err != nil {
		fail(err)
	}
	project, err := options.LoadProject(context.Background())
	if err != nil {
		fail(err)
	}
	out, err := project.MarshalYAML()
	if err != nil {
		fail(err)
	}
	if _, err := os.Stdout.Write(out); err != nil {
		fail(err)
	}
	if seen.count > 0 {
		fail(fmt.Errorf("%d warning(s), see above", seen.count))
	}
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "composecheck: %v\n", err)
	os.Exit(1)
}
