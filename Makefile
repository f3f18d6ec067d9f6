# driftd — build, test, run the demo, benchmarks, lint; the deploy
# artefacts: the container image (make image), the files generated from the
# monitoring mixin (make mixin), their offline checks (make deploy-check).
GO       ?= go
# The version is the VERSION file's (docs/release.md); the image tag is
# v$(VERSION). The stamp is promu's: prometheus/common/version's variables,
# set with -X, read by --version and driftd_build_info. The build date is
# the commit's (SOURCE_DATE_EPOCH), so the same commit builds the same bytes.
VERSION  ?= $(shell cat VERSION)
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
BRANCH   ?= $(shell git rev-parse --abbrev-ref HEAD 2>/dev/null || echo unknown)
BUILD_USER ?= $(shell id -un)@$(shell hostname)
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
BUILD_DATE ?= $(shell date -u -d @$(SOURCE_DATE_EPOCH) +%Y%m%d-%H:%M:%S 2>/dev/null || date -u -r $(SOURCE_DATE_EPOCH) +%Y%m%d-%H:%M:%S)
GOTAGS   ?= netgo
PROMVERSION := github.com/prometheus/common/version
LDFLAGS   = -s -w -X $(PROMVERSION).Version=$(VERSION) -X $(PROMVERSION).Revision=$(REVISION) \
	-X $(PROMVERSION).Branch=$(BRANCH) -X '$(PROMVERSION).BuildUser=$(BUILD_USER)' -X $(PROMVERSION).BuildDate=$(BUILD_DATE)
# make image and make release: the image's name, without its tag.
IMAGE    ?= registry.example.com/driftd
# Fuzz budgets are execution counts, not durations: with a duration Go
# 1.26's fuzz coordinator can report a bare "context deadline exceeded" as a
# failure when -fuzztime expires under CPU contention (go.dev/issue/75804,
# fixed in Go 1.27), with no failing input. A count has no deadline to race.
FUZZTIME ?= 100000x

.PHONY: build test posture-eval fuzz lint bench bench-scale bench-fleet bench-deps run clean deploy-check e2e conformance faults soak browser mixin image release

build:
	CGO_ENABLED=0 $(GO) build -trimpath -tags '$(GOTAGS)' -ldflags "$(LDFLAGS)" -o bin/driftd ./cmd/driftd

# What CI runs (.ci/run): vet, the whole suite under the race detector, and
# each fuzz target briefly (a fixed number of executions each).
test:
	$(GO) vet ./...
	$(GO) test -race -count=1 ./...
	$(MAKE) fuzz FUZZTIME=20000x
	$(MAKE) deploy-check

# The MCP-SEC rules measured on the labelled corpus of
# internal/poison/testdata/posture (docs/security.md, "The posture
# corpus"): precision, recall by kind, tag-stripped variants against their
# originals, misses and false alarms by id, never the text. make test runs
# the same test and fails below precision 0.98 or the committed recall
# floor. POSTURE_FLAGS=-posture.hits also lists what fired on each hit.
posture-eval:
	$(GO) test -count=1 -run '^TestPosture$$' -v ./internal/poison -args $(POSTURE_FLAGS)

# The shipped deploy artefacts, checked offline (docs/deploy.md,
# "Validating offline"): alert rules and their promtool tests; in
# deploy/validate, the kustomize overlays and the Helm chart (rendered and
# linted with the helm library, defaults and each ci/ variant)
# strict-decoded into their API types and held to the same checks, the
# files generated from deploy/mixin compared byte for byte, the dashboard's
# PromQL, the Dockerfile, an image built and opened, the systemd unit
# (systemd-analyze when installed). deploy/validate is its own module, so
# the main module does not carry the Kubernetes, Prometheus, Helm and
# jsonnet libraries. Without promtool (apt-get install prometheus) or
# systemd-analyze (apt-get install systemd) those checks are skipped with a
# notice, except in CI, where .ci/run installs them.
deploy-check:
	@if command -v promtool >/dev/null 2>&1; then \
		promtool check rules deploy/prometheus/alerts.yml && promtool test rules deploy/prometheus/alerts_test.yml; \
	elif [ -n "$$CI" ]; then echo "promtool missing in CI" >&2; exit 1; \
	else echo "NOTICE: promtool not installed (apt-get install prometheus): alert rule checks skipped"; fi
	cd deploy/validate && $(GO) test -count=1 ./...

# The container image without a container engine (docs/deploy.md, "The
# image"): bin/driftd on no base image, with the build machine's CA bundle
# (Debian: apt-get install ca-certificates), user 65532, port 9820, OCI
# labels, no shell; written as bin/driftd-image.tar, both an OCI image
# layout (skopeo copy oci-archive:…) and a docker save archive (crane push,
# docker load). Then the tar is opened and checked (deploy/validate
# TestImage). The Dockerfile builds the same layout with Docker.
# GOOS/GOARCH pick the binary's platform (GOARCH=arm64 make image); the
# image tool and its test run on this machine's.
image: build
	cd deploy/validate && GOOS= GOARCH= $(GO) run ./cmd/image -binary ../../bin/driftd -out ../../bin/driftd-image.tar \
		-ref '$(IMAGE):v$(VERSION)' -version 'v$(VERSION)' -revision '$(REVISION)' -created '$(SOURCE_DATE_EPOCH)'
	cd deploy/validate && GOOS= GOARCH= DRIFTD_IMAGE=$(CURDIR)/bin/driftd-image.tar DRIFTD_IMAGE_VERSION='v$(VERSION)' \
		$(GO) test -count=1 -run '^TestImage$$' .

# A release (docs/release.md), from a clean checkout, without a container
# engine, into dist/: static binaries for RELEASE_PLATFORMS, each with a
# CycloneDX SBOM (cyclonedx-gomod at a pinned version, installed into
# .cache/tools, not a dependency of driftd; it reads the platform of its
# package URLs from GOOS/GOARCH); the multi-arch OCI image index tagged v$(VERSION)
# as an OCI layout (dist/image); the chart as driftd-$(VERSION).tgz; and
# sha256sums.txt. The build user is fixed and every time is the commit's,
# so two machines build the same bytes. Then deploy/validate TestRelease
# reads it all back.
RELEASE_PLATFORMS ?= linux/amd64 linux/arm64 darwin/arm64
RELEASE_BUILD_USER ?= driftd-release
CA_CERTS ?= /etc/ssl/certs/ca-certificates.crt
CYCLONEDX_GOMOD ?= github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod@v1.10.0
release: BUILD_USER = $(RELEASE_BUILD_USER)
release: SHELL := /bin/bash
release: .SHELLFLAGS := -o pipefail -ec
release:
	rm -rf dist && mkdir -p dist
	GOOS= GOARCH= GOBIN=$(CURDIR)/.cache/tools $(GO) install $(CYCLONEDX_GOMOD)
	for p in $(RELEASE_PLATFORMS); do \
		os=$${p%/*}; arch=$${p#*/}; \
		echo "build dist/driftd-$$os-$$arch"; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -tags '$(GOTAGS)' \
			-ldflags "$(LDFLAGS)" -o dist/driftd-$$os-$$arch ./cmd/driftd; \
		GOPROXY=off GOOS=$$os GOARCH=$$arch .cache/tools/cyclonedx-gomod bin -json -licenses -noserial -notimestamp \
			-version v$(VERSION) -output dist/driftd-$$os-$$arch.cdx.json dist/driftd-$$os-$$arch; \
	done
	cd deploy/validate && GOOS= GOARCH= $(GO) run ./cmd/release -dist ../../dist -chart ../helm/driftd -ca-certs '$(CA_CERTS)' \
		-version '$(VERSION)' -revision '$(REVISION)' -created '$(SOURCE_DATE_EPOCH)'
	cd deploy/validate && GOOS= GOARCH= DRIFTD_DIST=$(CURDIR)/dist DRIFTD_RELEASE_VERSION='$(VERSION)' \
		$(GO) test -count=1 -run '^TestRelease$$' .

# Regenerate what comes from the monitoring mixin (deploy/mixin, evaluated
# with go-jsonnet): deploy/prometheus/alerts.yml, the kustomize
# PrometheusRule, deploy/grafana/driftd.json and the Helm chart's copies.
# deploy-check fails while the committed files differ from its output.
mixin:
	cd deploy/validate && $(GO) run ./cmd/generate -root ../..

# End to end on loopback: driftd demo, a real Prometheus scraping it with the
# shipped rules, a real Alertmanager routing to a local webhook; bounded.
e2e: build
	bash deploy/e2e/run.sh

# The official MCP conformance suite's 2026-07-28 client scenarios, driftd
# as the client (docs/testing.md). Needs the npm registry the first time.
conformance: build
	bash test/conformance/run.sh

# The status pages in Debian's headless Chromium (apt-get install chromium):
# the demo and a daemon behind --web.route-prefix, every link, no console
# errors, the outage banner; screenshots in .ci/artifacts/browser.
# test/browser is its own module, so the main one does not carry chromedp.
browser: build
	cd test/browser && $(GO) test -count=1 -v ./...

# Hostile MCP servers against the built binary, `driftd check` and
# `driftd run` (DESIGN §16, docs/testing.md "Fault suite"). Under a minute;
# `go test ./...` runs it too. DRIFTD_FAULTS_KNOWN=1 also runs the rows
# marked as known failures.
faults:
	$(GO) test ./test/faults/ -count=1 -v

# The daemon half of the fault suite for minutes: growth of goroutines, fds
# and memory over DRIFTD_SOAK (default 5m).
DRIFTD_SOAK ?= 5m
soak:
	DRIFTD_SOAK=$(DRIFTD_SOAK) $(GO) test ./test/faults/ -run '^TestSoak$$' -count=1 -v -timeout 2h

fuzz:
	$(GO) test ./internal/mcp/ -run '^$$' -fuzz '^FuzzHeaderValue$$' -fuzztime $(FUZZTIME)
	$(GO) test ./internal/mcp/ -run '^$$' -fuzz '^FuzzSSEReader$$' -fuzztime $(FUZZTIME)
	$(GO) test ./internal/mcp/ -run '^$$' -fuzz '^FuzzParseTool$$' -fuzztime $(FUZZTIME)
	$(GO) test ./internal/manifest/ -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME)
	$(GO) test ./internal/schema/ -run '^$$' -fuzz '^FuzzDiffSchemas$$' -fuzztime $(FUZZTIME)
	$(GO) test ./internal/sanitize/ -run '^$$' -fuzz '^FuzzClip$$' -fuzztime $(FUZZTIME)
	$(GO) test ./internal/config/ -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s

lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...
	$(GO) mod tidy -diff
	cd deploy/validate && $(GO) mod tidy -diff
	cd test/browser && $(GO) mod tidy -diff

# The performance budgets of DESIGN §14 (docs/benchmarks.md), each printed
# as a `budget | goal | measured | met?` line measured side by side in one
# run. Nothing fails on timing; a harness failure (a server that did not
# start, a probe that failed, a tool not installed) fails the target.
# test/bench needs node and npm (it installs the Inspector CLI into
# .cache/bench-inspector) and Debian's prometheus-blackbox-exporter, which
# bench-deps installs when missing and running as root.
bench bench-scale: SHELL := /bin/bash
bench bench-scale: .SHELLFLAGS := -o pipefail -ec
bench: build bench-deps
	DRIFTD_BENCH=1 $(GO) test ./internal/probe/ -run '^(TestDiffScaling|TestDriftHundredThousand)$$' -count=1 -v | grep -v '^=== RUN\|^--- PASS\|^PASS'
	DRIFTD_BENCH=1 $(GO) test ./internal/scheduler/ -run '^TestScaleLateness$$' -count=1 -v | grep -v '^=== RUN\|^--- PASS\|^PASS'
	DRIFTD_BENCH=1 $(GO) test ./internal/daemon/ -run '^(TestReloadScale|TestDiscoveryScale)$$' -count=1 -v | grep -v '^=== RUN\|^--- PASS\|^PASS'
	$(GO) run ./test/bench -driftd bin/driftd bench

# 10,000 targets on one machine (DESIGN §14 "Scale"): minutes, not in CI.
# Distinct servers, each its own manifest (benchgen.Fleet), are the budget;
# the replica shape (five shared manifests) follows as information
# (DRIFTD_BENCH_REPLICA=0 skips it). DRIFTD_BENCH_TARGETS=1000 for a quick
# run; DRIFTD_BENCH_FILL (default 30m) bounds the log-ring fill before the
# steady period.
bench-scale: build
	$(GO) run ./test/bench -driftd bin/driftd scale

# 100,000 distinct targets at @every 5m on one replica, then over 4 shards
# on the same machine (issue 40): two phases of at least 11 minutes each at
# the defaults, ~10 GB of manifests in $$TMPDIR; not in CI. 10,000 targets
# took 24 minutes with a 3m window and 1m drain (docs/benchmarks.md). DRIFTD_BENCH_FLEET_TARGETS (default 100000),
# DRIFTD_BENCH_FLEET_WINDOW and _DRAIN (default 5m each),
# DRIFTD_BENCH_FLEET_SHARDS (default 4; 0 skips the sharded phase).
bench-fleet: build
	$(GO) run ./test/bench -driftd bin/driftd fleet

bench-deps:
	@command -v prometheus-blackbox-exporter >/dev/null 2>&1 || [ "$$(id -u)" != 0 ] || \
		DEBIAN_FRONTEND=noninteractive apt-get install -y prometheus-blackbox-exporter || \
		{ apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y prometheus-blackbox-exporter; }

# The demo: a mock MCP server with deliberate drift, probed by driftd, on
# loopback. ARGS go to driftd demo:
#   make run ARGS='--web.listen-address=127.0.0.1:9999 --log.level=debug'
ARGS ?=
run: build
	./bin/driftd demo $(ARGS)

clean:
	rm -rf bin dist
