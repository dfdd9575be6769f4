"""Inspect task folders, one per benchmark (`inspect eval tasks/<bench>`); shared
benchmark-specific code sits in underscore folders (`tasks/_bfcl`) that Inspect's task
discovery skips."""
