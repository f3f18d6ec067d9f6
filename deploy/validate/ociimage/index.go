package ociimage

import (
	"fmt"
	"os"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Index builds one image per binary (each a static Linux driftd, for its
// own architecture) from o, and puts them in a multi-platform OCI image
// index annotated as the images are. o.Binary is ignored.
func Index(o Options, binaries ...string) (v1.ImageIndex, error) {
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	seen := map[string]string{}
	for _, bin := range binaries {
		o.Binary = bin
		img, err := Build(o)
		if err != nil {
			return nil, err
		}
		cf, err := img.ConfigFile()
		if err != nil {
			return nil, err
		}
		if other, dup := seen[cf.Architecture]; dup {
			return nil, fmt.Errorf("%s and %s are both %s binaries", other, bin, cf.Architecture)
		}
		seen[cf.Architecture] = bin
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add: img,
			Descriptor: v1.Descriptor{
				MediaType: types.OCIManifestSchema1,
				Platform:  &v1.Platform{OS: cf.OS, Architecture: cf.Architecture},
			},
		})
	}
	return mutate.Annotations(idx, Labels(o.Version, o.Revision, o.Created)).(v1.ImageIndex), nil
}

// WriteLayout writes idx as a new OCI image layout directory whose one
// entry is the index, named tag (org.opencontainers.image.ref.name): what
// `crane push DIR REF`, `skopeo copy --all oci:DIR:TAG` and `oras cp
// --from-oci-layout DIR:TAG` push. dir must not exist yet.
func WriteLayout(dir string, idx v1.ImageIndex, tag string) error {
	if _, err := os.Stat(dir); err == nil {
		return fmt.Errorf("%s already exists", dir)
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	return p.AppendIndex(idx, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": tag}))
}
