"""What a new machine's install does and what `doctor` tells about it.

The Makefile's logic is read with `make -n` (nothing runs): the torch line names
PyTorch's CPU index on Linux (so a laptop does not pull CUDA wheels), `install` is a stamp
in the environment's prefix that `demo-bfcl` and `install-mcp-atlas` reuse and that a
changed pyproject.toml rebuilds; `doctor` points at `.venv-train` for the train stack.
"""

from __future__ import annotations

import importlib
import os
import platform
import shutil
import subprocess
from pathlib import Path

import pytest

# the module, not the `doctor` command function that envfactory.cli re-exports by that name
doctor = importlib.import_module("envfactory.cli.doctor")
ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def _fake_python(tmp_path: Path) -> Path:
    """A `python` whose sys.prefix is a folder of the test's (where the stamp goes)."""
    prefix = tmp_path / "prefix"
    prefix.mkdir()
    script = tmp_path / "python"
    script.write_text(f"#!/bin/sh\necho {prefix}\n")
    script.chmod(0o755)
    return script


def _dry_run(target: str, python: Path, *extra: str) -> list[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAKE")}
    done = subprocess.run(["make", "-n", "-C", str(ROOT), "--no-print-directory", target,
                           f"PYTHON={python}", *extra], capture_output=True, text=True,
                          env=env, check=True)
    return done.stdout.splitlines()


def test_the_torch_line_names_the_cpu_index_on_linux(tmp_path: Path) -> None:
    python = _fake_python(tmp_path)
    torch = [line for line in _dry_run("install", python) if "torch==" in line]
    expected = (" --extra-index-url https://download.pytorch.org/whl/cpu"
                if platform.system() == "Linux" else "")
    # torch alone from the index, then its dependencies from PyPI
    assert [line.rstrip() for line in torch] == [
        f"{python} -m pip install --no-deps torch==2.13.0{expected}",
        f"{python} -m pip install torch==2.13.0"]
    plain = [line for line in _dry_run("install", python, "TORCH_INDEX=") if "torch==" in line]
    assert [line.rstrip() for line in plain] == [f"{python} -m pip install --no-deps torch==2.13.0",
                                                 f"{python} -m pip install torch==2.13.0"]


def test_install_runs_once_per_environment_until_pyproject_changes(tmp_path: Path) -> None:
    python = _fake_python(tmp_path)
    stamp = tmp_path / "prefix" / ".envfactory-installed"
    first = _dry_run("demo-bfcl", python)
    assert any("pip install -e" in line for line in first)
    assert f"touch {stamp}" in first
    stamp.touch()  # newer than pyproject.toml and the Makefile: installed
    for target in ("demo-bfcl", "install-mcp-atlas"):
        assert not any("pip install" in line for line in _dry_run(target, python)), target
    os.utime(stamp, (0, 0))  # older than pyproject.toml: a change to reinstall
    assert any("pip install -e" in line for line in _dry_run("demo-bfcl", python))


def test_doctor_points_at_the_train_venv_not_an_extra(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(doctor, "_TRAIN_VENV", tmp_path / ".venv-train")
    for module in ("llamafactory", "verl"):
        assert "`make install-train` builds .venv-train" in doctor._absent(module)
        assert "train extra" not in doctor._OPTIONAL[module]
    (tmp_path / ".venv-train").mkdir()
    (tmp_path / ".venv-train" / ".installed").touch()
    assert f"in {tmp_path / '.venv-train'}" in doctor._absent("verl")
    assert doctor._absent("FlagEmbedding") == "[dim]not installed[/dim]"
