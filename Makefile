# qoslab: `make setup run` runs the main job, `make setup test` the tests.
GO       ?= go
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
LDFLAGS  := -X github.com/qoslab/qoslab/internal/version.Version=$(VERSION)
HOSTOS   := $(shell $(GO) env GOOS)
HOSTARCH := $(shell $(GO) env GOARCH)
# On Linux qoslab needs no C: everything (build, vet, lint, go test) builds
# with cgo off, as the fleet's binaries (make dist) and a machine without a
# C compiler build, so the standard library and each package compile once,
# in one configuration, not once with cgo and again without for the agents.
# A Mac keeps cgo: Virtualization.framework is reached through it.
ifeq ($(HOSTOS),linux)
export CGO_ENABLED ?= 0
endif
# The agent is pure Go on every OS, so every target cross-builds from anywhere.
# Guest agents are stripped (-s -w): a smaller initramfs unpacks faster in the
# guest; the version stays readable from the build info.
CROSS    := darwin/arm64 linux/arm64 linux/amd64

.PHONY: all setup build agents cross dist run image test go-test test-bins test-deps vet lint fmt-check actionlint proto man clean

all: build

# Installs what make run needs (QEMU for this machine's architecture, the Go
# modules, the guest's Debian kernel), and no more; idempotent. What only the
# tests need is make test-deps's.
setup:
	./scripts/setup.sh

build: bin/qoslab bin/qoslab-agent cross

# On macOS, Virtualization.framework refuses to create VMs in a binary whose
# signature lacks com.apple.security.virtualization, and every go build
# replaces the file, so every build signs it again (make run builds too).
bin/qoslab: FORCE
	$(GO) build -ldflags '$(LDFLAGS)' -o $@ ./cmd/qoslab
ifeq ($(HOSTOS),darwin)
	./scripts/codesign.sh $@ qoslab.entitlements
endif

bin/qoslab-agent: FORCE
	CGO_ENABLED=0 $(GO) build -ldflags '$(LDFLAGS)' -o $@ ./guest/agent

cross: $(foreach t,$(CROSS),bin/$(subst /,-,$(t))/qoslab-agent)

# bin/<os>-<arch>/qoslab-agent: the agent cross-built for that OS and arch.
bin/%/qoslab-agent: FORCE
	@echo "agent $(subst -,/,$*) -> $@"
	@CGO_ENABLED=0 GOOS=$(word 1,$(subst -, ,$*)) GOARCH=$(word 2,$(subst -, ,$*)) $(GO) build -ldflags '-s -w $(LDFLAGS)' -o $@ ./guest/agent

# Prebuilt binaries for the fleet playbook (deploy/ansible): qoslab for Linux
# hosts (pure Go there) and every agent, named <binary>-<os>-<arch>. A Mac's
# qoslab needs cgo and code signing, so Macs build theirs (the playbook does).
DIST := linux/amd64 linux/arm64
dist:
	@mkdir -p bin/dist
	@for t in $(DIST); do \
		os=$${t%/*}; arch=$${t#*/}; \
		echo "qoslab $$os/$$arch -> bin/dist/qoslab-$$os-$$arch"; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -ldflags '$(LDFLAGS)' -o bin/dist/qoslab-$$os-$$arch ./cmd/qoslab || exit 1; \
	done
	@for t in $(CROSS); do \
		os=$${t%/*}; arch=$${t#*/}; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -ldflags '-s -w $(LDFLAGS)' -o bin/dist/qoslab-agent-$$os-$$arch ./guest/agent || exit 1; \
	done

# The main job: does QoS survive virtualization here? The built-in "contention"
# experiment: fp at background and user-interactive, 1-2 threads, on the host
# and in a QEMU microVM, with a default-priority spinner pinned to every host CPU (QoS
# only matters on Linux when cores are scarce); it ends with the verdict.
# On a Mac: the default subsumption experiment, shrunk (--quick), on
# Virtualization.framework with the arm64 Linux guest.
ifeq ($(HOSTOS),darwin)
RUNSPEC := --default subsumption --quick
else
RUNSPEC := --default contention
endif
# It builds only what it runs: qoslab, this machine's agent and the guest's
# (the cross-builds for other machines are make build's).
run: bin/qoslab bin/qoslab-agent image
	bin/qoslab run $(RUNSPEC)

# The guest image (a Debian kernel, fetched in Go when the cache lacks it; the agent as /init).
image: bin/qoslab bin/linux-$(HOSTARCH)/qoslab-agent
	bin/qoslab image build linux --arch $(HOSTARCH)

# The darwin lines check what a Mac builds without one: vet, and the
# workloads' test binary linked for darwin/arm64 (their thread CPU clock
# reads among them), which no Linux CI can run but must build.
vet:
	$(GO) vet ./...
	CGO_ENABLED=0 GOOS=darwin GOARCH=arm64 $(GO) vet ./guest/... ./internal/qos/... ./internal/workload/... ./internal/transport/... ./internal/agent/... ./internal/telemetry/... ./internal/hostview/...
	CGO_ENABLED=0 GOOS=darwin GOARCH=arm64 $(GO) test -c -o /dev/null ./internal/workload/...
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(GO) vet ./...
	./scripts/darwin-typecheck
	$(GO) run ./scripts/nilwrapcheck .

# golangci-lint at the version scripts/test-deps.sh pins (.golangci.yml says
# which linters, and why each exclusion), built once per machine by make
# test-deps or on first use. Linux sees every package; the darwin pass sees
# what builds there without cgo (Virtualization.framework's bindings are
# type-checked by make vet instead).
# A second golangci-lint on the machine (another checkout's) waits for the
# first instead of failing (--allow-serial-runners): they share a cache.
GOLANGCI_LINT := bin/tools/golangci-lint
lint:
	./scripts/test-deps.sh golangci-lint
	$(GOLANGCI_LINT) run --allow-serial-runners ./...
	CGO_ENABLED=0 GOOS=darwin GOARCH=arm64 $(GOLANGCI_LINT) run --allow-serial-runners ./guest/... ./internal/qos/... ./internal/workload/... ./internal/transport/... ./internal/agent/... ./internal/telemetry/... ./internal/hostview/...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

# What only the tests need, beyond make setup, each pinned and installed once
# per machine (scripts/test-deps.sh says what and where): golangci-lint and
# actionlint; shellcheck, QEMU for the other architecture, sshd and ansible
# for the fleet playbook's test; rust-vmm's vhost-device-vsock, the vsock
# device of the vz device model (bench --vm-model vz), in which the VM tests
# boot the arm64 guest laid out as Virtualization.framework lays it out; the
# other architecture's kernel. make setup and make run never install them.
test-deps:
	./scripts/test-deps.sh

# The GitHub Actions workflow (.github/workflows), its shell steps through
# shellcheck: actionlint at the version scripts/test-deps.sh pins.
actionlint:
	./scripts/test-deps.sh actionlint
	bin/tools/actionlint .github/workflows/*.yml

# make test: what only the tests need (make test-deps) and the binaries tests
# read from bin/, then go test beside the static checks (fmt-check vet lint
# actionlint build, one after another at nice 10 in the CPU the tests leave),
# then each step's time: see scripts/test.sh.
test:
	@MAKE='$(MAKE)' ./scripts/test.sh

# The binaries tests read from bin/: the amd64 guest's agent (image's
# real-kernel build) and the Mac's (image/macos's agent check).
test-bins: bin/linux-amd64/qoslab-agent bin/darwin-arm64/qoslab-agent

# go test's limit for each package's tests. The slowest package by far is
# cmd/qoslab (its VM and fleet tests): 219 to 311 s in four runs of it alone
# on a 2-CPU machine shared with other builds (in CI the other packages' tests
# run beside it, 70 to 135 s of them; the slowest, internal/hv/qemu, under a
# minute). Beside a contention run and two builds (load 15 to 19) it took
# over 15 minutes, the fleet playbook's test alone 5m34s unfinished. 30
# minutes is about 6 times its slowest quiet run: a busy machine still
# passes, and a test that hangs fails within 30 minutes, not CI's 90.
go-test:
	$(GO) test -count=1 -timeout 30m ./...

proto:
	./scripts/gen-proto.sh

# Man pages, one per command, from the command tree itself: bin/man/*.1
# (read one with `man bin/man/qoslab-run.1`).
man:
	$(GO) run ./scripts/genman bin/man

clean:
	rm -rf bin

FORCE:
