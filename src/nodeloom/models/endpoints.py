"""Where a model call may go, and which key goes with it.

A provider's *own endpoint* is the base URL its environment variable names
(OPENAI_BASE_URL, ANTHROPIC_BASE_URL, OLLAMA_HOST: the operator's choice) or, without it,
the provider's public URL. The environment's keys (OPENAI_API_KEY, ...) are the operator's
and go only there:

- `api_key_for(spec)`: the node's own `api_key` if it has one; else the environment's key
  when the call goes to the provider's own endpoint; a graph-set `base_url` elsewhere
  without its own key is a ModelConfigError (`check_key`), before any call;
- `model_http_client()`: the client every model call uses. Its transport refuses any
  request that carries an environment key to a host other than that key's provider
  (an SDK that reads the environment itself is caught there too), and reaches private,
  loopback and link-local addresses only at an own endpoint, or with
  NODELOOM_ALLOW_PRIVATE_NETWORK=1;
- `check_destination(spec)`: the same address check before a call, for a clear error.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

import httpx

from nodeloom.models.providers import PROVIDERS, Provider
from nodeloom.models.reference import ModelConfigError, ModelSpec
from nodeloom.net import ENV_ALLOW_PRIVATE, NetworkPolicyError, Policy, display_url, resolve_public
from nodeloom.net.client import DEFAULT_PORTS
from nodeloom.net.transport import GuardedTransport

HOW_TO_ALLOW = (
    f"{ENV_ALLOW_PRIVATE}=1 on the server, or point the provider's base-URL variable "
    "(OPENAI_BASE_URL, ANTHROPIC_BASE_URL, OLLAMA_HOST) at it"
)
_MIN_KEY = 8  # shorter environment values are not looked for in headers (false matches)
Origin = tuple[str, str, int]


def origin(url: str | httpx.URL) -> Origin | None:
    """(scheme, host, port) of a URL; None if it has none."""
    try:
        parsed = httpx.URL(url) if isinstance(url, str) else url
    except httpx.InvalidURL:
        return None
    if parsed.scheme not in DEFAULT_PORTS or not parsed.host:
        return None
    return parsed.scheme, parsed.host.lower(), parsed.port or DEFAULT_PORTS[parsed.scheme]


def own_urls(provider: Provider) -> list[str]:
    """The provider's own endpoints: the environment's base URL, else its public URLs."""
    configured = os.environ.get(provider.base_url_env) if provider.base_url_env else None
    return [configured] if configured else list(provider.public_urls)


def _own_origins(providers: Iterable[Provider]) -> set[Origin]:
    found = set()
    for provider in providers:
        for url in (*own_urls(provider), *provider.public_urls):
            if (where := origin(url)) is not None:
                found.add(where)
    return found


def is_own_endpoint(spec: ModelSpec) -> bool:
    """Whether a call with `spec` goes to its provider's own endpoint (no base_url on the
    node, or one at the same origin as the provider's)."""
    if not spec.base_url:
        return True
    provider = PROVIDERS[spec.provider]
    return origin(spec.base_url) in _own_origins([provider]) - {None}


def check_key(spec: ModelSpec, *, where: str) -> None:
    """ModelConfigError if the environment's key would be needed at a foreign endpoint."""
    provider = PROVIDERS[spec.provider]
    if spec.api_key or not provider.key_env or is_own_endpoint(spec):
        return
    own = ", ".join(display_url(url) for url in own_urls(provider))
    raise ModelConfigError(
        f"{where}: base_url {display_url(spec.base_url or '')} is not the '{spec.provider}' "
        f"provider's own endpoint ({own}), so {provider.key_env} from the environment is not "
        "sent there. Give the node its own api_key for that endpoint, a credential: "
        "api_key: '{{ $credentials.NAME }}' (see docs/credentials.md)"
    )


def api_key_for(spec: ModelSpec, *, where: str) -> str | None:
    """The key a call with `spec` sends (see the module docstring)."""
    check_key(spec, where=where)
    if spec.api_key:
        return spec.api_key
    provider = PROVIDERS[spec.provider]
    return os.environ.get(provider.key_env) if provider.key_env else None


def policy_for(url: httpx.URL) -> Policy:
    """Private addresses are allowed at an own endpoint (the operator's choice) only."""
    return Policy(
        allow_private=origin(url) in _own_origins(PROVIDERS.values()), how_to_allow=HOW_TO_ALLOW
    )


def refuse_foreign_keys(request: httpx.Request) -> None:
    """Raise ModelConfigError if a header carries an environment key to a host that is not
    the own endpoint of a provider whose key it is."""
    values = [value for _, value in request.headers.items()]
    holders: dict[str, list[tuple[str, Provider]]] = {}  # key value -> (variable, provider)
    for provider in PROVIDERS.values():
        for name in provider.key_envs:
            key = os.environ.get(name, "")
            if len(key) >= _MIN_KEY and any(key in value for value in values):
                holders.setdefault(key, []).append((name, provider))
    target = origin(request.url)
    for found in holders.values():
        if target in _own_origins(provider for _, provider in found):
            continue
        name, provider = found[0]
        raise ModelConfigError(
            f"refused to send {name} to {display_url(request.url)}: an environment key goes "
            f"only to the '{provider.id}' provider's own endpoint "
            f"({', '.join(display_url(u) for u in own_urls(provider))}). Give the node its own "
            "api_key for that endpoint: '{{ $credentials.NAME }}'"
        )


def guarded_transport() -> GuardedTransport:
    return GuardedTransport(policy_for, inspect=refuse_foreign_keys)


def model_http_client() -> httpx.AsyncClient:
    """The httpx client for model calls (and the tools a build makes): guarded as above,
    no proxies from the environment (the guard must see the real destination)."""
    return httpx.AsyncClient(
        transport=guarded_transport(),
        timeout=httpx.Timeout(600, connect=10),
        trust_env=False,
    )


async def check_destination(spec: ModelSpec, *, where: str) -> None:
    """NetworkPolicyError (naming `where`) if the call's base URL resolves to an address
    the guard refuses. A name that does not resolve is left to the call to report."""
    provider = PROVIDERS[spec.provider]
    url = spec.base_url or next(iter(own_urls(provider)), None)
    target = origin(url) if url else None
    if target is None:
        return
    try:
        await resolve_public(
            target[1].strip("[]"),
            target[2],
            policy=policy_for(httpx.URL(url or "")),
            url=display_url(url or ""),
        )
    except NetworkPolicyError as exc:
        raise NetworkPolicyError(f"{where}: model base_url: {exc}", details=exc.details) from None
    except OSError:
        return
