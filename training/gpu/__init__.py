"""The GPU path on one GPU (`smoke.py`: vLLM-served scoring and the gpu-smoke GRPO run,
with their figures), run in `.venv-gpu` (`make install-gpu`, training/requirements-gpu.lock)."""
