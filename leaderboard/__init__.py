"""Leaderboard: Inspect logs read into a results table beside the published EnvScaler, AWM
and base-model numbers (`envfactory leaderboard build`: `read` → `table` → `taxonomy` →
`outputs` / `plots` / `site`), and Hub publishing of datasets, models and results
(`hub*`, `cards`)."""
