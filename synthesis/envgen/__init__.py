"""EnvGen: environments proposed, written and verified by agents (search, code and test
agents; sandboxed validation; revision loop; registration of passing environments)."""
