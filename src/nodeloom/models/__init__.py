"""Model references (`provider:model`) and their resolution through Agno's model classes."""

from nodeloom.models.providers import PROVIDERS, Provider
from nodeloom.models.reference import ModelConfigError, ModelSpec, parse_reference
from nodeloom.models.resolve import check_configured, create_model, with_overrides

__all__ = [
    "PROVIDERS",
    "ModelConfigError",
    "ModelSpec",
    "Provider",
    "check_configured",
    "create_model",
    "parse_reference",
    "with_overrides",
]
