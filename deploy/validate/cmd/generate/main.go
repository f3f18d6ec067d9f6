// Command generate writes the files generated from the monitoring mixin
// (package generate): `make mixin`, from the repository root, runs
//
//	cd deploy/validate && go run ./cmd/generate -root ../..
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/driftd/driftd/deploy/validate/generate"
)

func main() {
	root := flag.String("root", "../..", "the repository root")
	flag.Parse()
	files, err := generate.Files(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "generate:", err)
		os.Exit(1)
	}
	var paths []string
	for p := range files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		full := filepath.Join(*root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "generate:", err)
			os.Exit(1)
		}
		if err := os.WriteFile(full, files[p], 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "generate:", err)
			os.Exit(1)
		}
		fmt.Println("wrote", p)
	}
}
