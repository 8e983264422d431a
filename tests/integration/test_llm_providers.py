"""Bedrock, Vertex and Azure on their real wire formats, against loopback servers that check what
the real services check.

- Bedrock: ``POST /model/{id}/invoke``, a SigV4 ``Authorization`` header that the server
  verifies with the secret key (canonical request, string to sign, signing key: the AWS
  algorithm written out here, independently of botocore), the scope's region and service, a
  fresh ``X-Amz-Date``, and Bedrock's body (an ``anthropic_version``, no ``model``).
- Vertex: ``POST /v1/projects/{p}/locations/{r}/publishers/anthropic/models/{m}:rawPredict``
  with the bearer token; a service-account key file is exchanged for that token at a loopback
  token endpoint that verifies the JWT's RS256 signature.
- Azure: ``POST /openai/deployments/{d}/chat/completions?api-version=...`` with the
  ``api-key`` header (or an Entra ID bearer token).

Then the adapters' usage, tool calls, error classes (transient with retry-after / terminal) and
the doctor's ``ping`` are checked on each, and the exploration loop runs end to end on each.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
import json
import re
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from assay.errors import (
    ConfigError,
    LLMError,
    LLMTimeout,
    MissingKey,
    TransientError,
    is_transient,
)
from assay.llm import build_llm
from assay.llm.base import LLMRequest, Message, SystemBlock, ToolSpec
from assay.models import LLMConfig
from tests.helpers import make_explorer, small_warehouse

AKID, SECRET = "AKIDLOOPBACKTEST", "loopback/secret+key"
REGION = "us-west-2"
# the API version goes in the body (bedrock-2023-05-31, vertex-2023-10-16, or the SDK's dated version)
VERSION = re.compile(r"^([a-z]+-)?\d{4}-\d{2}-\d{2}$")
BEDROCK_MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"


# ----------------------------------------------------------------------------- the loopback server


class Loopback:
    """A threaded HTTP server: ``check(req) -> (status, payload, headers)``; records every request."""

    def __init__(self, check):
        self.check = check
        self.requests: list[dict] = []
        self.answers: list[tuple[int, dict, dict]] = []
        outer = self

        class H(BaseHTTPRequestHandler):
            def _serve(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                req = {"method": self.command, "path": self.path, "headers": {k.lower(): v for k, v in
                                                                                self.headers.items()},
                       "raw": raw}
                try:
                    req["body"] = json.loads(raw) if raw and raw[:1] in (b"{", b"[") else None
                except ValueError:
                    req["body"] = None
                outer.requests.append(req)
                status, payload, headers = outer.check(req)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            do_POST = do_GET = _serve

            def log_message(self, *a):
                pass

        self.srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.srv.server_address[1]}"

    def next_answer(self):
        if not self.answers:
            return 500, {"message": "the test gave no answer"}, {}
        a = self.answers.pop(0)
        return a if len(a) == 3 else (*a, {})

    def close(self):
        self.srv.shutdown()
        self.srv.server_close()


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    """No credentials of the machine leak in; the AWS chain sees only what a test sets."""
    for k in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
              "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK", "AWS_REGION", "AWS_DEFAULT_REGION",
              "ANTHROPIC_BEDROCK_BASE_URL", "ANTHROPIC_VERTEX_BASE_URL", "ANTHROPIC_VERTEX_PROJECT_ID",
              "CLOUD_ML_REGION", "GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_PROJECT",
              "AZURE_OPENAI_API_KEY", "AZURE_OPENAI_AD_TOKEN", "AZURE_OPENAI_ENDPOINT", "OPENAI_API_VERSION",
              "ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "no-gcloud"))
    monkeypatch.setenv("GCE_METADATA_HOST", "127.0.0.1:9")  # no metadata server: ADC fails fast
    monkeypatch.setenv("GCE_METADATA_IP", "127.0.0.1:9")
    return monkeypatch


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    return small_warehouse(tmp_path_factory.mktemp("providers") / "w.duckdb")


def claude_msg(content, stop="end_turn", cached=0, created=0):
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude", "content": content,
            "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": 100, "output_tokens": 20, "cache_read_input_tokens": cached,
                      "cache_creation_input_tokens": created}}


def chat_msg(content=None, tool_calls=None, cached=30):
    msg = {"role": "assistant", "content": content}
    if tool_calls:
        msg["tool_calls"] = tool_calls
    return {"id": "c", "object": "chat.completion", "created": 0, "model": "gpt-4o",
            "choices": [{"index": 0, "message": msg, "finish_reason": "tool_calls" if tool_calls else "stop"}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 7, "total_tokens": 57,
                      "prompt_tokens_details": {"cached_tokens": cached}}}


def explore_answers_claude():
    return [
        claude_msg([{"type": "text", "text": "Counting."},
                    {"type": "tool_use", "id": "tu_1", "name": "query",
                     "input": {"sql": "SELECT count(*) AS n FROM orders", "purpose": "orders"}}], stop="tool_use",
                   created=60),
        claude_msg([{"type": "tool_use", "id": "tu_2", "name": "done", "input": {"summary": "1000 orders"}}],
                   stop="tool_use", cached=60),
    ]


REQ = LLMRequest(purpose="x", system=[SystemBlock("You count.", cache=True)], messages=[Message("user", "hi")],
                 tools=[ToolSpec("query", "run SQL", {"type": "object", "properties": {"sql": {"type": "string"}}})],
                 max_tokens=64)


# ----------------------------------------------------------------------------- Bedrock: SigV4, checked


def _hmac(key: bytes, msg: str) -> bytes:
    return hmac.new(key, msg.encode(), hashlib.sha256).digest()


def sigv4_problem(req: dict, secret: str, region: str, service: str = "bedrock") -> str | None:
    """Why the request's SigV4 signature is not valid for ``secret`` (None when it is). The AWS
    algorithm for non-S3 services: the path as received is URI-encoded once more."""
    auth = req["headers"].get("authorization", "")
    if not auth.startswith("AWS4-HMAC-SHA256 "):
        return "no SigV4 Authorization header"
    parts = dict(p.strip().split("=", 1) for p in auth[len("AWS4-HMAC-SHA256 "):].split(","))
    akid, date, reg, svc, term = parts["Credential"].split("/")
    if akid != AKID:
        return "The security token included in the request is invalid (unknown access key)"
    if (reg, svc, term) != (region, service, "aws4_request"):
        return f"wrong credential scope {reg}/{svc}/{term}"
    amz_date = req["headers"].get("x-amz-date", "")
    signed_at = dt.datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ").replace(tzinfo=dt.UTC)
    if abs((dt.datetime.now(dt.UTC) - signed_at).total_seconds()) > 300 or not amz_date.startswith(date):
        return "X-Amz-Date is not fresh"
    signed = parts["SignedHeaders"].split(";")
    if "host" not in signed or "x-amz-date" not in signed:
        return "host and x-amz-date must be signed"
    path, _, query = req["path"].partition("?")
    canonical_uri = urllib.parse.quote(path, safe="/~")
    canonical_query = "&".join(sorted(
        f"{urllib.parse.quote(k, safe='-_.~')}={urllib.parse.quote(v, safe='-_.~')}"
        for k, v in urllib.parse.parse_qsl(query, keep_blank_values=True)))
    canonical_headers = "".join(f"{h}:{' '.join(req['headers'][h].split())}\n" for h in signed)
    payload_hash = hashlib.sha256(req["raw"]).hexdigest()
    canonical = "\n".join([req["method"], canonical_uri, canonical_query, canonical_headers, ";".join(signed),
                           payload_hash])
    scope = f"{date}/{region}/{service}/aws4_request"
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()])
    key = _hmac(_hmac(_hmac(_hmac(("AWS4" + secret).encode(), date), region), service), "aws4_request")
    expected = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, parts["Signature"]):
        return "The request signature we calculated does not match the signature you provided"
    return None


@pytest.fixture
def bedrock(clean_env):
    clean_env.setenv("AWS_ACCESS_KEY_ID", AKID)
    clean_env.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    state = {"secret": SECRET}

    def check(req):
        if req["method"] != "POST" or not req["path"].startswith("/model/") or not req["path"].endswith("/invoke"):
            return 404, {"message": f"unknown operation {req['method']} {req['path']}"}, {}
        why = sigv4_problem(req, state["secret"], REGION)
        if why:
            return 403, {"message": why}, {"x-amzn-ErrorType": "InvalidSignatureException"}
        body = req["body"]
        if not VERSION.match(str(body.get("anthropic_version"))) or "model" in body:
            return 400, {"message": "ValidationException: malformed input request"}, {}
        return srv.next_answer()

    srv = Loopback(check)
    srv.state = state
    yield srv
    srv.close()


def bedrock_llm(srv, **kw):
    cfg = LLMConfig(provider="bedrock", model=BEDROCK_MODEL, base_url=srv.url, settings={"region": REGION}, **kw)
    return build_llm(cfg)


def test_bedrock_signs_every_request_and_runs_the_tool_loop(bedrock, db):
    bedrock.answers = [(200, a) for a in explore_answers_claude()]
    llm = bedrock_llm(bedrock)
    assert type(llm).__name__ == "BedrockLLM" and llm.supports_tools
    out = make_explorer(db, llm).run()
    assert [s.action.value for s in out.steps] == ["query", "done"]
    first, second = bedrock.requests
    # the model id is in the path, ':' and all, and the signature covered it and the body
    assert first["path"] == f"/model/{BEDROCK_MODEL}/invoke"
    assert f"Credential={AKID}/" in first["headers"]["authorization"]
    assert first["body"]["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert {t["name"] for t in first["body"]["tools"]} == {"query", "lookup_schema", "search_tables", "done"}
    results = [b for b in second["body"]["messages"][-1]["content"] if b["type"] == "tool_result"]
    assert results[0]["tool_use_id"] == "tu_1" and '"rows": [[1000]]' in results[0]["content"]
    # usage: every prompt token counts as input (fresh + cache writes + cache reads); cached = reads
    assert out.steps[0].usage.input_tokens == 160 and out.steps[0].usage.cached_tokens == 0
    assert out.steps[1].usage.input_tokens == 160 and out.steps[1].usage.cached_tokens == 60
    assert out.steps[0].usage.output_tokens == 20


def test_bedrock_a_wrong_secret_fails_the_signature_check_as_a_terminal_key_error(bedrock):
    bedrock.state["secret"] = "another-secret"
    with pytest.raises(MissingKey, match=r"bedrock: access denied \(HTTP 403: The request signature") as e:
        bedrock_llm(bedrock).complete(REQ)
    assert SECRET not in str(e.value) and "\n" not in str(e.value) and not is_transient(e.value)


def test_bedrock_throttling_is_retried_honouring_retry_after_then_transient(bedrock):
    throttled = (429, {"message": "Too many requests, please wait before trying again."},
                 {"x-amzn-ErrorType": "ThrottlingException", "retry-after": "1"})
    bedrock.answers = [throttled, (200, claude_msg([{"type": "text", "text": "ok"}]))]
    llm = bedrock_llm(bedrock)
    t0 = time.monotonic()
    assert llm.complete(REQ).text == "ok"  # the SDK waited as asked, then succeeded
    assert time.monotonic() - t0 >= 0.95 and len(bedrock.requests) == 2
    # still throttled after the SDK's retries: a transient error for the task's retry policy
    bedrock.answers = [(429, {"message": "Too many requests"}, {"retry-after-ms": "20"})] * 3
    with pytest.raises(LLMTimeout, match="throttling or overloaded") as e:
        llm.complete(REQ)
    assert isinstance(e.value, TransientError) and e.value.retry_after_s == pytest.approx(0.02)
    assert len(bedrock.requests) == 5  # one try and two SDK retries
    for status in (500, 503, 529):
        bedrock.answers = [(status, {"message": "ServiceUnavailableException"}, {"retry-after-ms": "1"})] * 3
        with pytest.raises(LLMTimeout):
            llm.complete(REQ)


def test_bedrock_validation_and_access_errors_are_terminal_one_liners(bedrock):
    llm = bedrock_llm(bedrock)
    bedrock.answers = [(400, {"message": "The provided model identifier is invalid."},
                        {"x-amzn-ErrorType": "ValidationException"})]
    with pytest.raises(LLMError, match=r"bedrock: the request was refused \(HTTP 400: The provided model") as e:
        llm.complete(REQ)
    assert not is_transient(e.value) and len(bedrock.requests) == 1  # not retried
    bedrock.answers = [(403, {"message": "You don't have access to the model with the specified model ID."},
                        {"x-amzn-ErrorType": "AccessDeniedException"})]
    with pytest.raises(MissingKey, match="access to the model is granted in the Bedrock console"):
        llm.complete(REQ)
    bedrock.answers = [(404, {"message": "Model not found"})]
    with pytest.raises(ConfigError, match=r"bedrock: model \(llm.model\) 'us.anthropic"):
        llm.complete(REQ)


def test_bedrock_ping_is_one_signed_token(bedrock):
    bedrock.answers = [(200, claude_msg([{"type": "text", "text": "O"}]))]
    assert bedrock_llm(bedrock).ping(5) == f"{BEDROCK_MODEL} via bedrock {REGION} at {bedrock.url}"
    assert bedrock.requests[0]["body"]["max_tokens"] == 1


def test_bedrock_without_credentials_or_region_says_so_before_any_call(clean_env):
    with pytest.raises(MissingKey, match="no AWS credentials found"):
        build_llm(LLMConfig(provider="bedrock", model=BEDROCK_MODEL, settings={"region": REGION}))
    clean_env.setenv("AWS_ACCESS_KEY_ID", AKID)
    clean_env.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    with pytest.raises(ConfigError, match="no AWS region; set llm.settings.region"):
        build_llm(LLMConfig(provider="bedrock", model=BEDROCK_MODEL))
    with pytest.raises(ConfigError, match="AWS profile 'nope' not found"):
        build_llm(LLMConfig(provider="bedrock", model=BEDROCK_MODEL, settings={"region": REGION, "profile": "nope"}))
    with pytest.raises(ConfigError, match="llm.settings.regoin: unknown key \\(did you mean region\\?\\)"):
        build_llm(LLMConfig(provider="bedrock", model=BEDROCK_MODEL, settings={"regoin": REGION}))


def test_bedrock_profile_from_the_aws_config_files(clean_env, bedrock, tmp_path):
    """The usual chain: a named profile in the shared credentials file, its region in the config file."""
    clean_env.delenv("AWS_ACCESS_KEY_ID")
    clean_env.delenv("AWS_SECRET_ACCESS_KEY")
    (tmp_path / "creds").write_text(f"[analytics]\naws_access_key_id = {AKID}\naws_secret_access_key = {SECRET}\n")
    (tmp_path / "config").write_text(f"[profile analytics]\nregion = {REGION}\n")
    clean_env.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "creds"))
    clean_env.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    bedrock.answers = [(200, claude_msg([{"type": "text", "text": "ok"}]))]
    llm = build_llm(LLMConfig(provider="bedrock", model=BEDROCK_MODEL, base_url=bedrock.url,
                              settings={"profile": "analytics"}))
    assert llm.region == REGION and llm.complete(REQ).text == "ok"


# ----------------------------------------------------------------------------- Vertex: path and bearer


PROJECT, VREGION, VMODEL = "acme-analytics", "us-east5", "claude-sonnet-4-5@20250929"


@pytest.fixture
def vertex(clean_env):
    state = {"token": "ya29.static-token"}

    def check(req):
        if req["path"] == "/token":
            return token_endpoint(req, state)
        want = f"/v1/projects/{PROJECT}/locations/{VREGION}/publishers/anthropic/models/{VMODEL}:rawPredict"
        if req["method"] != "POST" or req["path"] != want:
            return 404, {"error": {"code": 404, "message": f"no route {req['path']}", "status": "NOT_FOUND"}}, {}
        if req["headers"].get("authorization") != f"Bearer {state['token']}":
            return 401, {"error": {"code": 401, "message": "Request had invalid authentication credentials.",
                                   "status": "UNAUTHENTICATED"}}, {}
        body = req["body"]
        if not VERSION.match(str(body.get("anthropic_version"))) or "model" in body:
            return 400, {"error": {"code": 400, "message": "invalid body", "status": "INVALID_ARGUMENT"}}, {}
        return srv.next_answer()

    srv = Loopback(check)
    srv.state = state
    yield srv
    srv.close()


def vertex_cfg(srv, **settings):
    return LLMConfig(provider="vertex", model=VMODEL, base_url=srv.url + "/v1",
                     settings={"project_id": PROJECT, "region": VREGION, **settings})


def test_vertex_with_a_google_credentials_object_runs_the_tool_loop(vertex, db):
    from google.oauth2.credentials import Credentials

    from assay.llm.vertex import VertexLLM

    vertex.answers = [(200, a) for a in explore_answers_claude()]
    llm = VertexLLM(VMODEL, region=VREGION, project_id=PROJECT, credentials=Credentials(token="ya29.static-token"),
                    base_url=vertex.url + "/v1")
    out = make_explorer(db, llm).run()
    assert [s.action.value for s in out.steps] == ["query", "done"]
    assert out.steps[1].usage.cached_tokens == 60
    assert vertex.requests[0]["body"]["tools"][0]["name"] == "query"


def test_vertex_access_token_from_an_env_var_and_a_rejected_token(vertex):
    vertex.state["token"] = "ya29.from-env"
    import os

    os.environ["MY_VERTEX_TOKEN"] = "ya29.from-env"
    try:
        vertex.answers = [(200, claude_msg([{"type": "text", "text": "hello"}]))]
        llm = build_llm(vertex_cfg(vertex, access_token_env="MY_VERTEX_TOKEN"))
        r = llm.complete(REQ)
        assert r.text == "hello" and r.usage.input_tokens == 100 and r.usage.output_tokens == 20
        vertex.state["token"] = "ya29.rotated"
        with pytest.raises(MissingKey, match=r"vertex: the credentials were rejected \(HTTP 401: Request had invalid"):
            llm.complete(REQ)
    finally:
        del os.environ["MY_VERTEX_TOKEN"]
    with pytest.raises(MissingKey, match="MY_VERTEX_TOKEN, which is not set"):
        build_llm(vertex_cfg(vertex, access_token_env="MY_VERTEX_TOKEN"))


def test_vertex_throttling_is_transient_and_a_refused_request_terminal(vertex):
    """Vertex's quota (429 RESOURCE_EXHAUSTED) and overload answers are retried by the SDK, then a
    transient error; a refused request (400 INVALID_ARGUMENT) fails at once, one line."""
    from google.oauth2.credentials import Credentials

    from assay.llm.vertex import VertexLLM

    llm = VertexLLM(VMODEL, region=VREGION, project_id=PROJECT, credentials=Credentials(token="ya29.static-token"),
                    base_url=vertex.url + "/v1")
    quota = (429, {"error": {"code": 429, "message": "Quota exceeded for aiplatform.googleapis.com/"
                             "online_prediction_requests_per_base_model", "status": "RESOURCE_EXHAUSTED"}},
             {"retry-after-ms": "20"})
    vertex.answers = [quota, (200, claude_msg([{"type": "text", "text": "ok"}]))]
    assert llm.complete(REQ).text == "ok" and len(vertex.requests) == 2  # retried by the SDK, then answered
    vertex.answers = [quota] * 3
    with pytest.raises(LLMTimeout) as e:
        llm.complete(REQ)
    assert isinstance(e.value, TransientError) and e.value.retry_after_s == pytest.approx(0.02)
    assert len(vertex.requests) == 5  # one try and two SDK retries
    for status in (500, 503, 529):
        vertex.answers = [(status, {"error": {"code": status, "message": "overloaded", "status": "UNAVAILABLE"}},
                           {"retry-after-ms": "1"})] * 3
        with pytest.raises(LLMTimeout):
            llm.complete(REQ)
    n = len(vertex.requests)
    vertex.answers = [(400, {"error": {"code": 400, "message": "max_tokens: Field required",
                                       "status": "INVALID_ARGUMENT"}}, {})]
    with pytest.raises(LLMError) as e:
        llm.complete(REQ)
    assert not is_transient(e.value) and len(vertex.requests) == n + 1  # not retried
    assert "\n" not in str(e.value) and "max_tokens: Field required" in str(e.value)


def _b64url_decode(s: str) -> bytes:
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


def token_endpoint(req, state):
    """Google's OAuth token endpoint for a service account: a JWT-bearer grant whose RS256 signature
    is verified with the account's public key; answers an access token."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding

    form = dict(urllib.parse.parse_qsl(req["raw"].decode()))
    if form.get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer":
        return 400, {"error": "unsupported_grant_type"}, {}
    head, payload, sig = form["assertion"].split(".")
    try:
        state["public_key"].verify(_b64url_decode(sig), f"{head}.{payload}".encode(), padding.PKCS1v15(),
                                   hashes.SHA256())
    except InvalidSignature:
        return 400, {"error": "invalid_grant", "error_description": "Invalid JWT Signature."}, {}
    claims = json.loads(_b64url_decode(payload))
    if claims.get("iss") != state["email"] or "cloud-platform" not in claims.get("scope", ""):
        return 400, {"error": "invalid_grant", "error_description": "bad claims"}, {}
    state["token"] = "ya29.minted-" + claims["iat"].__str__()
    return 200, {"access_token": state["token"], "expires_in": 3600, "token_type": "Bearer"}, {}


def test_vertex_service_account_file_is_exchanged_for_a_token(vertex, tmp_path):
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    email = f"assay@{PROJECT}.iam.gserviceaccount.com"
    vertex.state.update(public_key=key.public_key(), email=email)
    sa = tmp_path / "sa.json"
    sa.write_text(json.dumps({
        "type": "service_account", "project_id": PROJECT, "private_key_id": "k1", "client_email": email,
        "client_id": "1", "token_uri": vertex.url + "/token",
        "private_key": key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                         serialization.NoEncryption()).decode()}))
    vertex.answers = [(200, claude_msg([{"type": "text", "text": "signed in"}]))]
    cfg = LLMConfig(provider="vertex", model=VMODEL, base_url=vertex.url + "/v1",
                    settings={"region": VREGION, "service_account_file": str(sa)})  # project from the file
    llm = build_llm(cfg)
    assert llm.project_id == PROJECT and llm.complete(REQ).text == "signed in"
    assert vertex.requests[0]["path"] == "/token"
    assert vertex.requests[1]["headers"]["authorization"] == f"Bearer {vertex.state['token']}"
    vertex.answers = [(200, claude_msg([{"type": "text", "text": "O"}]))]
    assert llm.ping(5) == f"{VMODEL} via vertex {PROJECT}/{VREGION} at {vertex.url}/v1"
    assert vertex.requests[-1]["body"]["max_tokens"] == 1


def test_vertex_without_google_credentials_says_so(clean_env):
    with pytest.raises(MissingKey, match="vertex: no Google credentials found"):
        build_llm(LLMConfig(provider="vertex", model=VMODEL, settings={"project_id": PROJECT, "region": VREGION}))
    with pytest.raises(ConfigError, match="llm.settings.service_account_file: cannot use"):
        build_llm(LLMConfig(provider="vertex", model=VMODEL,
                            settings={"region": VREGION, "service_account_file": "/nonexistent/sa.json"}))


# ----------------------------------------------------------------------------- Azure: deployment, api-key, api-version


ENDPOINT_KEY, DEPLOYMENT, API_VERSION = "azure-key-123", "gpt4o-prod", "2024-10-21"


@pytest.fixture
def azure(clean_env):
    state = {"key": ENDPOINT_KEY}

    def check(req):
        path, _, query = req["path"].partition("?")
        q = dict(urllib.parse.parse_qsl(query))
        if path != f"/openai/deployments/{DEPLOYMENT}/chat/completions" or req["method"] != "POST":
            return 404, {"error": {"code": "DeploymentNotFound",
                                   "message": "The API deployment for this resource does not exist."}}, {}
        if not q.get("api-version"):
            return 404, {"error": {"code": "404", "message": "Resource not found"}}, {}
        if q["api-version"] != API_VERSION:
            return 400, {"error": {"code": "BadRequest", "message": "API version not supported"}}, {}
        token = req["headers"].get("authorization", "")
        if req["headers"].get("api-key") != state["key"] and token != f"Bearer {state.get('ad')}":
            return 401, {"error": {"code": "401", "message": "Access denied due to invalid subscription key or "
                                                              "wrong API endpoint."}}, {}
        return srv.next_answer()

    srv = Loopback(check)
    srv.state = state
    yield srv
    srv.close()


def azure_cfg(srv, **settings):
    return LLMConfig(provider="azure", model="gpt-4o", api_key_env="MY_AZURE_KEY",
                     settings={"endpoint": srv.url, "deployment": DEPLOYMENT, "api_version": API_VERSION,
                               **settings})


def test_azure_deployment_path_key_and_version_with_the_tool_loop(azure, db, clean_env):
    clean_env.setenv("MY_AZURE_KEY", ENDPOINT_KEY)
    azure.answers = [
        (200, chat_msg(tool_calls=[{"id": "call_1", "type": "function", "function": {
            "name": "query", "arguments": json.dumps({"sql": "SELECT count(*) AS n FROM orders", "purpose": "n"})}}])),
        (200, chat_msg(tool_calls=[{"id": "call_2", "type": "function",
                                    "function": {"name": "done", "arguments": "{\"summary\": \"ok\"}"}}])),
    ]
    llm = build_llm(azure_cfg(azure))
    out = make_explorer(db, llm).run()
    assert [s.action.value for s in out.steps] == ["query", "done"]
    first = azure.requests[0]
    assert "authorization" not in first["headers"]  # the key travels in api-key only
    assert first["body"]["max_completion_tokens"] > 0 and "max_tokens" not in first["body"]
    assert first["body"]["tools"][0]["function"]["name"] == "query"
    assert out.steps[0].usage.input_tokens == 50 and out.steps[0].usage.cached_tokens == 30
    assert out.steps[0].usage.output_tokens == 7


def test_azure_errors_and_ping(azure, clean_env):
    clean_env.setenv("MY_AZURE_KEY", "wrong")
    with pytest.raises(MissingKey, match=r"azure: the credentials were rejected \(HTTP 401: Access denied"):
        build_llm(azure_cfg(azure)).complete(REQ)
    clean_env.setenv("MY_AZURE_KEY", ENDPOINT_KEY)
    with pytest.raises(ConfigError, match=r"azure: deployment \(llm.settings.deployment\) 'nope' not found"):
        build_llm(azure_cfg(azure, deployment="nope")).complete(REQ)
    llm = build_llm(azure_cfg(azure))
    azure.answers = [(429, {"error": {"code": "429", "message": "Rate limit reached"}}, {"retry-after-ms": "10"})] * 3
    with pytest.raises(LLMTimeout, match="HTTP 429: Rate limit reached") as e:
        llm.complete(REQ)
    assert e.value.retry_after_s == pytest.approx(0.01)
    azure.answers = [(200, chat_msg(content="O"))]
    assert llm.ping(5) == f"gpt-4o via azure deployment {DEPLOYMENT} at {azure.url}"
    assert azure.requests[-1]["body"]["max_completion_tokens"] == 1


def test_azure_entra_id_token_instead_of_a_key(azure, clean_env):
    azure.state["ad"] = "eyJ.entra.token"
    clean_env.setenv("MY_ENTRA_TOKEN", "eyJ.entra.token")
    azure.answers = [(200, chat_msg(content="hi"))]
    llm = build_llm(azure_cfg(azure, ad_token_env="MY_ENTRA_TOKEN"))
    assert llm.complete(REQ).text == "hi"
    assert azure.requests[0]["headers"]["authorization"] == "Bearer eyJ.entra.token"
    with pytest.raises(MissingKey, match="no API key; set AZURE_OPENAI_API_KEY"):
        build_llm(LLMConfig(provider="azure", model="gpt-4o", settings={"endpoint": azure.url}))


# ----------------------------------------------------------------------------- OpenAI through the SDK


@pytest.fixture
def compat(clean_env):
    def check(req):
        if req["path"] != "/v1/chat/completions":
            return 404, {"error": {"message": "not found"}}, {}
        return srv.next_answer()

    srv = Loopback(check)
    yield srv
    srv.close()


def test_openai_compatible_server_retries_500_and_429_then_answers(compat):
    """#20 item 3: the client no longer makes one attempt; retry-after is honoured."""
    from assay.llm.openai_compat import OpenAICompatLLM

    compat.answers = [(500, {"error": {"message": "boom"}}),
                      (429, {"error": {"message": "slow down"}}, {"retry-after": "1"}),
                      (200, chat_msg(content="fine"))]
    llm = OpenAICompatLLM("qwen", base_url=compat.url + "/v1", api_key=None)
    t0 = time.monotonic()
    r = llm.complete(REQ)
    assert r.text == "fine" and len(compat.requests) == 3 and time.monotonic() - t0 >= 0.95
    assert r.usage.cached_tokens == 30
    assert compat.requests[0]["body"]["max_tokens"] == 64  # a self-hosted server is sent max_tokens
    compat.answers = [(400, {"error": {"message": "context length exceeded"}})]
    with pytest.raises(LLMError, match=r"openai: the request was refused \(HTTP 400: context length") as e:
        llm.complete(REQ)
    assert not is_transient(e.value)
    compat.answers = [(200, chat_msg(content="O"))]
    assert llm.ping(5) == f"qwen via the OpenAI-compatible server at {compat.url}/v1"


def test_a_slow_or_absent_server_is_a_transient_error(compat):
    from assay.llm.openai_compat import OpenAICompatLLM

    slow = compat.check

    def check(req):
        time.sleep(1.5)
        return slow(req)

    compat.check = check
    compat.answers = [(200, chat_msg(content="late"))]
    with pytest.raises(LLMTimeout, match="openai: the model did not answer in time"):
        OpenAICompatLLM("qwen", base_url=compat.url + "/v1", timeout_s=0.3, max_retries=0).complete(REQ)
    compat.close()
    with pytest.raises(LLMTimeout, match="openai: could not reach the service"):
        OpenAICompatLLM("qwen", base_url=compat.url + "/v1", max_retries=0).complete(REQ)


# ----------------------------------------------------------------------------- Anthropic: the doctor's ping


def test_anthropic_ping_is_one_token_with_the_key(clean_env):
    from assay.llm.anthropic import AnthropicLLM

    def check(req):
        if req["path"] != "/v1/messages":
            return 404, {"type": "error", "error": {"type": "not_found_error", "message": "no route"}}, {}
        # the key as x-api-key, or as a bearer token (newer SDKs)
        if "sk-ant-good" not in (req["headers"].get("x-api-key"), req["headers"].get("authorization", "")[7:]):
            return 401, {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}, {}
        return srv.next_answer()

    srv = Loopback(check)
    try:
        srv.answers = [(200, claude_msg([{"type": "text", "text": "O"}]))]
        assert AnthropicLLM("claude-haiku-4-5", api_key="sk-ant-good", base_url=srv.url).ping(5) == \
            f"claude-haiku-4-5 via anthropic at {srv.url}"
        assert srv.requests[0]["body"]["max_tokens"] == 1
        with pytest.raises(MissingKey, match=r"anthropic: the credentials were rejected \(HTTP 401: invalid x-api-key"):
            AnthropicLLM("claude-haiku-4-5", api_key="sk-ant-bad", base_url=srv.url).ping(5)
    finally:
        srv.close()
