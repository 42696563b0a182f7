# Holdfast's build. `make test` and `make demo` work on a fresh machine: they build the
# control-plane binaries into a cache outside the repository first (slow once, then reused).
SHELL := /usr/bin/env bash
export GOTOOLCHAIN := local
export GOFLAGS := -mod=mod

BIN ?= bin/holdfast

# The release stamp (package internal/version): the git tag, the commit and the commit's date.
# The commit's time is also SOURCE_DATE_EPOCH, the image's creation time, so that building the
# same commit twice gives the same binary and the same image digest.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)
COMMIT_DATE ?= $(shell git log -1 --format=%cI 2>/dev/null)
export SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null)
VERSION_PKG := holdfast.dev/holdfast/internal/version
LDFLAGS := -X $(VERSION_PKG).version=$(VERSION) -X $(VERSION_PKG).commit=$(COMMIT) -X $(VERSION_PKG).date=$(COMMIT_DATE)

# The image's repository; `make image` tags it with $(VERSION).
IMAGE_REPOSITORY ?= ghcr.io/holdfast-dev/holdfast
IMAGE_PLATFORMS ?= linux/amd64,linux/arm64
GO_TEST_FLAGS ?= -count=1 -timeout 30m

# staticcheck 2026.2.2, a release that builds with and supports Go 1.26. It is installed from
# the Go module proxy into a directory named for the version, so that changing the pin installs
# the new one.
STATICCHECK_VERSION ?= v0.8.2
STATICCHECK := $(CURDIR)/bin/staticcheck-$(STATICCHECK_VERSION)/staticcheck

.PHONY: all build image generate verify-generate lint control-plane chromium test demo bench soak clean

all: build

build:
	go build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/holdfast

## image: the multi-platform OCI image, without a container runtime (see hack/image): an OCI
## layout in bin/image/oci and a docker-load tarball of this machine's platform.
image:
	go run ./hack/image -out bin/image -repository $(IMAGE_REPOSITORY) -tag $(VERSION) \
		-platforms $(IMAGE_PLATFORMS) -revision $(COMMIT) -ldflags "$(LDFLAGS)"

## generate: deepcopy, CRDs and RBAC from the kubebuilder markers; the chart gets copies of the
## CRDs and RBAC (a chart cannot read files outside its directory; charts/holdfast's tests fail
## when the copies are stale).
generate:
	go tool controller-gen object paths=./api/...
	go tool controller-gen crd paths=./api/... output:crd:artifacts:config=config/crd/bases
	go tool controller-gen rbac:roleName=holdfast-controller paths=./internal/... output:rbac:artifacts:config=config/rbac
	rm -f charts/holdfast/files/crds/*.yaml
	cp config/crd/bases/*.yaml charts/holdfast/files/crds/
	cp config/rbac/role.yaml charts/holdfast/files/rbac/role.yaml

## verify-generate: fails when generated files are stale.
verify-generate: generate
	git diff --exit-code -- api config charts

## lint: go vet and staticcheck over every package, tests included.
lint: $(STATICCHECK)
	go vet ./...
	$(STATICCHECK) ./...

$(STATICCHECK):
	GOBIN="$(dir $(STATICCHECK))" go install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

## control-plane: builds etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok into the cache.
control-plane:
	@bash hack/build-control-plane.sh

## chromium: installs Debian's chromium package for the web UI's browser tests, when missing.
chromium:
	@bash hack/install-chromium.sh

## test: the whole test suite against real control planes, the browser tests in headless Chromium.
test: control-plane chromium
	HOLDFAST_BIN_DIR="$$(bash hack/build-control-plane.sh | tail -n1)" \
	HOLDFAST_CHROMIUM="$$(bash hack/install-chromium.sh | tail -n1)" HOLDFAST_REQUIRE_BINARIES=1 \
		go test $(GO_TEST_FLAGS) ./...

## bench: every benchmark (bench/) and the soak test (test/soak) once at tiny sizes, seconds
## each, one after another, asserting only that each completes, so that none rots unseen; the
## measurements and the soak themselves are run by hand (bench/README.md, `make soak`). .ci/run
## runs it after the tests.
bench: control-plane chromium
	HOLDFAST_BIN_DIR="$$(bash hack/build-control-plane.sh | tail -n1)" \
	HOLDFAST_CHROMIUM="$$(bash hack/install-chromium.sh | tail -n1)" HOLDFAST_REQUIRE_BINARIES=1 \
	HOLDFAST_BENCH_SMOKE=1 go test -count=1 -p 1 -timeout 30m -run '^TestSmoke$$' ./bench/... ./test/soak

## soak: the soak test with fault injection (test/soak/README.md): 30 minutes of faults against
## the controller, invariants checked after every round, exit status 1 on any violation. Run by
## hand, not by CI; SOAK_FLAGS adds flags, e.g. SOAK_FLAGS='-seed 2036 -log-dir /tmp/soak'.
soak: control-plane
	HOLDFAST_BIN_DIR="$$(bash hack/build-control-plane.sh | tail -n1)" \
		go run ./test/soak -duration 30m $(SOAK_FLAGS)

## demo: a hub and two target clusters on this machine, with Holdfast managing them.
demo: control-plane build
	HOLDFAST_BIN_DIR="$$(bash hack/build-control-plane.sh | tail -n1)" $(BIN) demo

clean:
	rm -rf bin
