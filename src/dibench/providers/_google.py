"""``google:MODEL`` — Gemini through the official ``google-genai`` SDK (an optional extra).

The SDK parses the body itself, so here we classify its exceptions (APIError by status, a body
it cannot parse, httpx2 transport errors) into the shared Retryable / InfraError contract.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from ._base import PROVIDERS, Request, SafetyCheck, ToolCall, ToolSpec
from ._convert import to_google_contents
from ._http import HTTPProvider, as_int, import_sdk, tls_context
from ._retry import Reply, Retryable

__all__ = ["GoogleProvider", "google_tools"]

# Finish and block reasons that mean "the vendor's safety layer refused", not "try again".
_REFUSALS = frozenset(
    {
        "SAFETY",
        "BLOCKLIST",
        "PROHIBITED_CONTENT",
        "SPII",
        "RECITATION",
        "IMAGE_SAFETY",
        "IMAGE_PROHIBITED_CONTENT",
        "MODEL_ARMOR",
        "JAILBREAK",
    }
)


def _reason(value: Any) -> str:
    """An SDK enum or a plain string -> the enum's name."""
    return str(getattr(value, "value", value) or "")


def reply_from_google(response: Any, model: str = "") -> Reply:
    """A ``GenerateContentResponse`` -> Reply; no candidate and no block reason is Retryable."""
    usage = getattr(response, "usage_metadata", None)
    input_tokens = as_int(getattr(usage, "prompt_token_count", 0))
    output_tokens = as_int(getattr(usage, "candidates_token_count", 0)) + as_int(
        getattr(usage, "thoughts_token_count", 0)
    )
    version = getattr(response, "model_version", None) or model
    candidates = getattr(response, "candidates", None) or []
    if not candidates:
        feedback = getattr(response, "prompt_feedback", None)
        if _reason(getattr(feedback, "block_reason", None)):
            return Reply("", input_tokens, output_tokens, refusal=True, model=version)
        raise Retryable("empty candidates")
    candidate = candidates[0]
    content = getattr(candidate, "content", None)
    parts = getattr(content, "parts", None) or []
    text = "".join(
        p.text for p in parts if getattr(p, "text", None) and not getattr(p, "thought", None)
    )
    calls = tuple(_tool_call(p) for p in parts if getattr(p, "function_call", None))
    refusal = _reason(getattr(candidate, "finish_reason", None)) in _REFUSALS
    return Reply(text, input_tokens, output_tokens, refusal=refusal, model=version, calls=calls)


def _tool_call(part: Any) -> ToolCall:
    """A part's ``FunctionCall``; a ``safety_decision`` in its args is the call's safety check,
    the part's ``thought_signature`` (bytes) is kept as base64 to be sent back."""
    call = part.function_call
    args = dict(getattr(call, "args", None) or {})
    decision = args.get("safety_decision")
    safety: tuple[SafetyCheck, ...] = ()
    if isinstance(decision, dict):
        safety = (
            SafetyCheck(
                code=str(decision.get("decision", "")),
                message=str(decision.get("explanation", "")),
            ),
        )
    signature = getattr(part, "thought_signature", None)
    return ToolCall(
        str(getattr(call, "id", None) or ""),
        str(call.name or ""),
        args,
        safety=safety,
        signature=base64.b64encode(signature).decode() if signature else "",
    )


def google_tools(tools: tuple[ToolSpec, ...]) -> list[dict[str, Any]]:
    """``Tool`` entries: ``computer_use`` with its fields (``environment``,
    ``excluded_predefined_functions``, ...), and every ``function`` tool as one
    ``function_declarations`` entry (``name``, then its fields: ``description``,
    ``parameters``)."""
    out: list[dict[str, Any]] = []
    functions: list[dict[str, Any]] = []
    for tool in tools:
        if tool.type == "function":
            functions.append({"name": tool.name, **tool.fields})
        else:
            out.append({tool.type: dict(tool.fields)})
    if functions:
        out.append({"function_declarations": functions})
    return out


class GoogleProvider(HTTPProvider):
    """Gemini models through ``google.genai.Client(...).aio``; SDK retries stay off."""

    scheme = "google"
    default_key_env = "GEMINI_API_KEY"
    vendor_hosts = ("generativelanguage.googleapis.com",)
    other_key_envs = ("GOOGLE_API_KEY",)  # the SDK reads it too
    base_url_env = "GOOGLE_GEMINI_BASE_URL"
    basic_auth_replaces_key = False  # the SDK sends x-goog-api-key beside the URL's Basic auth

    def __init__(self, model: str, **options: Any) -> None:
        super().__init__(model, **options)  # a missing key fails here, before the SDK's import
        self._genai = import_sdk("google.genai", "google")
        self._errors = import_sdk("google.genai.errors", "google")
        self._httpx = import_sdk("httpx2", "google")

    def _new_client(self, api_key: str, endpoint: str | None, headers: dict[str, str]) -> Any:
        types = self._genai.types
        # Our own httpx client: the SDK would switch to aiohttp whenever that is installed
        # (``datasets`` brings it), and aiohttp's errors would escape the classification below.
        transport = self._httpx.AsyncClient(timeout=self.policy.timeout_s, verify=tls_context())
        http_options = types.HttpOptions(
            base_url=endpoint,
            timeout=int(self.policy.timeout_s * 1000),
            retry_options=None,
            headers=headers or None,  # Basic auth from the URL, if it had any
            httpx_async_client=transport,
        )
        client = self._genai.Client(api_key=api_key, http_options=http_options)
        client._dibench_transport = transport
        return client

    async def _close_client(self, client: Any) -> None:
        await client.aio.aclose()
        await client._dibench_transport.aclose()

    def _payload(self, request: Request) -> dict[str, Any]:
        system, contents = to_google_contents(request.messages)
        types = self._genai.types
        config = types.GenerateContentConfig(
            system_instruction=system,
            temperature=request.temperature,
            max_output_tokens=request.max_tokens,
            seed=request.seed % 2**31,  # the API takes an int32
            tools=google_tools(request.tools) or None,
            # the adapter runs the calls: the SDK's automatic calling (and its warning that
            # declared functions without Python callables cannot use it) stays off
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True)
            if request.tools
            else None,
        )
        return {"model": self.model, "contents": contents, "config": config}

    async def _attempt(self, client: Any, payload: dict[str, Any]) -> Reply:
        try:
            response = await client.aio.models.generate_content(**payload)
        except self._errors.APIError as exc:
            headers = getattr(getattr(exc, "response", None), "headers", None)
            raise self._status_error(int(exc.code or 500), headers, exc.details) from None
        except (self._errors.UnknownApiResponseError, json.JSONDecodeError):
            raise Retryable("malformed JSON body") from None
        except self._httpx.TimeoutException:
            raise Retryable(f"timeout after {self.policy.timeout_s:g}s", unanswered=True) from None
        except self._httpx.TransportError as exc:
            refused = self._connect_error(exc)
            if refused is not None:
                raise refused from None
            raise Retryable(f"connection error ({type(exc).__name__})") from None
        return reply_from_google(response, self.model)


@PROVIDERS.register("google", extra="google")
def google_provider(model: str, **options: Any) -> GoogleProvider:
    """``google:MODEL``: Gemini's generateContent API; needs ``pip install "dibench[google]"``."""
    return GoogleProvider(model, **options)


google_provider.options_of = GoogleProvider  # type: ignore[attr-defined]  # options checked by name and type
