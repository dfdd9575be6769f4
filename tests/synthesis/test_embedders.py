"""Embedders: spec parsing, the OpenAI-compatible endpoint against a local server, the
vector cache, and the real offline MiniLM model."""

from __future__ import annotations

import importlib.util
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from synthesis.embedders import (
    BGE_M3_THRESHOLD,
    MINILM_THRESHOLD,
    BgeM3Embedder,
    Embedder,
    MiniLMEmbedder,
    OpenAIEmbedder,
    get_embedder,
)

# fixed vectors the fake endpoint returns, by input text
VECTORS = {"alpha": [3.0, 4.0, 0.0], "beta": [0.0, 0.0, 2.0], "gamma": [1.0, 1.0, 0.0]}


@pytest.fixture
def endpoint() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    requests: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            requests.append({"path": self.path, "body": body,
                             "auth": self.headers.get("Authorization")})
            # answer in reverse order: the client must sort by index
            data = [{"object": "embedding", "index": i, "embedding": VECTORS[t]}
                    for i, t in enumerate(body["input"])][::-1]
            out = json.dumps({"object": "list", "data": data, "model": body["model"]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", requests
    finally:
        server.shutdown()
        server.server_close()


def test_spec_parsing(tmp_path: Path) -> None:
    e = get_embedder("openai:http://h:1/v1#bge-m3", cache_dir=tmp_path)
    assert isinstance(e, OpenAIEmbedder) and isinstance(e, Embedder)
    assert (e.base_url, e.model, e.threshold) == ("http://h:1/v1", "bge-m3", BGE_M3_THRESHOLD)
    m = get_embedder("minilm", threshold=0.5, cache_dir=None)
    assert isinstance(m, MiniLMEmbedder) and m.threshold == 0.5
    assert get_embedder("minilm", cache_dir=None).threshold == MINILM_THRESHOLD
    b = get_embedder("bge-m3:/models/bge", cache_dir=None)
    assert isinstance(b, BgeM3Embedder) and b.model == "/models/bge" and b.threshold == 0.85
    for bad in ("word2vec", "openai:http://h/v1", "minilm:x"):
        with pytest.raises(ValueError):
            get_embedder(bad)


def test_endpoint_vectors_order_normalisation_and_cache(
        endpoint: tuple[str, list[dict[str, Any]]], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    url, requests = endpoint
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    e = OpenAIEmbedder(url, "fake-model", cache_dir=tmp_path, batch_size=2)
    v = e.embed(["alpha", "beta", "gamma"])
    assert v.dtype == np.float32 and v.shape == (3, 3)
    # alpha (3,4,0)/5, beta (0,0,1), gamma (1,1,0)/sqrt 2
    np.testing.assert_allclose(v[0], [0.6, 0.8, 0.0], atol=1e-6)
    np.testing.assert_allclose(v[1], [0.0, 0.0, 1.0], atol=1e-6)
    np.testing.assert_allclose(v[2], [2 ** -0.5, 2 ** -0.5, 0.0], atol=1e-6)
    assert [r["body"]["input"] for r in requests] == [["alpha", "beta"], ["gamma"]]
    assert requests[0]["path"] == "/v1/embeddings" and requests[0]["auth"] == "Bearer sk-test"
    assert requests[0]["body"]["model"] == "fake-model"

    # a second embedder on the same cache asks only for the unseen text
    again = OpenAIEmbedder(url, "fake-model", cache_dir=tmp_path)
    w = again.embed(["gamma", "alpha", "gamma"])
    assert len(requests) == 2
    np.testing.assert_allclose(w[1], [0.6, 0.8, 0.0], atol=1e-6)
    assert OpenAIEmbedder(url, "other", cache_dir=tmp_path).embed(["beta"]).shape == (1, 3)
    assert len(requests) == 3 and requests[2]["body"]["input"] == ["beta"]  # keyed by model


@pytest.mark.skipif(importlib.util.find_spec("FlagEmbedding") is not None,
                    reason="FlagEmbedding installed: the missing-extra message cannot show")
def test_bge_m3_without_the_extra_says_how_to_install() -> None:
    with pytest.raises(RuntimeError, match=r"envfactory\[embed\]"):
        BgeM3Embedder("/nowhere", cache_dir=None).embed(["x"])


@pytest.mark.slow
def test_minilm_real_model_offline() -> None:
    e = MiniLMEmbedder(cache_dir=None)
    v = e.embed(["order_id (string): identifier of the created order",
                 "order_id (string): the order to ship",
                 "temperature (number): air temperature in Celsius"])
    assert v.shape == (3, 384) and v.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert v[0] @ v[1] > e.threshold > v[0] @ v[2]
