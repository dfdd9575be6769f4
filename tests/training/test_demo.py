"""`envfactory demo` reuses a tuned model only when it came from exactly the demo's config."""

from __future__ import annotations

from pathlib import Path

from training.demo import _cached, demo_config
from training.provenance import CheckpointProvenance, write_provenance


def test_the_merged_model_is_reused_only_for_the_same_config(tmp_path: Path) -> None:
    config = demo_config(tmp_path)
    assert config.preset == "smollm2-lora" and config.merge and config.tools == "used"
    assert _cached(config) is None  # nothing trained yet
    merged = config.output_dir / "merged"
    merged.mkdir(parents=True)
    (config.output_dir / "envfactory_sft.json").write_text(config.model_dump_json())
    assert _cached(config) is None  # no provenance: the merge never finished
    write_provenance(merged, CheckpointProvenance(run_id="demo", method="sft",
                                                  base_model="smollm2", step=30))
    assert _cached(config) == merged
    changed = config.model_copy(update={"overrides": {"max_steps": 60}})
    assert _cached(changed) is None
