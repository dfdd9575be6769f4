"""Code of the held-out EnvFactory task (`tasks/envfactory/`), kept out of Inspect's task
discovery: `dataset` (samples from the built task files), `orchestrator` (the episode's
rules: scripted user turns, per-turn step limit) and `scoring` (the composite reward).
"""
