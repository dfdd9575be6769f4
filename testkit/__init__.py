"""The test kit: the doubles and reference drivers that tests and benchmarks share.

Scripted models (`scripted`), the edited oracle (`oracle`: gold play with one deliberate
change, for negative controls), the recording OpenAI-compatible server
(`recording_server`), the official BFCL pipeline driven by a scripted model
(`bfcl_official`) and waiting on a condition instead of sleeping (`waiting`). They live
here, in one place, so a test never grows a private copy, and outside the product
folders, so no product code can come to depend on a test double: only `tests/` and
`benchmarks/` import `testkit`.
"""
