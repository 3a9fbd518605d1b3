# Every module listed in go.work; `go test ./...` at a go.work root tests nothing.
MODULES := $(shell go list -f '{{.Dir}}' -m)
ALL     := $(addsuffix /...,$(MODULES))

.PHONY: run test bench fuzz vet tidy generate compose-binary

run: ## everything in one process: embedded NATS, vcsim, services, API (https://127.0.0.1:8080)
	VMOP_METRICS_ADDR=$${VMOP_METRICS_ADDR-127.0.0.1:9090} go run ./stack

# The stack's end-to-end tests run without -race: nats-server and vcsim have data races of
# their own (stream update vs consumer create; vcsim VM registration) that fail them. So do
# the tests built only without -race (`//go:build !race`: crypto's crash test and storage's
# attach-across-restart test, where vcsim races between simultaneous disk reconfigures, and
# placement's awaited create, where vcsim's clone task races with its property collector).
test: ## every test of every module
	go test -race -count=1 -timeout 9m $(filter-out %/stack/...,$(ALL))
	go test -count=1 -timeout 9m -run 'TestCrashDuringEncryption' ./services/crypto/
	go test -count=1 -timeout 9m -run 'TestAttachExactlyOnceAcrossRestart' ./services/storage/
	go test -count=1 -timeout 9m -run 'TestCreateWhoseWaitFailedIsAwaited' ./services/placement/
	go test -count=1 -timeout 15m ./stack/... # with cluster_test.go's ~4 minutes of a NATS cluster and two stacks

bench: ## the benchmark figures
	go test -run '^$$' -bench . -benchmem $(ALL)

# `go test` (and so `make test`) replays the seed corpus and pkg/model/testdata/fuzz only;
# this searches for new inputs. Keep a failing input's file from testdata/fuzz, and copy
# interesting ones from $(go env GOCACHE)/fuzz into pkg/model/testdata/fuzz.
FUZZTIME ?= 3m
fuzz: ## search for admission bugs for FUZZTIME (default 3m); not part of make test
	cd pkg && go test -run '^$$' -fuzz FuzzAdmitVirtualMachine -fuzztime $(FUZZTIME) ./model/

# deploy/compose's image is FROM scratch: this static binary (cgo for SQLite, linked
# statically) and the host's CA bundle, so that building it pulls nothing.
COMPOSE_BUILD := deploy/compose/.build
# Where compose.yaml mounts volumes: made in the image, owned by its unprivileged user.
COMPOSE_MOUNTS := /data /data/api /export /run/vmop /run/vcsim \
	$(addprefix /export/,api placement power storage network crypto)
compose-binary: ## the static vmop binary deploy/compose's image is built from
	mkdir -p $(COMPOSE_BUILD)
	CGO_ENABLED=1 go build -tags osusergo,netgo,sqlite_omit_load_extension \
		-ldflags '-linkmode external -extldflags -static -s -w' -o $(COMPOSE_BUILD)/vmop ./stack
	cp /etc/ssl/certs/ca-certificates.crt $(COMPOSE_BUILD)/
	rm -rf $(COMPOSE_BUILD)/mounts && mkdir -p $(addprefix $(COMPOSE_BUILD)/mounts,$(COMPOSE_MOUNTS))

vet:
	go vet $(ALL)

generate: ## regenerate the OpenAPI schema from pkg/model's types
	go generate ./pkg/model

tidy: ## align versions across modules, then tidy each
	go work sync
	for m in $(MODULES); do (cd $$m && go mod tidy) || exit 1; done
