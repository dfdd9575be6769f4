"""EnvGen and QueryGen (later issues): environment synthesis with search, code and test
agents, sandboxed validation and revision; the tool-dependency graph, topology-aware
call-chain sampling, query synthesis and refinement, k-candidate rollouts and filters
that turn our environments into natural multi-turn trajectories."""
