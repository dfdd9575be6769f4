"""Leaderboard (later issues): Inspect logs read into a results table beside the published
EnvScaler, AWM and base-model numbers; Markdown/HTML pages and plots; Hub publishing of
datasets, models and results."""
