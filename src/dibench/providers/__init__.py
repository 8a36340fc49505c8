"""Model providers: OpenAI-compatible endpoints, vendor SDKs, replay, offline agents.

Importing this package registers ``openai``, ``anthropic``, ``google`` and ``replay`` without
importing any vendor SDK; each SDK is imported when its provider is first built.
"""

from ._anthropic import AnthropicProvider
from ._base import (
    PROVIDERS,
    Completion,
    EndpointError,
    ImagePart,
    InfraError,
    Message,
    Observation,
    Part,
    Provider,
    ProviderFactory,
    Reasoning,
    Request,
    SafetyCheck,
    TextPart,
    ToolCall,
    ToolReply,
    ToolResult,
    ToolSpec,
    make_provider,
)
from ._convert import (
    anthropic_tools,
    data_url,
    to_anthropic_messages,
    to_google_contents,
    to_openai_messages,
)
from ._endpoints import EndpointHealth
from ._google import GoogleProvider
from ._http import HTTPProvider, MissingKeyError, MissingSDKError
from ._openai import OpenAIProvider
from ._quoting import QuotingAgent
from ._replay import (
    Recorded,
    RecordingProvider,
    ReplayFormatError,
    ReplayMissing,
    ReplayProvider,
    load_replay,
)
from ._retry import CallGate, RateLimiter, Reply, Retryable, RetryPolicy, parse_retry_after
from ._stats import ProviderStats

__all__ = [
    "PROVIDERS",
    "AnthropicProvider",
    "CallGate",
    "Completion",
    "EndpointError",
    "EndpointHealth",
    "GoogleProvider",
    "HTTPProvider",
    "ImagePart",
    "InfraError",
    "Message",
    "MissingKeyError",
    "MissingSDKError",
    "Observation",
    "OcrCache",
    "OpenAIProvider",
    "Part",
    "Provider",
    "ProviderFactory",
    "ProviderStats",
    "QuotingAgent",
    "RateLimiter",
    "Reasoning",
    "Recorded",
    "RecordingProvider",
    "ReplayFormatError",
    "ReplayMissing",
    "ReplayProvider",
    "Reply",
    "Request",
    "RetryPolicy",
    "Retryable",
    "SafetyCheck",
    "TextPart",
    "ToolCall",
    "ToolReply",
    "ToolResult",
    "ToolSpec",
    "anthropic_tools",
    "data_url",
    "load_replay",
    "make_provider",
    "parse_retry_after",
    "to_anthropic_messages",
    "to_google_contents",
    "to_openai_messages",
]

from . import _offline as _offline  # registers oracle, random and ocr-agent
from ._offline import OcrCache
