"""Model providers: OpenAI-compatible endpoints, vendor SDKs, replay, offline agents."""

from ._base import (
    PROVIDERS,
    Completion,
    ImagePart,
    InfraError,
    Message,
    Observation,
    Provider,
    ProviderFactory,
    Request,
    TextPart,
    make_provider,
)

__all__ = [
    "PROVIDERS",
    "Completion",
    "ImagePart",
    "InfraError",
    "Message",
    "Observation",
    "Provider",
    "ProviderFactory",
    "Request",
    "TextPart",
    "make_provider",
]
