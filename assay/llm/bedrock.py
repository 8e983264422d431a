"""Claude on Amazon Bedrock, through the anthropic SDK's Bedrock client (``anthropic[bedrock]``).

The region and the model id (or inference profile, e.g. ``us.anthropic.claude-sonnet-4-5-20250929-v1:0``)
come from the project; the AWS credentials from the usual chain (environment, ``AWS_PROFILE`` or
``llm.settings.profile``, SSO, the instance or task role), or a Bedrock API key in
``AWS_BEARER_TOKEN_BEDROCK``. Every request is signed with SigV4 by botocore. The wire format,
tool use, prompt caching and usage are Claude's own (``ClaudeLLM``).
"""

from __future__ import annotations

import os

from ..errors import ConfigError, MissingKey
from .anthropic import ClaudeLLM


class BedrockLLM(ClaudeLLM):
    name = "bedrock"

    def __init__(self, model: str, region: str | None = None, profile: str | None = None,
                 base_url: str | None = None, timeout_s: float = 300, max_retries: int = 2):
        if not model:
            raise ConfigError("llm.model: required for the bedrock provider "
                              "(a Bedrock model id or inference profile, e.g. us.anthropic.claude-sonnet-4-5-20250929-v1:0)")
        try:
            import boto3
            import botocore.exceptions
        except ImportError:
            raise ConfigError("bedrock: needs boto3; install it with: pip install 'assay[bedrock]'") from None
        import anthropic

        try:
            session = boto3.Session(profile_name=profile, region_name=region)
        except botocore.exceptions.ProfileNotFound:
            raise ConfigError(f"llm.settings.profile: AWS profile {profile!r} not found in the AWS config") from None
        region = region or session.region_name
        if not region:
            raise ConfigError("bedrock: no AWS region; set llm.settings.region (or AWS_REGION)")
        bearer = os.environ.get("AWS_BEARER_TOKEN_BEDROCK")
        if not bearer:
            try:
                creds = session.get_credentials()
            except botocore.exceptions.BotoCoreError as exc:
                raise MissingKey(f"bedrock: the AWS credentials could not be loaded ({type(exc).__name__})") from None
            if creds is None:
                raise MissingKey("bedrock: no AWS credentials found; set AWS_PROFILE (or llm.settings.profile), "
                                 "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or run where a role provides them")
        try:
            client = anthropic.AnthropicBedrock(aws_region=region, aws_profile=profile, base_url=base_url,
                                                timeout=timeout_s, max_retries=max_retries)
        except ValueError as exc:  # e.g. a Bedrock API key and a profile at once
            raise ConfigError(f"bedrock: {exc}") from None
        super().__init__(model, client)
        self.region = region
        self.where = region + (f" at {base_url}" if base_url else "")

    def _create(self, client, **kwargs):
        try:
            return super()._create(client, **kwargs)
        except RuntimeError as exc:  # the SDK's signer found no credentials at request time
            if "credentials" in str(exc).lower():
                raise MissingKey(f"bedrock: {exc}") from None
            raise
