# Holdfast's build. `make test` and `make demo` work on a fresh machine: they build the
# control-plane binaries into a cache outside the repository first (slow once, then reused).
SHELL := /usr/bin/env bash
export GOTOOLCHAIN := local
export GOFLAGS := -mod=mod

BIN ?= bin/holdfast
GO_TEST_FLAGS ?= -count=1 -timeout 30m

# staticcheck 2026.2.2, a release that builds with and supports Go 1.26. It is installed from
# the Go module proxy into a directory named for the version, so that changing the pin installs
# the new one.
STATICCHECK_VERSION ?= v0.8.2
STATICCHECK := $(CURDIR)/bin/staticcheck-$(STATICCHECK_VERSION)/staticcheck

.PHONY: all build generate verify-generate lint control-plane test demo bench clean

all: build

build:
	go build -o $(BIN) ./cmd/holdfast

## generate: deepcopy, CRDs and RBAC from the kubebuilder markers.
generate:
	go tool controller-gen object paths=./api/...
	go tool controller-gen crd paths=./api/... output:crd:artifacts:config=config/crd/bases
	go tool controller-gen rbac:roleName=holdfast-controller paths=./internal/... output:rbac:artifacts:config=config/rbac

## verify-generate: fails when generated files are stale.
verify-generate: generate
	git diff --exit-code -- api config

## lint: go vet and staticcheck over every package, tests included.
lint: $(STATICCHECK)
	go vet ./...
	$(STATICCHECK) ./...

$(STATICCHECK):
	GOBIN="$(dir $(STATICCHECK))" go install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

## control-plane: builds etcd, kube-apiserver and kube-controller-manager into the cache.
control-plane:
	@bash hack/build-control-plane.sh

## test: the whole test suite against real control planes.
test: control-plane
	HOLDFAST_BIN_DIR="$$(bash hack/build-control-plane.sh | tail -n1)" HOLDFAST_REQUIRE_BINARIES=1 \
		go test $(GO_TEST_FLAGS) ./...

## demo: a hub and two target clusters on this machine, with Holdfast managing them.
demo: control-plane build
	HOLDFAST_BIN_DIR="$$(bash hack/build-control-plane.sh | tail -n1)" $(BIN) demo

clean:
	rm -rf bin
