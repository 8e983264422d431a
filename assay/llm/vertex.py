"""Claude on Google Cloud Vertex AI, through the anthropic SDK's Vertex client (``anthropic[vertex]``).

The project and region come from the project YAML; the Google credentials from Application
Default Credentials (``GOOGLE_APPLICATION_CREDENTIALS``, ``gcloud auth application-default
login``, the metadata server), a service-account file named in ``llm.settings``, or an access
token read from an environment variable. The wire format, tool use, prompt caching and usage are
Claude's own (``ClaudeLLM``).
"""

from __future__ import annotations

import os

from ..errors import ConfigError, LLMTimeout, MissingKey
from .anthropic import ClaudeLLM

SCOPE = "https://www.googleapis.com/auth/cloud-platform"


def google_credentials(service_account_file: str | None = None):
    """(credentials, project) from a service-account file or Application Default Credentials."""
    try:
        import google.auth
        import google.auth.exceptions
    except ImportError:
        raise ConfigError("vertex: needs google-auth; install it with: pip install 'assay[vertex]'") from None
    if service_account_file:
        from google.oauth2 import service_account

        try:
            creds = service_account.Credentials.from_service_account_file(service_account_file, scopes=[SCOPE])
        except (OSError, ValueError) as exc:
            raise ConfigError(f"llm.settings.service_account_file: cannot use {service_account_file!r} "
                              f"({type(exc).__name__}: {str(exc)[:120]})") from None
        return creds, creds.project_id
    try:
        return google.auth.default(scopes=[SCOPE])
    except google.auth.exceptions.DefaultCredentialsError:
        raise MissingKey("vertex: no Google credentials found; set GOOGLE_APPLICATION_CREDENTIALS, run "
                         "'gcloud auth application-default login', or set llm.settings.service_account_file "
                         "or llm.settings.access_token_env") from None


class VertexLLM(ClaudeLLM):
    name = "vertex"

    def __init__(self, model: str, region: str, project_id: str | None = None, access_token: str | None = None,
                 credentials=None, service_account_file: str | None = None, base_url: str | None = None,
                 timeout_s: float = 300, max_retries: int = 2):
        if not model:
            raise ConfigError("llm.model: required for the vertex provider (e.g. claude-sonnet-4-5@20250929)")
        if not region:
            raise ConfigError("llm.settings.region: required for the vertex provider (e.g. us-east5 or global)")
        import anthropic

        if access_token is None and credentials is None:
            credentials, found = google_credentials(service_account_file)
            project_id = project_id or found
        if not project_id:
            raise ConfigError("llm.settings.project_id: required for the vertex provider "
                              "(the Google Cloud project that has Claude enabled)")
        client = anthropic.AnthropicVertex(region=region, project_id=project_id, access_token=access_token,
                                           credentials=credentials, base_url=base_url, timeout=timeout_s,
                                           max_retries=max_retries)
        super().__init__(model, client)
        self.region, self.project_id = region, project_id
        self.where = f"{project_id}/{region}" + (f" at {base_url}" if base_url else "")

    def _create(self, client, **kwargs):
        try:
            import google.auth.exceptions as gexc
        except ImportError:  # a static access token needs no google-auth
            return super()._create(client, **kwargs)
        try:
            return super()._create(client, **kwargs)
        except gexc.TransportError as exc:
            raise LLMTimeout(f"vertex: could not reach Google's token service ({type(exc).__name__})") from None
        except gexc.GoogleAuthError as exc:
            raise MissingKey(f"vertex: the Google credentials could not give an access token "
                             f"({type(exc).__name__}: {str(exc)[:160]})") from None


def access_token_from_env(var: str | None) -> str | None:
    if not var:
        return None
    token = os.environ.get(var)
    if not token:
        raise MissingKey(f"vertex: llm.settings.access_token_env names {var}, which is not set")
    return token
