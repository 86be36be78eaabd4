"""The model providers nodeloom knows, and how each is configured.

A row says which Agno model class serves the provider, which environment variables hold
its key and base URL, and which optional dependency it needs. Adding a provider is adding
a row.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Provider:
    id: str
    module: str  # the Agno module holding `cls`
    cls: str
    key_env: str | None  # environment variable holding the API key; None: no key needed
    base_url_env: str | None
    base_url_param: str  # the Agno model's argument for the base URL ("client_params.x": nested)
    requires: str | None = None  # an importable module the provider needs
    extra: str | None = None  # the nodeloom extra that installs it
    needs_base_url: bool = False
    example: str = ""
    http_client: bool = True  # the Agno class takes an httpx.AsyncClient
    public_urls: tuple[str, ...] = ()  # its own endpoints when base_url_env is unset
    other_key_envs: tuple[str, ...] = ()  # more environment credentials its SDK reads

    @property
    def key_envs(self) -> tuple[str, ...]:
        """Every environment variable holding a credential of this provider."""
        return ((self.key_env,) if self.key_env else ()) + self.other_key_envs


PROVIDERS: dict[str, Provider] = {
    p.id: p
    for p in (
        Provider(
            "openai",
            "agno.models.openai",
            "OpenAIChat",
            "OPENAI_API_KEY",
            "OPENAI_BASE_URL",
            "base_url",
            requires="openai",
            example="openai:gpt-4o-mini",
            public_urls=("https://api.openai.com/v1",),
        ),
        Provider(
            "openai-compatible",
            "agno.models.openai.like",
            "OpenAILike",
            None,
            "OPENAI_BASE_URL",
            "base_url",
            requires="openai",
            needs_base_url=True,
            example="openai-compatible:llama3.1 with base_url http://localhost:8080/v1",
        ),
        Provider(
            "anthropic",
            "agno.models.anthropic",
            "Claude",
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_BASE_URL",
            "client_params.base_url",
            requires="anthropic",
            extra="anthropic",
            example="anthropic:claude-sonnet-4-5",
            public_urls=("https://api.anthropic.com",),
            other_key_envs=("ANTHROPIC_AUTH_TOKEN",),
        ),
        Provider(
            "ollama",
            "agno.models.ollama",
            "Ollama",
            None,
            "OLLAMA_HOST",
            "host",
            requires="ollama",
            extra="ollama",
            example="ollama:llama3.2",
            http_client=False,
            public_urls=("http://localhost:11434", "https://ollama.com"),
            other_key_envs=("OLLAMA_API_KEY",),
        ),
    )
}
