"""verl adapters for GRPO on our environments (upstream verl, no fork).

- `session.py`: one `World` per rollout trajectory, restored from the row's start state and
  recorded into the trajectory's `extra_fields` after every call (verl-free, so the cost of
  the environment inside a rollout can be measured and tested anywhere);
- `tools.py`: a verl `BaseTool` per environment tool over that session, and the tools YAML;
- `reward.py`: `compute_score`, which is `harness.rewards.composite_reward`;
- `configs/`: Hydra overrides for the released recipe and a single-GPU smoke run.
"""
