"""Replies in each framework's own format, for the test server (``dibench serve-test``).

A real model answers a decision screen in the format its framework's prompt asks for; the test
server stands in for it with one fixed move, a tap at a point of the shown screenshot (its
centre unless told otherwise), written by the framework's codec (``Codec.write``, as the
offline agents' replies are): the same thought/action layout, coordinate space and tool-call
JSON. The point is read on the image the request carries, so a framework that
resizes the screenshot (``ui-tars``, ``gui-owl``) gets its resized pixels. Frameworks whose
loop asks several roles in turn (``mobile-agent-v2``, ``-e``, ``-v3``) need a different reply
per role, which one fixed move cannot give: they are not offered.
"""

from __future__ import annotations

import base64
import binascii
import io
import math
from collections.abc import Callable, Iterator
from typing import Any

from PIL import Image

from dibench.adapters import ADAPTERS, Action, AppAgentGrid, Frame, Say, codec_of
from dibench.providers import ToolCall, ToolReply

__all__ = ["REPLY_FRAMEWORKS", "framework_reply"]

Point = tuple[float, float]  # fractions of the shown image's width and height
Writer = Callable[[Point, tuple[int, int] | None, dict[str, Any]], "str | ToolReply"]


def _images(body: dict[str, Any]) -> Iterator[str]:
    """The data URLs of the request's images, in order (OpenAI chat format; Anthropic image
    blocks, tool results' too, as data URLs; the Responses API's input items)."""
    for item in body.get("input") or ():
        output = item.get("output") if isinstance(item, dict) else None
        parts = [output] if isinstance(output, dict) else item.get("content") or ()
        for part in parts if isinstance(parts, list | tuple) else ():
            url = part.get("image_url") if isinstance(part, dict) else None
            if isinstance(url, str) and url.startswith("data:"):
                yield url
    for message in body.get("messages") or ():
        content = message.get("content") if isinstance(message, dict) else None
        for part in content if isinstance(content, list) else ():
            if not isinstance(part, dict):
                continue
            if part.get("type") == "image_url":
                url = (part.get("image_url") or {}).get("url", "")
                if isinstance(url, str) and url.startswith("data:"):
                    yield url
            inner = part.get("content") if part.get("type") == "tool_result" else [part]
            for block in inner if isinstance(inner, list) else ():
                if isinstance(block, dict) and block.get("type") == "image":
                    source = block.get("source") or {}
                    yield f"data:{source.get('media_type')};base64,{source.get('data', '')}"


def image_size(body: dict[str, Any]) -> tuple[int, int] | None:
    """Width and height of the last image in the request (its header only), or None."""
    urls = list(_images(body))
    if not urls:
        return None
    try:
        data = base64.b64decode(urls[-1].split(",", 1)[1], validate=False)
        with Image.open(io.BytesIO(data)) as img:
            return img.size
    except (IndexError, binascii.Error, OSError, ValueError):
        return None


def _request_text(body: dict[str, Any]) -> str:
    texts: list[str] = []
    for message in body.get("messages") or ():
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            texts.append(content)
        for part in content if isinstance(content, list) else ():
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                texts.append(part["text"])
    return "\n".join(texts)


_GRID_PROMPT = "A grid is drawn over it"  # AppAgent's task_grid prompt, not its tag prompt


def _appagent(point: Point, size: tuple[int, int] | None, body: dict[str, Any]) -> str:
    """A tag names an element only the labelled image shows, so ask for AppAgent's grid
    first (a tap no tag covers, as the offline agents do), then tap the grid square."""
    codec = codec_of("appagent", parse="robust")  # the grid's nearest named spot
    if _GRID_PROMPT not in _request_text(body) or size is None:
        return codec.write(Say(Action("tap", x=0, y=0)), Frame(1, 1))
    w, h = size
    tap = Action("tap", x=point[0] * w, y=point[1] * h)
    area = AppAgentGrid.for_screen(w, h).area_at(tap.x or 0.0, tap.y or 0.0)
    said = Say(tap, f"Square {area} holds the item to choose.", "Tapped it.")
    return codec.write(said, Frame(w, h, view="grid"))


def _tap(framework: str, on_grid: bool) -> Writer:
    """A tap written by ``framework``'s codec: on a grid, the point's fractions on a unit
    frame (the grid's rounding of the fraction itself); else pixels of the shown image (a
    1000x1000 one when the request has none)."""
    codec = codec_of(framework)

    def write(point: Point, size: tuple[int, int] | None, body: dict[str, Any]) -> str:
        w, h = (1, 1) if on_grid else size or (1000, 1000)
        return codec.write(Say(Action("tap", x=point[0] * w, y=point[1] * h)), Frame(w, h))

    return write


def _direct(point: Point, size: tuple[int, int] | None, body: dict[str, Any]) -> str:
    return codec_of("direct").write(Say(Action("tap_element", element=0)), Frame(1, 1))


def _claude_cu(point: Point, size: tuple[int, int] | None, body: dict[str, Any]) -> ToolReply:
    """A ``left_click`` in the sent screenshot's pixels, written for the declared tool."""
    w, h = size or (1000, 1000)  # no image in the request: a point on a 1000 grid
    x, y = math.floor(point[0] * w), math.floor(point[1] * h)
    tools = body.get("tools") or [{}]
    kind = tools[0].get("type") if isinstance(tools[0], dict) else None
    if kind == "computer_toolset_20260801":
        call = ToolCall("toolu_serve_test", "left_click", {"coordinate": [x, y]}, "computer")
    else:
        call = ToolCall(
            "toolu_serve_test", "computer", {"action": "left_click", "coordinate": [x, y]}
        )
    return ToolReply("This item fits the request.", (call,))


def _openai_cu(point: Point, size: tuple[int, int] | None, body: dict[str, Any]) -> ToolReply:
    """A left ``click`` in the sent screenshot's pixels, in the declared tool's shape (a GA
    batch or the preview's single action)."""
    w, h = size or (1000, 1000)
    click = {"type": "click", "button": "left", "x": math.floor(point[0] * w),
             "y": math.floor(point[1] * h)}  # fmt: skip
    tools = body.get("tools") or [{}]
    kind = tools[0].get("type") if isinstance(tools[0], dict) else None
    args = {"actions": [click]} if kind == "computer" else {"action": click}
    call = ToolCall("call_serve_test", "computer", args, item="cu_serve_test")
    return ToolReply("This item fits the request.", (call,))


def _gemini_cu(point: Point, size: tuple[int, int] | None, body: dict[str, Any]) -> ToolReply:
    """A ``click_at`` on Gemini's 0-999 grid (the image's size does not enter it)."""
    x, y = (min(math.floor(v * 1000), 999) for v in point)
    return ToolReply("This item fits the request.", (ToolCall("", "click_at", {"x": x, "y": y}),))


_WRITERS: dict[str, Writer] = {
    "direct": _direct,
    "appagent": _appagent,
    "autoglm": _tap("autoglm", True),
    "mai-ui": _tap("mai-ui", True),
    "qwen-vl": _tap("qwen-vl", True),
    "ui-tars": _tap("ui-tars", False),
    "gui-owl": _tap("gui-owl", False),
    "gui-owl-1.5": _tap("gui-owl-1.5", False),  # its 0-1000 screen over the image sent
    "ui-venus": _tap("ui-venus", False),  # pixels of its resized screenshot
    "gelab": _tap("gelab", False),  # its 0-1000 grid over the image sent
    "claude-cu": _claude_cu,
    "openai-cu": _openai_cu,
    "gemini-cu": _gemini_cu,
}
# what each reply commits to, for the server's banner
_TAPS = {"direct": "item 1"}

REPLY_FRAMEWORKS: tuple[str, ...] = tuple(_WRITERS)


def framework_reply(
    framework: str, point: Point = (0.5, 0.5)
) -> tuple[Callable[[dict[str, Any]], str | ToolReply], str]:
    """The server's reply function for ``framework`` and a one-line account of what it taps.

    ``point`` is where a coordinate framework taps, as fractions of the shown image (the
    centre by default; ``appagent`` asks for its grid, then taps the square there);
    ``direct`` answers item 1. A framework
    not in ``REPLY_FRAMEWORKS`` is a ValueError naming those that are.
    """
    writer = _WRITERS.get(framework)
    if writer is None:
        why = "its loop asks several roles in turn" if framework in ADAPTERS else "unknown"
        raise ValueError(
            f"no fixed reply for framework {framework!r} ({why}); one of: "
            f"{', '.join(REPLY_FRAMEWORKS)}, or give the reply text itself"
        )

    def reply(body: dict[str, Any]) -> str | ToolReply:
        return writer(point, image_size(body), body)

    where = _TAPS.get(framework, f"the point ({point[0]:g}, {point[1]:g}) of the screenshot")
    return reply, f"{framework}'s format, tapping {where}"
