"""τ²-bench domains (airline, retail, telecom) as environments: our own code, faithful to
the semantics of the pinned release (v0.2.0), with data loaded from the release files."""
