"""Training (later issues): exporters from canonical trajectories to LlamaFactory sharegpt
and verl parquet, SFT and GRPO launchers with configs, verl reward/tool adapters, and
automatic scoring of every checkpoint through the Inspect tasks."""
