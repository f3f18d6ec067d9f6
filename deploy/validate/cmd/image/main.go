// Command image builds driftd's container image from a static binary,
// without a container engine, as one tar (an OCI image layout that is also
// a `docker save` archive). `make image` runs it:
//
//	cd deploy/validate && go run ./cmd/image -binary ../../bin/driftd \
//	  -out ../../bin/driftd-image.tar -ref registry.example.com/driftd:0.1.0 \
//	  -version 0.1.0 -revision abc1234 -created 1767225600
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/driftd/driftd/deploy/validate/ociimage"
)

func main() {
	binary := flag.String("binary", "../../bin/driftd", "the static driftd binary")
	certs := flag.String("ca-certs", "/etc/ssl/certs/ca-certificates.crt", "the CA bundle to ship")
	out := flag.String("out", "../../bin/driftd-image.tar", "the tar to write")
	ref := flag.String("ref", "registry.example.com/driftd:0.1.0-dev", "the image's name and tag")
	version := flag.String("version", "0.1.0-dev", "driftd's version")
	revision := flag.String("revision", "unknown", "the source revision")
	created := flag.Int64("created", 0, "the image's time, in Unix seconds (the commit's: SOURCE_DATE_EPOCH)")
	flag.Parse()
	if err := run(*binary, *certs, *out, *ref, *version, *revision, time.Unix(*created, 0).UTC()); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run(binary, certs, out, ref, version, revision string, created time.Time) error {
	img, err := ociimage.Build(ociimage.Options{Binary: binary, CACerts: certs, Version: version, Revision: revision, Created: created})
	if err != nil {
		return err
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	if err := ociimage.Write(w, img, ref, created); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	d, err := img.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("wrote %s: %s %s\n", out, ref, d)
	return nil
}
