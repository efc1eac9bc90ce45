# knative-fleet: `make demo` runs the main job on a local lab, `make test` runs every test.
SHELL := /bin/bash
.ONESHELL:
.SHELLFLAGS := -euo pipefail -c

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.requirements-$(shell sha256sum requirements.txt | cut -c1-12)
BIN = $(shell toolchain/build.sh --print)
# The Pulumi CLI and Kubernetes provider the stacks run on (docs/settings.md,
# KNATIVE_FLEET_BINARIES): `released`, exactly as released (what users run; the lab
# toolchain's, the default), or `patched`, with toolchain/patches/ (built with the tests'
# tools, for the benchmark's comparison). Each set's Pulumi home holds its Kubernetes
# provider as the released plugin.
export KNATIVE_FLEET_BINARIES ?= released
ifeq ($(KNATIVE_FLEET_BINARIES),patched)
PULUMI_BIN = $(BIN)
export PULUMI_HOME := $(shell toolchain/build.sh --home)
PULUMI_TOOLS := test-tools
else
PULUMI_BIN = $(shell toolchain/build.sh --released)
export PULUMI_HOME := $(shell toolchain/build.sh --released-home)
PULUMI_TOOLS := toolchain
endif
STATE := $(CURDIR)/.lab/state
export PULUMI_BACKEND_URL ?= file://$(STATE)
export PULUMI_CONFIG_PASSPHRASE ?= knative-fleet-demo
export PULUMI_SKIP_UPDATE_CHECK := true
export PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION := true
# Opt-ins the lab runs with (README step 4: Pulumi's defaults need neither). One state write per
# run instead of two full rewrites per object (docs/performance.md, "Self-managed backends and the engine's diffs").
export PULUMI_SKIP_CHECKPOINTS ?= true
# Each object's Diff off the engine's one-at-a-time step loop (docs/performance.md, "Self-managed backends and the engine's diffs").
export PULUMI_PARALLEL_DIFF ?= true
TOOLS_ENV = PATH="$(if $(filter-out $(BIN),$(PULUMI_BIN)),$(PULUMI_BIN):)$(BIN):$(CURDIR)/$(VENV)/bin:$$PATH"
PULUMI = $(TOOLS_ENV) pulumi

.PHONY: venv toolchain test-tools lab-up lab-down lab-status lab-dump demo demo-destroy review apply fleet-status drift drift-repair test unit lint bench bench-cost bench-breakdown bench-levers bench-floor bench-policy bench-shard

# The lowest Python the project runs on (README, "Set-up"); an older one is refused here.
PYTHON_MIN := 3.11.2
$(STAMP): requirements.txt
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info[:3] < (3, 11, 2))' || {
	  echo "error: knative-fleet needs Python $(PYTHON_MIN) or later; $(PYTHON) is" \
	    "$$($(PYTHON) --version 2>&1). Fix: make PYTHON=/path/to/python3.11 ..." >&2; exit 1; }
	echo "venv: $(VENV) with requirements.txt"
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	touch $(STAMP)

venv: $(STAMP)

# The terminal gets one line per toolchain step; the build's whole output (every module
# download, every compiler message) goes to $(TOOLCHAIN_LOG), whose end is shown on failure.
TOOLCHAIN_LOG := .lab/toolchain.log
define build_tools
	@mkdir -p .lab
	if [ ! -f "$$(dirname "$$(toolchain/build.sh --print)")/$(3)" ]; then
	  echo "toolchain: building$(2) from pinned Go modules, once per machine; log: $(TOOLCHAIN_LOG)"
	fi
	if ! toolchain/build.sh $(1) 2>&1 >/dev/null | tee $(TOOLCHAIN_LOG) \
	    | { grep --line-buffered -E 'toolchain: (built|[^b])' || true; }; then
	  echo "toolchain: failed; the end of $(TOOLCHAIN_LOG):" >&2
	  tail -n 40 $(TOOLCHAIN_LOG) >&2
	  exit 1
	fi
endef

# Knative's webhook commands a lab brought up with --webhooks runs for its spokes
# (toolchain/webhooks.sh): every release the tests install, with the tests' tools.
define build_webhooks
	@if ! toolchain/webhooks.sh $(1) 2>&1 >/dev/null | tee -a $(TOOLCHAIN_LOG) \
	    | { grep --line-buffered -E 'webhooks: built' || true; }; then
	  echo "toolchain: Knative's webhooks failed; the end of $(TOOLCHAIN_LOG):" >&2
	  tail -n 40 $(TOOLCHAIN_LOG) >&2
	  exit 1
	fi
endef

# Pulumi's YAML language host (toolchain/yaml-host.sh), for the package's YAML example
# (examples/yaml/, docs/package.md): into the tests' tools, cached on its own.
define build_yaml_host
	@if ! toolchain/yaml-host.sh 2>&1 >/dev/null | tee -a $(TOOLCHAIN_LOG) \
	    | { grep --line-buffered -E 'yaml-host: built' || true; }; then
	  echo "toolchain: the YAML language host failed; the end of $(TOOLCHAIN_LOG):" >&2
	  tail -n 40 $(TOOLCHAIN_LOG) >&2
	  exit 1
	fi
endef

toolchain:
	$(call build_tools,, the lab's tools,.complete)

# The tools only the tests use (the Knative Operator, actionlint, the YAML language host):
# not built for the demo.
test-tools:
	$(call build_tools,--test-tools, the tests' tools,.test-tools-complete)
	$(call build_webhooks,--tests)
	$(call build_yaml_host)

lab-up: venv toolchain
	@$(PY) -m lab up

lab-down: venv
	$(PY) -m lab down

lab-status: venv
	$(PY) -m lab status

lab-dump: venv
	$(PY) -m lab dump

# Progress per spoke on the terminal; every object step in the log file it names.
demo: lab-up $(PULUMI_TOOLS)
	@mkdir -p $(STATE)
	$(PULUMI) stack select demo --create --non-interactive >/dev/null
	$(TOOLS_ENV) $(PY) -m lab.progress .lab/demo-up.log --outputs demo -- pulumi up $(UP_FLAGS) --stack demo

demo-destroy: venv $(PULUMI_TOOLS)
	@$(TOOLS_ENV) $(PY) -m lab.progress .lab/demo-destroy.log -- pulumi destroy --yes --skip-preview --non-interactive --stack demo

# Every `up`: one spoke's failure (an object its Knative webhook refuses, a spoke that
# stops answering) does not stop the other spokes' changes; what depends on the failed
# object is left as it was, and the run fails naming it (README, "Operations").
UP_FLAGS := --yes --skip-preview --non-interactive --continue-on-error

# PR review of a stack's preview: .review/$(STACK)/report.md and report.json (docs/review.md).
STACK ?= demo
review: venv $(PULUMI_TOOLS)
	$(TOOLS_ENV) $(PY) -m review --stack $(STACK)

# Apply exactly what a review showed: the `pulumi up` itself holds its plan to the
# review's report.json (REVIEWED) before it registers anything, and fails with nothing
# changed when they differ (docs/review.md, "The reviewed change lands").
REVIEWED ?= .review/$(STACK)/report.json
apply: venv $(PULUMI_TOOLS)
	KNATIVE_FLEET_REVIEWED="$(abspath $(REVIEWED))" $(TOOLS_ENV) $(PY) -m lab.progress \
	  .lab/apply-$(STACK).log -- pulumi up $(UP_FLAGS) --stack $(STACK)

# The fleet-wide view, from the stacks' outputs: per stack and spoke the ring, resolution,
# versions, ready and last update (docs/runner.md). STACKS is a name pattern.
STACKS ?= *
fleet-status: venv $(PULUMI_TOOLS)
	$(TOOLS_ENV) $(PY) -m runner status --stacks '$(STACKS)'

# Drift check for a scheduled job: exit 1 when an object differs from what the stack
# applied (README, "Drift"); drift-repair applies the stack's own objects again.
drift: venv $(PULUMI_TOOLS)
	$(TOOLS_ENV) $(PY) -m drift --stack $(STACK)

drift-repair: venv $(PULUMI_TOOLS)
	$(TOOLS_ENV) $(PY) -m lab.progress .lab/drift-repair-$(STACK).log -- \
	  pulumi up --refresh $(UP_FLAGS) --stack $(STACK)

lint: venv
	$(VENV)/bin/ruff check .

unit: venv
	$(PY) -m pytest -q tests/unit

# Everything: venv, toolchain and the tests' tools (built or reused), labs up, every test, dump on failure, labs
# down. The suite waits on clusters most of the time, so TEST_WORKERS pytest-xdist workers
# run its modules side by side, each worker with a lab of its own (gw0: .lab/, gwN:
# .lab-gwN/), brought up one after the other before the tests so no two labs share a port,
# with Knative's webhooks and webhook admission on (docs/lab-webhooks.md).
TEST_WORKERS ?= 2
TEST_LABS = .lab $(patsubst %,.lab-gw%,$(wordlist 2,$(TEST_WORKERS),0 1 2 3 4 5 6 7))
test: venv toolchain test-tools lint
	for d in $(TEST_LABS); do $(PY) -m lab --dir $$d up --webhooks; done
	status=0
	$(PY) -m pytest -q -ra --durations=30 -n $(TEST_WORKERS) --dist loadfile tests || status=$$?
	if [ $$status -ne 0 ]; then
	  for d in $(TEST_LABS); do $(PY) -m lab --dir $$d dump --out $$d/dump || true; done
	fi
	for d in $(TEST_LABS); do $(PY) -m lab --dir $$d down || true; done
	exit $$status

# The benchmark, section by section, each on a lab of its own (.lab-bench*/) that it brings
# up and tears down, each writing its part of docs/performance.md and its bench/*results.json
# (docs/performance.md, "The benchmark"). `make bench` runs the fleet section (one spoke against kubectl,
# growth, the program under mocks); SECTIONS="cost levers" (or all) runs those instead.
SECTIONS ?= fleet
bench: venv toolchain
	$(PY) -m bench $(addprefix --section ,$(SECTIONS))

# One section each: what a spoke costs the machine that runs Pulumi (cost), where one
# install's and one no-op preview's time goes (breakdown), engine and provider settings
# against the defaults (levers), the Python SDK's floor against the program's targets (floor),
# one stack of 20 spokes, the most docs/runner.md gives one stack (shard).
bench-cost bench-breakdown bench-levers bench-floor bench-policy bench-shard: venv toolchain
	$(PY) -m bench --section $(@:bench-%=%)
