package ociimage

import (
	"archive/tar"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Write puts img into w as one tar that two kinds of tools read:
//
//   - an OCI image layout (oci-layout, index.json, blobs/sha256/…), what
//     `skopeo copy oci-archive:FILE` and `podman load` read, with ref's tag
//     as org.opencontainers.image.ref.name and ref itself as
//     io.containerd.image.name;
//   - a manifest.json pointing into the same blobs, the `docker save`
//     format that `crane push FILE` and `docker load` read.
func Write(w io.Writer, img v1.Image, ref string, mtime time.Time) error {
	tag, err := name.NewTag(ref, name.StrictValidation)
	if err != nil {
		return fmt.Errorf("image reference %q: %w", ref, err)
	}
	manifest, err := img.RawManifest()
	if err != nil {
		return err
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	cfgName, err := img.ConfigName()
	if err != nil {
		return err
	}
	cfg, err := img.RawConfigFile()
	if err != nil {
		return err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	layers, err := img.Layers()
	if err != nil {
		return err
	}

	tw := tar.NewWriter(w)
	file := func(path string, body []byte) error {
		if err := tw.WriteHeader(&tar.Header{Name: path, Mode: 0o644, Size: int64(len(body)), ModTime: mtime, Typeflag: tar.TypeReg, Format: tar.FormatPAX}); err != nil {
			return err
		}
		_, err := tw.Write(body)
		return err
	}
	blob := func(h v1.Hash) string { return "blobs/" + h.Algorithm + "/" + h.Hex }

	index, err := json.Marshal(v1.IndexManifest{
		SchemaVersion: 2,
		MediaType:     types.OCIImageIndex,
		Manifests: []v1.Descriptor{{
			MediaType: types.OCIManifestSchema1,
			Size:      int64(len(manifest)),
			Digest:    digest,
			Platform:  &v1.Platform{OS: cf.OS, Architecture: cf.Architecture},
			Annotations: map[string]string{
				"org.opencontainers.image.ref.name": tag.TagStr(),
				"io.containerd.image.name":          tag.String(),
			},
		}},
	})
	if err != nil {
		return err
	}
	dockerManifest := []struct {
		Config   string
		RepoTags []string
		Layers   []string
	}{{Config: blob(cfgName), RepoTags: []string{tag.String()}}}
	if err := file("oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)); err != nil {
		return err
	}
	if err := file("index.json", index); err != nil {
		return err
	}
	if err := file(blob(digest), manifest); err != nil {
		return err
	}
	if err := file(blob(cfgName), cfg); err != nil {
		return err
	}
	for _, l := range layers {
		d, err := l.Digest()
		if err != nil {
			return err
		}
		rc, err := l.Compressed()
		if err != nil {
			return err
		}
		body, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return err
		}
		if err := file(blob(d), body); err != nil {
			return err
		}
		dockerManifest[0].Layers = append(dockerManifest[0].Layers, blob(d))
	}
	dm, err := json.Marshal(dockerManifest)
	if err != nil {
		return err
	}
	if err := file("manifest.json", dm); err != nil {
		return err
	}
	return tw.Close()
}
