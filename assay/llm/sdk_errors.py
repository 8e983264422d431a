"""The providers' SDK errors as assay errors: transient (retried) or terminal (one clear line).

The anthropic SDK (Anthropic, Bedrock, Vertex) and the openai SDK (OpenAI, Azure,
OpenAI-compatible servers) raise the same family of errors: a connection error or timeout,
or an HTTP status with the service's message. The SDK has already retried the transient
ones (``max_retries``, exponential backoff, honouring ``retry-after``); what is still
failing is classified here, once, for every provider:

- throttling and overload (408, 409, 429, 5xx, Anthropic's 529, Bedrock's
  ThrottlingException / ServiceUnavailable / ModelNotReady), timeouts and dropped
  connections: ``LLMTimeout``, a ``TransientError`` that the task's retry policy retries
  with backoff; it carries the service's ``retry-after`` when it sent one;
- rejected credentials (401) and denied access (403: a key without rights, a Bedrock model
  whose access was not granted): ``MissingKey``;
- an unknown model or deployment (404): ``ConfigError`` naming ``llm.model``;
- any other refusal (400 validation, 413 too large, 422): ``LLMError``, terminal.

Messages are one line, never carry a credential, and name the provider.
"""

from __future__ import annotations

import json
import re

from ..errors import AssayError, ConfigError, LLMError, LLMTimeout, MissingKey

TRANSIENT_STATUS = {408, 409, 425, 429}
WHERE_KEYS = {
    "anthropic": "ANTHROPIC_API_KEY or llm.secret_block",
    "bedrock": "the AWS credentials (AWS_PROFILE, AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, llm.settings.profile)",
    "vertex": "the Google credentials (GOOGLE_APPLICATION_CREDENTIALS, gcloud auth application-default login, "
              "llm.settings.service_account_file)",
    "azure": "AZURE_OPENAI_API_KEY, llm.api_key_env or llm.secret_block",
    "openai": "OPENAI_API_KEY, llm.api_key_env or llm.secret_block",
}


def retry_after_s(exc: BaseException) -> float | None:
    """The wait the service asked for (``retry-after-ms`` or ``retry-after`` seconds), if any."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    try:
        ms = headers.get("retry-after-ms")
        if ms:
            return float(ms) / 1000
        s = headers.get("retry-after")
        if s:
            return float(s)
    except (TypeError, ValueError):  # an HTTP date: the SDK honoured it already
        return None
    return None


def service_message(exc: BaseException) -> str:
    """The service's own words, one line, short (Anthropic, OpenAI, Azure and Bedrock bodies)."""
    body = getattr(exc, "body", None)
    msg = ""
    if isinstance(body, dict):
        err = body.get("error") if isinstance(body.get("error"), dict) else body
        msg = str(err.get("message") or err.get("Message") or "")
    if not msg:
        msg = str(getattr(exc, "message", "") or exc)
        try:  # a raw JSON body as the message
            data = json.loads(msg)
            if isinstance(data, dict):
                inner = data.get("error") if isinstance(data.get("error"), dict) else data
                msg = str(inner.get("message") or msg)
        except (TypeError, ValueError):
            pass
    msg = re.sub(r"\s+", " ", msg).strip()
    msg = re.sub(r"(sk-[A-Za-z0-9_-]{6})[A-Za-z0-9_-]+", r"\1…", msg)  # never echo a whole key
    return msg[:300]


def classify(exc: BaseException, provider: str, model: str = "") -> AssayError:
    """The assay error for an SDK error of ``provider`` (anthropic or openai SDK)."""
    status = getattr(exc, "status_code", None)
    name = type(exc).__name__
    if status is None:
        if "Timeout" in name:
            return LLMTimeout(f"{provider}: the model did not answer in time ({name})")
        if "Connection" in name:
            return LLMTimeout(f"{provider}: could not reach the service ({name}: {service_message(exc)})")
        return LLMError(f"{provider}: {name}: {service_message(exc)}")
    msg = service_message(exc)
    if status in TRANSIENT_STATUS or status >= 500:
        wait = retry_after_s(exc)
        err = LLMTimeout(f"{provider}: the service is throttling or overloaded (HTTP {status}: {msg})"
                         + (f"; it asked to retry after {wait:g} s" if wait is not None else ""))
        err.retry_after_s = wait
        return err
    if status == 401:
        return MissingKey(f"{provider}: the credentials were rejected (HTTP 401: {msg}); check "
                          f"{WHERE_KEYS.get(provider, 'the credentials')}")
    if status == 403:
        return MissingKey(f"{provider}: access denied (HTTP 403: {msg}); check the credentials' rights"
                          + (" and that access to the model is granted in the Bedrock console"
                             if provider == "bedrock" else ""))
    if status == 404:
        what = "deployment (llm.settings.deployment)" if provider == "azure" else "model (llm.model)"
        return ConfigError(f"{provider}: {what} {model!r} not found (HTTP 404: {msg})")
    return LLMError(f"{provider}: the request was refused (HTTP {status}: {msg})")
