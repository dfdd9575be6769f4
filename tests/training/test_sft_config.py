"""`envfactory train sft` before LlamaFactory runs: the rendered YAML and the clear errors."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from envfactory.cli import app
from training.sft import PRESETS, SftConfig, _run, render


def test_render_puts_the_preset_under_the_users_overrides(tmp_path: Path) -> None:
    config = SftConfig(preset="paper", data=[tmp_path], output_dir=tmp_path / "out",
                       overrides={"learning_rate": 2e-6, "report_to": "none"})
    lf = render(config, "Qwen/Qwen3-8B", tmp_path / "sft")
    # the released recipe (notes/envfactory.md §10), then the user's keys on top
    assert (lf["finetuning_type"], lf["template"], lf["mask_history"], lf["cutoff_len"]) == (
        "full", "qwen3", True, 16384)
    assert (lf["per_device_train_batch_size"], lf["gradient_accumulation_steps"],
            lf["num_train_epochs"], lf["lr_scheduler_type"], lf["warmup_ratio"]) == (
        1, 32, 1.0, "cosine", 0.1)
    assert Path(lf["deepspeed"]).is_file() and lf["bf16"] is True
    assert (lf["learning_rate"], lf["report_to"]) == (2e-6, "none")
    assert (lf["model_name_or_path"], lf["dataset"], lf["dataset_dir"]) == (
        "Qwen/Qwen3-8B", "envfactory_sft", str(tmp_path / "sft"))
    assert PRESETS["paper"]["learning_rate"] == 1e-6  # the preset itself is untouched


def test_without_llamafactory_the_command_says_how_to_get_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENVFACTORY_LLAMAFACTORY_CLI", str(tmp_path / "no-such-cli"))
    config = tmp_path / "sft.yaml"
    config.write_text(yaml.safe_dump({"data": ["data.jsonl"], "output_dir": "out"}))
    result = CliRunner().invoke(app, ["train", "sft", str(config)])
    assert result.exit_code == 1
    assert "make install-train" in " ".join(result.output.split())
    assert not (tmp_path / "out").exists()  # nothing was started


def test_a_bad_config_names_the_file_and_field(tmp_path: Path) -> None:
    config = tmp_path / "sft.yaml"
    config.write_text(yaml.safe_dump({"preset": "huge", "data": ["d.jsonl"],
                                      "output_dir": "out"}))
    result = CliRunner().invoke(app, ["train", "sft", str(config)])
    out = " ".join(result.output.split())
    assert result.exit_code == 1 and "sft.yaml" in out and "preset" in out


FAKE_TRAINER = """\
import json, pathlib, sys, time
out = pathlib.Path(sys.argv[1])
with (out / "trainer_log.jsonl").open("w") as f:
    for step in (1, 2):
        f.write(json.dumps({"current_steps": step, "total_steps": 2, "loss": 1.0 / step}) + "\\n")
deadline = time.monotonic() + 120
while not (out / "seen").exists() and time.monotonic() < deadline:  # until reported
    time.sleep(0.1)
"""


def test_the_run_reports_trainer_steps_through_on_progress(tmp_path: Path) -> None:
    """LlamaFactory's trainer_log.jsonl, followed while the command runs, reaches
    `on_progress(what, step, total)`; the fake trainer exits once the last step was seen."""
    script = tmp_path / "trainer.py"
    script.write_text(FAKE_TRAINER, encoding="utf-8")
    calls: list[tuple[str, int, int | None]] = []

    def on_progress(stage: str, done: int, total: int | None) -> None:
        calls.append((stage, done, total))
        if done == total:
            (tmp_path / "seen").touch()

    rows = _run([sys.executable, str(script), str(tmp_path)], tmp_path / "train.log",
                tmp_path, on_progress, "SFT")
    assert calls[-1] == ("SFT", 2, 2) and {(stage, total) for stage, _, total in calls} == {
        ("SFT", 2)}
    assert [r["current_steps"] for r in rows] == [1, 2]
