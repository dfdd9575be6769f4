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

Models: `--serve hf` runs the directory in-process through Inspect's `hf/local` provider;
`--serve URL` uses an OpenAI-compatible server that is already up; `--serve vllm` starts
`vllm serve DIR` (GPU machines), runs the suite against it as for a URL, and stops it.

One scoring per results folder at a time (a lock file in it; a second fails at once naming
the holder's pid, or waits with `--wait`), and every process a scoring starts (eval-set,
vLLM, a `score watch` beside training) dies with it, `kill -9` included. Each task's
samples done / total are reported as they finish (`on_progress`), read from the log
eval-set is writing.

The package, one module per concern: `suites` (what is run), `checkpoints` (discovery,
labels, provenance), `inspect_argv` (the eval-set command line), `serving` (hf / URL /
vLLM targets), `processes` (children that die with their parent, the folder lock;
`lifeline` where the kernel cannot do it), `log_progress` (samples done, from a running
log), `scoring` (one checkpoint) and `watching` (a training run); the `score` commands
are `envfactory/cli/score.py`. The names other modules use are re-exported here.
"""

from training.autoscore.checkpoints import (
    VERL_HF_DIR,
    CheckpointInfo,
    NotAModelDir,
    checkpoint_complete,
    checkpoint_label,
    find_checkpoints,
    inspect_checkpoint,
    provenance_metadata,
    resolve_provenance,
    results_dir,
)
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
from training.autoscore.scoring import ScoreResult, TaskScore, score_checkpoint
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
    "DEFAULT_LIMITS", "LOCK_FILE", "MAX_ATTEMPTS", "REPO_ROOT", "SCORED_FILE", "SUITES",
    "URL_API_KEY_VAR", "VERL_HF_DIR", "CheckpointInfo", "FolderBusy", "FolderLock",
    "ModelTarget", "NotAModelDir", "OnProgress", "ScoreError", "ScoreResult", "ScoredEntry",
    "ScoredState", "Suite", "SuiteTask", "TaskScore", "checkpoint_complete",
    "checkpoint_hf_target", "checkpoint_label", "eval_set_argv", "find_checkpoints",
    "hf_target", "inspect_checkpoint", "inspect_command", "needs_merge", "peft_available",
    "pick_model_name", "provenance_metadata", "resolve_provenance", "results_dir",
    "score_checkpoint", "served_models", "scoring_beside", "spawn", "stop_process_group",
    "task_progress", "url_target", "vllm_command", "vllm_server", "watch", "watch_command",
]
