"""GPT on Azure OpenAI, through the ``openai`` SDK's Azure client.

A request goes to ``{endpoint}/openai/deployments/{deployment}/chat/completions?api-version=...``
with the key in the ``api-key`` header (or a Microsoft Entra ID token as a bearer). ``llm.model``
names the model behind the deployment (for prices and the run's first line); the deployment
defaults to it. Messages, tool calls, usage and caching are the chat-completions ones
(``OpenAICompatLLM``).
"""

from __future__ import annotations

from ..errors import ConfigError, MissingKey
from .openai_compat import OpenAICompatLLM

DEFAULT_API_VERSION = "2024-10-21"  # the GA version with tools, max_completion_tokens and cached-token usage


class AzureOpenAILLM(OpenAICompatLLM):
    name = "azure"

    def __init__(self, model: str, endpoint: str, deployment: str | None = None,
                 api_version: str = DEFAULT_API_VERSION, api_key: str | None = None, ad_token: str | None = None,
                 tools: bool = True, timeout_s: float = 300, max_retries: int = 2):
        if not model:
            raise ConfigError("llm.model: required for the azure provider (the model behind the deployment, "
                              "e.g. gpt-4o)")
        if not endpoint:
            raise ConfigError("llm.settings.endpoint: required for the azure provider "
                              "(e.g. https://NAME.openai.azure.com)")
        if not api_key and not ad_token:
            raise MissingKey("azure: no API key; set AZURE_OPENAI_API_KEY (or llm.api_key_env, llm.secret_block, "
                             "or llm.settings.ad_token_env for a Microsoft Entra ID token)")
        import openai

        self.deployment = deployment or model
        self.endpoint = endpoint.rstrip("/")
        self.api_version = api_version
        client = openai.AzureOpenAI(azure_endpoint=self.endpoint, azure_deployment=self.deployment,
                                    api_version=api_version, api_key=api_key, azure_ad_token=ad_token,
                                    timeout=timeout_s, max_retries=max_retries)
        super().__init__(model, base_url=self.endpoint, tools=tools, client=client)
        self.token_param = "max_completion_tokens"  # Azure's GA versions take it; its reasoning models need it

    def describe(self) -> str:
        return f"azure deployment {self.deployment} at {self.endpoint}"
