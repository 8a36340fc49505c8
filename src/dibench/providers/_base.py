"""The model-provider interface: one async call from messages (text + images) to a reply.

Providers hide the model: an OpenAI-compatible endpoint, a vendor SDK, recorded replies, or an
offline agent. Adapters build the messages; the runner owns retries' bookkeeping and storage.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from PIL import Image

from dibench._errors import DIBenchError
from dibench._registry import Registry
from dibench._text_safety import utf8_text
from dibench._values import Box, InstanceId, UIElement

from ._stats import ProviderStats

__all__ = [
    "PROVIDERS",
    "Completion",
    "EndpointError",
    "ImagePart",
    "InfraError",
    "Message",
    "Observation",
    "Part",
    "Provider",
    "ProviderFactory",
    "ProviderStats",
    "Reasoning",
    "Request",
    "SafetyCheck",
    "TextPart",
    "ToolCall",
    "ToolReply",
    "ToolResult",
    "ToolSpec",
    "make_provider",
]


@dataclass(frozen=True)
class TextPart:
    text: str


@dataclass(frozen=True)
class ImagePart:
    """An image as the model receives it; ``png`` is encoded once and reused across retries."""

    png: bytes
    width: int
    height: int
    mime: str = "image/png"


@dataclass(frozen=True)
class SafetyCheck:
    """A vendor's request that the user confirm a tool call before it runs.

    OpenAI's ``pending_safety_checks`` item (``id``, ``code``, ``message``) or Gemini's
    ``safety_decision`` (``code`` is its ``decision``, e.g. ``require_confirmation``,
    ``message`` its ``explanation``). A harness that goes on echoes it back as acknowledged.
    """

    id: str = ""
    code: str = ""
    message: str = ""


@dataclass(frozen=True)
class Reasoning:
    """A reasoning item of OpenAI's Responses API (``id``, its summary's text), kept with the
    call it came before: a stateless client sends it back ahead of that call, as the API
    requires of a reasoning model's ``computer_call``."""

    id: str
    summary: str = ""


@dataclass(frozen=True)
class ToolSpec:
    """A tool declared to the model, in the vendor's own terms.

    ``type`` is the vendor's tool type (``computer_toolset_20260801``, ``computer_20251124``,
    OpenAI's ``computer``, Gemini's ``computer_use``, ``function``); ``name`` its name where
    the API wants one; ``fields`` the rest of the declaration as JSON values
    (``display_width_px``, ``environment``, a function's ``parameters``, ...); ``beta`` the
    header value the tool version needs (Anthropic's legacy computer tools), else "".
    """

    type: str
    name: str = ""
    fields: Mapping[str, Any] = field(default_factory=dict)
    beta: str = ""


@dataclass(frozen=True)
class ToolCall:
    """One tool call in a model's reply: what to do, in the vendor's vocabulary.

    ``id`` answers it (Anthropic ``tool_use.id``, OpenAI ``call_id``, Gemini the call's
    ``id`` or "" when the API gives none); ``name`` is the tool or action (``computer``, a
    toolset member such as ``left_click``, Gemini's ``click_at``); ``input`` its arguments
    (OpenAI: the ``action``, or ``{"actions": [...]}`` for a GA batch); ``toolset`` the
    Anthropic ``toolset_name``; ``item`` the id of OpenAI's ``computer_call`` item; ``safety``
    the confirmations the vendor asks for before it runs; ``reasoning`` the Responses API's
    reasoning items that came just before it; ``signature`` Gemini's ``thoughtSignature`` on
    the call's part (base64), which Gemini 3 requires back as received.
    """

    id: str
    name: str
    input: Mapping[str, Any] = field(default_factory=dict)
    toolset: str = ""
    item: str = ""
    safety: tuple[SafetyCheck, ...] = ()
    reasoning: tuple[Reasoning, ...] = ()
    signature: str = ""

    def as_json(self) -> dict[str, Any]:
        """The call as a JSON object (recorded replies, stored steps); empty fields left out."""
        out: dict[str, Any] = {"id": self.id, "name": self.name, "input": dict(self.input)}
        if self.toolset:
            out["toolset"] = self.toolset
        if self.item:
            out["item"] = self.item
        if self.safety:
            out["safety"] = [
                {"id": s.id, "code": s.code, "message": s.message} for s in self.safety
            ]
        if self.reasoning:
            out["reasoning"] = [{"id": r.id, "summary": r.summary} for r in self.reasoning]
        if self.signature:
            out["signature"] = self.signature
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ToolCall:
        """The inverse of ``as_json``; a malformed object is a ValueError naming the field."""
        cid, name, args = data.get("id"), data.get("name"), data.get("input", {})
        if not isinstance(cid, str) or not isinstance(name, str):
            raise ValueError("id and name: expected strings")
        if not isinstance(args, Mapping):
            raise ValueError("input: expected an object")
        checks = data.get("safety", [])
        if not isinstance(checks, list) or not all(isinstance(c, Mapping) for c in checks):
            raise ValueError("safety: expected a list of objects")
        thoughts = data.get("reasoning", [])
        if not isinstance(thoughts, list) or not all(isinstance(r, Mapping) for r in thoughts):
            raise ValueError("reasoning: expected a list of objects")
        return cls(
            cid, name, dict(args), str(data.get("toolset", "")), str(data.get("item", "")),
            tuple(
                SafetyCheck(str(c.get("id", "")), str(c.get("code", "")), str(c.get("message", "")))
                for c in checks
            ),
            tuple(Reasoning(str(r.get("id", "")), str(r.get("summary", ""))) for r in thoughts),
            str(data.get("signature", "")),
        )  # fmt: skip


@dataclass(frozen=True)
class ToolResult:
    """The answer to one ``ToolCall``, sent in the next user turn.

    ``content`` is what the action returned (a screenshot, a line of text); ``is_error`` marks
    a failed action; ``toolset`` echoes the call's (Anthropic's toolset results must);
    ``acknowledged`` the call's safety checks the user accepted (OpenAI, Gemini).
    """

    call_id: str
    name: str = ""
    content: tuple[TextPart | ImagePart, ...] = ()
    is_error: bool = False
    toolset: str = ""
    acknowledged: tuple[SafetyCheck, ...] = ()


Part = TextPart | ImagePart | ToolCall | ToolResult


@dataclass(frozen=True)
class ToolReply:
    """What an offline agent answers a tool-protocol request with: text and tool calls (an
    adapter's ``answer`` returns one where the framework replies with tool calls)."""

    text: str = ""
    calls: tuple[ToolCall, ...] = ()


@dataclass(frozen=True)
class Message:
    role: Literal["system", "user", "assistant"]
    content: tuple[Part, ...]

    @property
    def text(self) -> str:
        return "\n".join(p.text for p in self.content if isinstance(p, TextPart))


@dataclass(frozen=True)
class Observation:
    """What the screen shows, for offline agents that act without a language model.

    ``screenshot`` is exactly the image the model is shown (after any preprocessing);
    ``candidate_boxes`` and ``acceptable`` are only read by the ``random`` and ``oracle`` agents,
    which exist to check the pipeline.
    """

    instruction: str
    screenshot: Image.Image
    language: str
    ui: tuple[UIElement, ...] = ()
    candidate_boxes: dict[str, Box] = field(default_factory=dict)
    acceptable: tuple[str, ...] = ()
    # What kind of screen this is in an interactive app (home, list, detail, ...); "" or
    # "decision" for a static decision screen, where the only move is the choice itself.
    page: str = ""


_NO_INSTANCE = InstanceId("")  # the id of a call made outside any instance


@dataclass(frozen=True)
class Request:
    """One model call. ``answer`` lets offline agents reply in the adapter's own format.

    ``instance_id`` carries the instance's pair, target and probe (a plain string given here is
    taken as a benign id, see ``InstanceId.of``; "" for a call made outside any instance).
    """

    messages: tuple[Message, ...]
    seed: int
    instance_id: InstanceId = _NO_INSTANCE
    repeat: int = 0
    call: int = 0  # index of this call within the episode (0, 1, ...)
    role: str = "decision"  # adapter role making the call: decision, planning, reflection, ...
    temperature: float = 0.0
    max_tokens: int = 1024
    observation: Observation | None = None
    # Render a decision in the adapter's reply format: ("tap", x, y) in the coordinates of the
    # image shown, ("swipe", "up"|"down"|"left"|"right", x, y) (the finger's direction),
    # ("back",), ("type", text) or ("none", reason). Offline agents call it; models ignore it.
    answer: Callable[[tuple[Any, ...]], str | ToolReply] | None = None
    # the tools the model may call (tool-protocol adapters); () for a plain chat request
    tools: tuple[ToolSpec, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.instance_id, InstanceId):
            object.__setattr__(self, "instance_id", InstanceId.of(self.instance_id))


@dataclass(frozen=True)
class Completion:
    """A model's reply. ``text`` may be given a ``ToolReply`` (what a tool-protocol adapter's
    ``answer`` renders), whose text and calls it then holds."""

    text: str
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0
    cost_usd: float = 0.0
    refusal: bool = False
    attempts: int = 1  # 1 + retries that were needed
    model: str = ""
    # The messages the model was really sent, when a wrapper between the adapter and the
    # provider rewrote them (a prompt-level defense); None: the request's own messages.
    sent: tuple[Message, ...] | None = None
    # the tool calls of the reply, in order (tool-protocol requests); text is its text blocks
    calls: tuple[ToolCall, ...] = ()

    @property
    def transcript(self) -> str:
        """The reply as stored with a step: its text, or with tool calls a JSON object of the
        text and the calls (so a stored step shows what the model asked the phone to do)."""
        if not self.calls:
            return self.text
        return json.dumps(
            {"text": self.text, "calls": [c.as_json() for c in self.calls]}, ensure_ascii=False
        )

    def __post_init__(self) -> None:
        if isinstance(self.text, ToolReply):  # an adapter's ``answer`` given as the reply
            object.__setattr__(self, "calls", self.text.calls)
            object.__setattr__(self, "text", self.text.text)
        # a reply is stored and recorded as UTF-8: a lone surrogate (which a Python str can hold
        # and UTF-8 cannot) would stop the store mid-run, so it is kept as U+FFFD instead
        if not self.text.isascii():
            object.__setattr__(self, "text", utf8_text(self.text))


class InfraError(DIBenchError, RuntimeError):
    """The call failed for reasons that are not the model's decision (after all retries).

    Never counted as an agent outcome: the runner stores it as an infrastructure error and
    retries it on resume. Two flags tell the runner whether the endpoint itself is at fault,
    so a misconfigured run stops early instead of storing an error for every work item:
    ``permanent`` -- retrying the same call cannot succeed (an HTTP 4xx other than 408, 409,
    425, 429); ``unanswered`` -- nothing answered (the connection failed, or every attempt
    timed out); ``server_error`` -- the last attempt got an HTTP 5xx.
    """

    permanent: bool = False
    unanswered: bool = False
    server_error: bool = False

    def __init__(
        self,
        message: str,
        *,
        permanent: bool | None = None,
        unanswered: bool | None = None,
        server_error: bool | None = None,
    ) -> None:
        super().__init__(message)
        if server_error is not None:
            self.server_error = server_error
        if permanent is not None:
            self.permanent = permanent
        if unanswered is not None:
            self.unanswered = unanswered


class EndpointError(InfraError):
    """The endpoint, the key or the model name is wrong (HTTP 401, 403, 404).

    Every later call would fail the same way, so the runner stops at the first one; the
    message says what to check.
    """

    permanent = True


class Provider(ABC):
    """A model behind one async ``complete`` call."""

    name: str = ""  # e.g. 'openai:qwen2.5-vl-7b'

    @abstractmethod
    async def complete(self, request: Request) -> Completion:
        """Return the model's reply or raise InfraError."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release connections."""

    def warm(self) -> None:  # noqa: B027 - optional hook
        """Load now what the first call would load (models, sessions), so a pool of workers
        pays it while starting, all side by side, rather than inside its first runs. Best
        effort: the runner ignores an error here; the call that needs what failed raises it."""

    def describe(self) -> dict[str, Any]:
        """Settings to record in the run config (never secrets)."""
        return {"name": self.name}

    def stats(self) -> ProviderStats:
        """Running totals for the progress bar; offline providers have none to report."""
        return ProviderStats()


ProviderFactory = Callable[..., Provider]
PROVIDERS: Registry[ProviderFactory] = Registry("provider", group="dibench.providers")


def make_provider(spec: str, **options: Any) -> Provider:
    """'scheme:rest' -> provider, e.g. 'openai:gpt-4o', 'replay:run.jsonl', 'oracle'."""
    scheme, _, rest = spec.partition(":")
    return PROVIDERS.require(scheme)(rest, **options)
