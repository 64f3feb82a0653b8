"""Remote embedding providers against a loopback HTTP server written here,
which speaks the OpenAI `/v1/embeddings` wire format (Voyage's is the same
shape plus `input_type`) and returns deterministic vectors (16 numbers from
a hash of the text). Checked: what the builder and the server send (key,
batch size, model, input_type), retries on 429/5xx, coded errors that leave
no snapshot behind, and that the stored vectors are the provider's."""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import os
import shutil
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from helpers import Snapshot, chunk_inputs, diff_trees, read_faiss_flat, run_cli, sha256_file

DIM = 16
N_FILES = 80  # > 64: the build needs more than one batch
PROVIDER_VARS = ("VOYAGE_API_KEY", "VOYAGE_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "OLLAMA_HOST")


def fake_vector(text: str) -> list[float]:
    d = hashlib.sha256(text.encode()).digest()
    return [b - 127.5 for b in d[:DIM]]


def unit(v: list[float]) -> list[float]:
    n = math.sqrt(sum(x * x for x in v))
    return [x / n for x in v]


class FakeEmbeddings:
    """A loopback /v1/embeddings endpoint that logs every request.
    `script` holds answers (status, headers, body) given before normal ones."""

    def __init__(self):
        self.requests: list[dict] = []
        self.script: list[tuple[int, dict, bytes]] = []
        self.lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                with fake.lock:
                    fake.requests.append({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body})
                    scripted = fake.script.pop(0) if fake.script else None
                if scripted:
                    status, headers, payload = scripted
                elif self.path != "/v1/embeddings" or not isinstance(body, dict):
                    status, headers, payload = 404, {}, b'{"error": "not found"}'
                else:
                    inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
                    data = [{"object": "embedding", "embedding": fake_vector(t), "index": i} for i, t in enumerate(inputs)]
                    # Answer out of order: the client must use `index`.
                    data.reverse()
                    status, headers = 200, {"Content-Type": "application/json"}
                    payload = json.dumps({"object": "list", "data": data, "model": body.get("model"),
                                          "usage": {"prompt_tokens": 1, "total_tokens": 1}}).encode()
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def embedding_requests(self) -> list[dict]:
        with self.lock:
            return [r for r in self.requests if r["path"] == "/v1/embeddings"]

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def fake():
    f = FakeEmbeddings()
    yield f
    f.close()


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    """N_FILES small, distinct Python files: one chunk each, no patterns."""
    root = tmp_path_factory.mktemp("providers") / "remote"
    root.mkdir()
    words = ["add", "scale", "shift", "clamp", "mirror", "invert", "square", "halve"]
    for i in range(N_FILES):
        w = words[i % len(words)]
        (root / f"mod_{i:02d}.py").write_text(
            f'def {w}_{i}(x):\n    """{w.capitalize()} a number (variant {i})."""\n    return x * {i + 1} + {i % 7}\n')
    return root


def clean_env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in PROVIDER_VARS and "proxy" not in k.lower()}
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    env.update(extra)
    return env


def index(indexer, repo: Path, out: Path, *extra, env: dict, check: bool = True):
    r = run_cli(indexer, "index", repo, "--out", out, "--json", *extra, env=env, check=check, timeout=600)
    if not check:
        return r
    info = r.json()
    d = Path(info["snapshot_dir"])
    d = d if d.is_absolute() else Path.cwd() / d
    return Snapshot(dir=d, out=out, repo=repo, info=info, seconds=r.seconds)


def chunk_ids(snap: Snapshot) -> list[int]:
    return snap.read("chunks", ["chunk_id"]).column("chunk_id").to_pylist()


def check_vectors_are_the_providers(snap: Snapshot, requests: list[dict]):
    """vectors.faiss holds, for every chunk, the provider's vector of each of
    that chunk's inputs (normalized), whatever order the provider answered in."""
    sent = [t for r in requests for t in r["body"]["input"]]
    inputs = chunk_inputs(snap)
    expected = [(cid, t) for cid in chunk_ids(snap) for t in inputs[cid]]
    assert {t for _, t in expected} == set(sent)
    dim, metric, ids, vecs = read_faiss_flat(snap.dir / "vectors.faiss")
    assert (dim, metric) == (DIM, 0)
    assert ids == [cid for cid, _ in expected]
    for (cid, text), v in zip(expected, vecs):
        e = unit(fake_vector(text))
        assert max(abs(a - b) for a, b in zip(v, e)) < 1e-5, (cid, text[:80])
    listed = {f["name"]: f for f in snap.manifest["files"]}
    assert listed["vectors.faiss"]["sha256"] == sha256_file(snap.dir / "vectors.faiss")


def session_run(server_bin: Path, index_dir: Path, body, env: dict):
    async def main():
        params = StdioServerParameters(command=str(server_bin), args=["serve", "--index", str(index_dir)], env=env)
        async with stdio_client(params) as (r, w):
            async with ClientSession(r, w) as s:
                await s.initialize()
                return await body(s)

    return asyncio.run(main())


# --------------------------------------------------------------------------


def test_openai_compatible_endpoint(indexer, tree, fake, tmp_path):
    env = clean_env(OPENAI_BASE_URL=f"{fake.base}/v1", OPENAI_API_KEY="k")
    snap = index(indexer, tree, tmp_path / "out", "--model", "openai:fake-embed", "--embedding-cache", tmp_path / "cache", env=env)
    reqs = fake.embedding_requests()
    assert reqs and len(reqs) == len(fake.requests), [r["path"] for r in fake.requests]
    assert len(chunk_ids(snap)) == N_FILES
    n = sum(len(v) for v in chunk_inputs(snap).values())
    # Each file: its function's signature input. The file's chunk, which that
    # function opens, has none of its own (input recipe v6).
    assert n == N_FILES
    sizes = [len(r["body"]["input"]) for r in reqs]
    assert max(sizes) <= 64 and sum(sizes) == n and len(reqs) == math.ceil(n / 64), sizes
    for r in reqs:
        assert r["headers"].get("authorization") == "Bearer k"
        assert r["body"]["model"] == "fake-embed"
        assert "input_type" not in r["body"]
    e = snap.manifest["embeddings"]
    assert e["model"] == "openai:fake-embed" and e["dimension"] == DIM and e["count"] == n
    assert e["metric"] == "inner_product" and e["normalized"] is True
    assert snap.info["embeddings"]["embedded"] == n
    check_vectors_are_the_providers(snap, reqs)
    # A second build with the same cache asks the provider nothing.
    before = len(fake.requests)
    again = index(indexer, tree, tmp_path / "out2", "--model", "openai:fake-embed", "--embedding-cache", tmp_path / "cache", env=env)
    assert len(fake.requests) == before
    assert again.info["embeddings"]["from_cache"] == n and again.info["embeddings"]["embedded"] == 0
    assert (again.dir / "vectors.faiss").read_bytes() == (snap.dir / "vectors.faiss").read_bytes()


def test_rate_limits_and_outages_are_retried(indexer, tree, fake, tmp_path):
    fake.script = [
        (429, {"Retry-After": "0", "Content-Type": "application/json"}, b'{"error": {"message": "rate limited"}}'),
        (503, {}, b"upstream unavailable"),
    ]
    env = clean_env(OPENAI_BASE_URL=f"{fake.base}/v1", OPENAI_API_KEY="k")
    snap = index(indexer, tree, tmp_path / "out", "--model", "openai:fake-embed", "--embedding-cache", tmp_path / "cache", env=env)
    reqs = fake.embedding_requests()
    batches = math.ceil(N_FILES / 64)
    assert len(reqs) == batches + 2, [len(r["body"]["input"]) for r in reqs]
    # The first batch was sent three times, identically (429, 503, then success).
    assert reqs[0]["body"] == reqs[1]["body"] == reqs[2]["body"]
    assert snap.manifest["embeddings"]["count"] == N_FILES
    check_vectors_are_the_providers(snap, reqs)


def test_an_endpoint_that_stays_down_is_a_coded_error(indexer, tree, fake, tmp_path):
    fake.script = [(503, {"Retry-After": "0"}, b"down")] * 10
    env = clean_env(OPENAI_BASE_URL=f"{fake.base}/v1", OPENAI_API_KEY="k")
    out = tmp_path / "out"
    r = index(indexer, tree, out, "--model", "openai:fake-embed", "--embedding-cache", tmp_path / "cache", env=env, check=False)
    assert r.returncode == 2, r.describe()
    assert "error[EMBED_UNAVAILABLE]" in r.stderr and "hint:" in r.stderr, r.stderr
    assert len(fake.embedding_requests()) == 5  # the attempts, then it gives up
    assert not list(out.rglob("manifest.json")) and not list(out.rglob("latest"))


def test_voyage_documents_then_queries(indexer, tree, fake, tmp_path):
    server_bin = indexer.parent / "code-index-mcp"
    env = clean_env(VOYAGE_BASE_URL=f"{fake.base}/v1", VOYAGE_API_KEY="vk")
    snap = index(indexer, tree, tmp_path / "out", "--model", "voyage:voyage-code-3", "--embedding-cache", tmp_path / "cache", env=env)
    build_reqs = fake.embedding_requests()
    assert build_reqs
    for r in build_reqs:
        assert r["body"]["input_type"] == "document"
        assert r["body"]["model"] == "voyage-code-3"
        assert r["headers"].get("authorization") == "Bearer vk"
        assert len(r["body"]["input"]) <= 64
    assert snap.manifest["embeddings"]["model"] == "voyage:voyage-code-3"
    assert snap.manifest["embeddings"]["dimension"] == DIM
    check_vectors_are_the_providers(snap, build_reqs)

    query = "add two numbers"

    async def body(s):
        res = await s.call_tool("search_code", {"query": query, "mode": "semantic", "limit": 5})
        return res.is_error, res.structured_content

    err, sc = session_run(server_bin, snap.dir, body, env)
    assert not err, sc
    assert sc["semantic"] is True and sc["mode"] == "semantic", sc.get("notice")
    q_reqs = fake.embedding_requests()[len(build_reqs):]
    assert len(q_reqs) == 1, q_reqs
    assert q_reqs[0]["body"]["input_type"] == "query" and q_reqs[0]["body"]["input"] == [query]
    assert q_reqs[0]["headers"].get("authorization") == "Bearer vk"
    # The ranking is the provider's: the best chunk is the one whose vector is nearest the query's.
    qv = unit(fake_vector(query))
    inputs = [t for r in build_reqs for t in r["body"]["input"]]
    best = max(inputs, key=lambda t: sum(a * b for a, b in zip(qv, unit(fake_vector(t)))))
    by_input = {text: cid for cid, texts in chunk_inputs(snap).items() for text in texts}
    path_of = {r["chunk_id"]: r["path"] for r in snap.read("chunks", ["chunk_id", "path"]).to_pylist()}
    best_path = path_of[by_input[best]]
    assert sc["results"][0]["path"] == best_path, (best.splitlines()[0], sc["results"][0])

    # Without the key the server still answers, keyword only, and says why.
    err, sc = session_run(server_bin, snap.dir, body, clean_env(VOYAGE_BASE_URL=f"{fake.base}/v1"))
    assert not err
    assert sc["semantic"] is False and sc["mode"] == "keyword"
    assert "EMBED_KEY_MISSING" in (sc.get("notice") or ""), sc.get("notice")


def test_missing_voyage_key_fails_before_any_work(indexer, tree, fake, tmp_path):
    env = clean_env(VOYAGE_BASE_URL=f"{fake.base}/v1")
    out = tmp_path / "fresh"
    r = index(indexer, tree, out, "--model", "voyage:voyage-code-3", "--embedding-cache", tmp_path / "cache", env=env, check=False)
    assert r.returncode == 2, r.describe()
    assert "error[EMBED_KEY_MISSING]" in r.stderr and "hint:" in r.stderr and "VOYAGE_API_KEY" in r.stderr, r.stderr
    assert not out.exists() or not any(out.rglob("*")), sorted(out.rglob("*"))
    assert fake.requests == []
    # With an earlier snapshot in --out, it is left exactly as it was.
    out2 = tmp_path / "out2"
    earlier = index(indexer, tree, out2, "--no-embeddings", env=env)
    saved = tmp_path / "saved"
    shutil.copytree(out2, saved)
    r = index(indexer, tree, out2, "--model", "voyage:voyage-code-3", "--embedding-cache", tmp_path / "cache", env=env, check=False)
    assert r.returncode == 2 and "EMBED_KEY_MISSING" in r.stderr
    assert diff_trees(saved, out2) == []
    assert (out2 / "remote" / "latest").read_text().strip() == earlier.id


def test_refused_key_is_embed_auth(indexer, tree, fake, tmp_path):
    fake.script = [(401, {"Content-Type": "application/json"}, b'{"error": {"message": "invalid api key"}}')]
    env = clean_env(OPENAI_BASE_URL=f"{fake.base}/v1", OPENAI_API_KEY="wrong")
    out = tmp_path / "out"
    r = index(indexer, tree, out, "--model", "openai:fake-embed", "--embedding-cache", tmp_path / "cache", env=env, check=False)
    assert r.returncode == 2, r.describe()
    assert "error[EMBED_AUTH]" in r.stderr and "hint:" in r.stderr, r.stderr
    assert len(fake.embedding_requests()) == 1, "a refused key must not be retried"
    # Nothing half-written: no snapshot, no `latest`, no temp directory left.
    assert not list(out.rglob("manifest.json"))
    assert not (out / "remote").exists() or list((out / "remote").iterdir()) == []


def test_ollama_needs_no_key(indexer, tree, fake, tmp_path):
    # OLLAMA_HOST as Ollama itself accepts it: host:port, no scheme.
    env = clean_env(OLLAMA_HOST=f"127.0.0.1:{fake.port}")
    snap = index(indexer, tree, tmp_path / "out", "--model", "ollama:nomic", "--embedding-cache", tmp_path / "cache", env=env)
    reqs = fake.embedding_requests()
    assert reqs and len(reqs) == len(fake.requests)
    for r in reqs:
        assert "authorization" not in r["headers"]
        assert r["body"]["model"] == "nomic" and "input_type" not in r["body"]
    e = snap.manifest["embeddings"]
    assert e["model"] == "ollama:nomic" and e["dimension"] == DIM and e["count"] == N_FILES
    check_vectors_are_the_providers(snap, reqs)
