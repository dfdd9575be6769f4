"""A checkpoint named by its Hub model id (`OWNER/NAME[@REV]`): the revision resolved to
its commit, the files of that commit downloaded into the Hub cache (`envs.releases.
hub_snapshot`, the one Hub reader: retried, cached, offline from the cache), and the local
snapshot folder scored as any model directory is.

A branch (`main`, the default) moves with every push, so it is resolved to a commit first and
that commit is what is downloaded and recorded (`training.provenance`: `hub_revision`); a
log then says which weights produced it. Offline (`HF_HUB_OFFLINE=1`) a branch resolves from
the cache's own record of it, as `huggingface_hub` keeps one.
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel

from envs.releases import hub_snapshot
from training.autoscore.suites import ScoreError

__all__ = ["HubCheckpoint", "download_checkpoint", "parse_hub_spec"]

_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")
_COMMIT = re.compile(r"^[0-9a-f]{40}$")
_MODEL_FILES = ("*.json", "*.safetensors", "*.bin", "*.model", "*.txt", "*.jinja", "*.py",
                "*.tiktoken")
"""What a transformers / vLLM model directory reads (no README images, no GGUF exports)."""


class HubCheckpoint(BaseModel):
    """A Hub model at one commit, downloaded."""

    hub_id: str
    requested: str
    """The revision asked for (`main` when none was given)."""
    commit: str
    folder: Path
    """The Hub cache's snapshot folder of `commit` (`.../snapshots/<commit>`)."""


def parse_hub_spec(spec: str) -> tuple[str, str] | None:
    """`OWNER/NAME[@REV]` as (id, revision; `main` when none), or None when `spec` is not a
    Hub model id."""
    hub_id, _, revision = spec.partition("@")
    if not _HUB_ID.fullmatch(hub_id) or (_ and not revision):
        return None
    return hub_id, revision or "main"


def _resolve(hub_id: str, revision: str) -> str:
    """The commit `revision` names now: a commit names itself; a branch or tag is looked up
    on the Hub, or offline in the cache's refs."""
    if _COMMIT.fullmatch(revision):
        return revision
    from huggingface_hub import HfApi, constants

    if constants.HF_HUB_OFFLINE:
        ref = Path(constants.HF_HUB_CACHE) / f"models--{hub_id.replace('/', '--')}" / "refs"
        try:
            return (ref / revision).read_text(encoding="utf-8").strip()
        except OSError:
            raise ScoreError(f"{hub_id}@{revision}: HF_HUB_OFFLINE is set and the Hub cache "
                             f"has no record of {revision!r}; download it once online, or "
                             "give the commit (@<40 hex digits>)") from None
    return str(HfApi().model_info(hub_id, revision=revision).sha)


def download_checkpoint(hub_id: str, revision: str = "main") -> HubCheckpoint:
    """`hub_id` at `revision`, downloaded (or found in the cache). Raises `ScoreError`
    naming the id and revision for a repository, revision or file the Hub does not have,
    and for a download that fails."""
    from huggingface_hub.errors import (
        GatedRepoError,
        HfHubHTTPError,
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    try:
        commit = _resolve(hub_id, revision)
        folder, commit = hub_snapshot(hub_id, commit, option=f"{hub_id}@<commit>",
                                      repo_type="model", allow_patterns=_MODEL_FILES)
    except GatedRepoError:
        raise ScoreError(f"{hub_id}: a gated repository; accept its terms on the Hub and set "
                         "HF_TOKEN") from None
    except RepositoryNotFoundError:
        raise ScoreError(f"{hub_id}: no such model on the Hub (or it is private: set "
                         "HF_TOKEN)") from None
    except RevisionNotFoundError:
        raise ScoreError(f"{hub_id}@{revision}: the Hub has no such revision") from None
    except LocalEntryNotFoundError as e:
        raise ScoreError(f"{hub_id}@{revision}: not in the Hub cache and the Hub cannot be "
                         f"reached ({e})") from None
    except (HfHubHTTPError, OSError) as e:
        raise ScoreError(f"{hub_id}@{revision}: download failed: {e}") from None
    if not (folder / "config.json").is_file() and not (folder / "adapter_config.json"
                                                       ).is_file():
        raise ScoreError(f"{hub_id}@{commit}: not a transformers model (no config.json or "
                         "adapter_config.json in the repository)")
    return HubCheckpoint(hub_id=hub_id, requested=revision, commit=commit, folder=folder)
