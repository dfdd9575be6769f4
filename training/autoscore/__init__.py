"""Every checkpoint auto-scored: `envfactory score run CHECKPOINT` / `score watch RUN_DIR`.

A checkpoint directory is scored by running the benchmark tasks **by path** with `inspect
eval-set` in a subprocess (training never imports `tasks/`; DESIGN.md), one eval-set per
task, all into one results directory per run and checkpoint:

    <log-dir>/<run_id>/<checkpoint dir name>/<limit-N | all>/

`inspect eval-set` pairs each task with the finished logs already in that folder, so a
rerun (after a crash, or by `score watch`) resumes and skips finished work. The last
level keeps runs with different `--limit`s apart: eval-set does not count the limit as
part of a task's identity, so a 5-sample log would otherwise pass for a full run.

The checkpoint's provenance (`training/provenance.py`) goes into every log's eval metadata
(`envfactory_run_id`, `envfactory_method`, `envfactory_base_model`, `envfactory_step`,
`envfactory_config_sha256`, `envfactory_data`, `envfactory_created`,
`envfactory_checkpoint`), so the leaderboard can group the checkpoints of one run.

A Hub model id (`OWNER/NAME[@REV]`) is downloaded at the commit its revision names into the
Hub cache (`hub_models`) and scored as its snapshot folder, the id and commit in every log
(`envfactory_hub_id`, `envfactory_hub_revision`, `envfactory_hub_requested`; results in
`<log-dir>/hub/<Owner>--<Name>/<commit>/`). The `paper` suite requires the `user` and
`judge` models (`SUITE_ROLES`), records them (`envfactory_suite`, `envfactory_user_model`,
`envfactory_judge_model`, and Inspect's `model_roles`), and keeps its logs in
`paper-limit-N | paper-all`; tasks a preflight finds unable to run are listed as skipped.

Models: `--serve hf` runs the directory in-process through Inspect's `hf/local` provider;
`--serve URL` uses an OpenAI-compatible server that is already up; `--serve vllm` starts
`vllm serve DIR` (GPU machines), runs the suite against it as for a URL, and stops it;
`--serve inspect` runs an Inspect model name as is (`envfactory/oracle`, an API model).

One scoring per results folder at a time (a lock file in it; a second fails at once naming
the holder's pid, or waits with `--wait`), and every process a scoring starts (eval-set,
vLLM, a `score watch` beside training) dies with it, `kill -9` included. Each task's
samples done / total are reported as they finish (`on_progress`), read from the log
eval-set is writing.

The package, one module per concern: `suites` (what is run), `checkpoints` (discovery,
labels, provenance), `inspect_argv` (the eval-set command line), `serving` (hf / URL /
vLLM targets), `hub_models` (Hub ids), `processes` (children that die with their parent,
the folder lock; `lifeline` where the kernel cannot do it), `log_progress` (samples done,
from a running log), `scoring` (one model) and `watching` (a training run); the `score`
commands are `envfactory/cli/score.py`. The names other modules use are re-exported here.
"""

from training.autoscore.checkpoints import (
    HUB_RUN_ID,
    VERL_HF_DIR,
    CheckpointInfo,
    NotAModelDir,
    checkpoint_complete,
    checkpoint_label,
    find_checkpoints,
    hub_provenance,
    inspect_checkpoint,
    leaf_name,
    provenance_metadata,
    resolve_provenance,
    results_dir,
)
from training.autoscore.hub_models import HubCheckpoint, download_checkpoint, parse_hub_spec
from training.autoscore.inspect_argv import (
    URL_API_KEY_VAR,
    ModelTarget,
    checkpoint_hf_target,
    eval_set_argv,
    hf_target,
    inspect_command,
    url_target,
)
from training.autoscore.log_progress import OnProgress, task_progress
from training.autoscore.processes import (
    LOCK_FILE,
    FolderBusy,
    FolderLock,
    spawn,
    stop_process_group,
)
from training.autoscore.scoring import (
    SKIPPED_FILE,
    Preflight,
    ScoreResult,
    TaskCheck,
    TaskScore,
    require_roles,
    score_checkpoint,
    score_model,
)
from training.autoscore.serving import (
    needs_merge,
    peft_available,
    pick_model_name,
    served_models,
    vllm_command,
    vllm_server,
)
from training.autoscore.suites import (
    DEFAULT_LIMITS,
    REPO_ROOT,
    SUITE_ROLES,
    SUITES,
    ScoreError,
    Suite,
    SuiteTask,
)
from training.autoscore.watching import (
    MAX_ATTEMPTS,
    SCORED_FILE,
    ScoredEntry,
    ScoredState,
    scoring_beside,
    watch,
    watch_command,
)

__all__ = [
    "DEFAULT_LIMITS", "HUB_RUN_ID", "LOCK_FILE", "MAX_ATTEMPTS", "REPO_ROOT", "SCORED_FILE",
    "SKIPPED_FILE", "SUITES", "SUITE_ROLES", "URL_API_KEY_VAR", "VERL_HF_DIR",
    "CheckpointInfo", "FolderBusy", "FolderLock", "HubCheckpoint", "ModelTarget",
    "Preflight", "NotAModelDir", "OnProgress", "ScoreError", "ScoreResult", "ScoredEntry",
    "ScoredState", "Suite", "SuiteTask", "TaskCheck", "TaskScore", "checkpoint_complete",
    "checkpoint_hf_target", "checkpoint_label", "download_checkpoint", "eval_set_argv",
    "find_checkpoints", "hf_target", "hub_provenance", "inspect_checkpoint", "inspect_command",
    "leaf_name", "needs_merge", "parse_hub_spec", "peft_available", "pick_model_name",
    "provenance_metadata", "require_roles", "resolve_provenance", "results_dir",
    "score_checkpoint", "score_model", "served_models", "scoring_beside", "spawn",
    "stop_process_group", "task_progress", "url_target", "vllm_command", "vllm_server",
    "watch", "watch_command",
]
