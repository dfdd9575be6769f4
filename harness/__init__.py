"""Inspect glue shared by every benchmark: offline model providers, the multi-turn agent
loop and user simulator (later issues), judges, rewards, metrics and the canonical
`Trajectory` record. May import `envs` and `inspect_ai`, never `tasks` or `training`."""
