# driftd: a static binary on distroless, running as non-root (65532).
# `make image` builds the same layout without Docker (an OCI tar in bin/);
# deploy/validate holds the two to the same paths, user, port and labels.
#
#   docker build -t driftd:v$(cat VERSION) \
#     --build-arg VERSION=$(cat VERSION) --build-arg REVISION=$(git rev-parse HEAD) \
#     --build-arg BRANCH=$(git rev-parse --abbrev-ref HEAD) .
#   docker run --rm -p 9820:9820 -v "$PWD/driftd.yml:/etc/driftd/driftd.yml:ro" driftd
#
# The default command runs the daemon on /etc/driftd/driftd.yml; the state
# directory /var/lib/driftd is created owned by 65532 (mount a volume there
# to keep it). See docs/deploy.md.

# The builder runs on the build machine's platform and cross-compiles
# (CGO_ENABLED=0), so multi-platform builds need no emulation.
FROM --platform=$BUILDPLATFORM golang:1.26 AS build
WORKDIR /src
# Modules first, so that a source change does not download them again.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=devel
ARG REVISION=unknown
ARG BRANCH=unknown
ARG TARGETOS
ARG TARGETARCH
RUN CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} \
    go build -trimpath -tags netgo \
      -ldflags "-s -w -X github.com/prometheus/common/version.Version=${VERSION} -X github.com/prometheus/common/version.Revision=${REVISION} -X github.com/prometheus/common/version.Branch=${BRANCH}" \
      -o /out/driftd ./cmd/driftd \
 && mkdir -p /out/state

FROM gcr.io/distroless/static-debian12:nonroot
ARG VERSION=devel
ARG REVISION=unknown
LABEL org.opencontainers.image.title="driftd" \
      org.opencontainers.image.description="Probes MCP servers for drift and exports Prometheus metrics" \
      org.opencontainers.image.source="https://github.com/driftd/driftd" \
      org.opencontainers.image.url="https://github.com/driftd/driftd" \
      org.opencontainers.image.version="v${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY --from=build /out/driftd /usr/local/bin/driftd
COPY --from=build --chown=65532:65532 /out/state /var/lib/driftd
USER 65532:65532
EXPOSE 9820
ENTRYPOINT ["/usr/local/bin/driftd"]
CMD ["run", "--config.file", "/etc/driftd/driftd.yml"]
