# Every module listed in go.work; `go test ./...` at a go.work root tests nothing.
MODULES := $(shell go list -f '{{.Dir}}' -m)
ALL     := $(addsuffix /...,$(MODULES))

.PHONY: run test bench vet tidy generate

run: ## everything in one process: embedded NATS, vcsim, services, API (https://127.0.0.1:8080)
	go run ./stack

test: ## every test of every module
	go test -race -count=1 -timeout 9m $(ALL)

bench: ## the benchmark figures
	go test -run '^$$' -bench . -benchmem $(ALL)

vet:
	go vet $(ALL)

generate: ## regenerate the OpenAPI schema from pkg/model's types
	go generate ./pkg/model

tidy: ## align versions across modules, then tidy each
	go work sync
	for m in $(MODULES); do (cd $$m && go mod tidy) || exit 1; done
