"""A synthetic decision screen (3 product cards, drawn with Pillow) and a scripted model.

``ScriptedProvider`` stands in for a language model, which cannot run in tests: it returns
canned replies in order, or calls a function of the Request (e.g. ``request.answer(...)``).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pytest
from PIL import Image, ImageDraw

from dibench.adapters import Adapter, AgentInput, Decision
from dibench.dataset import Box, UIElement
from dibench.providers import Completion, Provider, Request
from dibench.render import font
from dibench.sim import EpisodeSpec, plan_episodes

W, H = 540, 960
TITLES = ("Sony WH-1000XM5", "JBL Tune 510BT", "Anker Soundcore Q20")
PRICES = ("$348.00", "$39.95", "$59.99")
SALES = ("1.2k sold", "860 sold", "3k sold")
CARD_TOP = 110
CARD_PITCH = 250


def card_box(i: int) -> Box:
    y0 = CARD_TOP + i * CARD_PITCH
    return Box(12, y0, 528, y0 + 240)


@dataclass(frozen=True)
class Screen:
    image: Image.Image
    ui: tuple[UIElement, ...]
    boxes: dict[str, Box]


def draw_screen(titles: Sequence[str] = TITLES) -> Screen:
    """A shopping result list: search bar, three cards (cover, title, price, sales), nav bar."""
    img = Image.new("RGB", (W, H), "white")
    d = ImageDraw.Draw(img)
    regular, bold = font("sans", 22), font("sans-bold", 24)
    nodes: list[UIElement] = []

    def add(parent: int, cls: str, box: Box, **kw: Any) -> int:
        cls = f"android.widget.{cls}"
        nodes.append(UIElement(index=len(nodes), parent=parent, cls=cls, bounds=box, **kw))
        return len(nodes) - 1

    root = add(-1, "FrameLayout", Box(0, 0, W, H))
    d.rounded_rectangle((16, 40, 524, 90), radius=24, fill=(238, 238, 238))
    d.text((64, 52), "headphones", font=regular, fill=(60, 60, 60))
    bar = add(root, "LinearLayout", Box(16, 40, 524, 90), clickable=True, resource_id="search_bar")
    add(bar, "EditText", Box(60, 48, 500, 82), text="headphones", clickable=True)
    lst = add(root, "RecyclerView", Box(0, 100, W, 880))
    boxes: dict[str, Box] = {}
    covers = ((70, 110, 200), (200, 90, 60), (60, 160, 90))
    for i, (title, price, sales) in enumerate(zip(titles, PRICES, SALES, strict=True)):
        cid = f"c{i + 1}"
        b = card_box(i)
        boxes[cid] = b
        d.rounded_rectangle(tuple(b), radius=12, fill=(247, 247, 247))
        cover = Box(24, b.y1 + 12, 184, b.y1 + 172)
        d.rectangle(tuple(cover), fill=covers[i])
        d.text((200, b.y1 + 20), title, font=bold, fill=(20, 20, 20))
        d.text((200, b.y1 + 96), price, font=bold, fill=(220, 40, 40))
        d.text((200, b.y1 + 140), sales, font=regular, fill=(110, 110, 110))
        card = add(lst, "LinearLayout", b, clickable=True, candidate=cid, role="card")
        add(card, "ImageView", cover, content_desc="Product image", candidate=cid, role="cover")
        add(card, "TextView", Box(200, b.y1 + 16, 516, b.y1 + 80), text=title, candidate=cid,
            role="title")  # fmt: skip
        add(card, "TextView", Box(200, b.y1 + 90, 330, b.y1 + 124), text=price, candidate=cid,
            role="price")  # fmt: skip
        add(card, "TextView", Box(200, b.y1 + 134, 400, b.y1 + 166), text=sales, candidate=cid,
            role="line")  # fmt: skip
    nav = add(root, "LinearLayout", Box(0, 880, W, H))
    d.line((0, 880, W, 880), fill=(220, 220, 220), width=2)
    for j, label in enumerate(("Home", "Cart")):
        nb = Box(j * 270, 881, (j + 1) * 270, H)
        item = add(nav, "FrameLayout", nb, clickable=True, content_desc=label)
        d.text((nb.x1 + 110, 910), label, font=regular, fill=(80, 80, 80))
        add(item, "TextView", Box(nb.x1 + 105, 905, nb.x1 + 170, 940), text=label)
    return Screen(img, tuple(nodes), boxes)


@pytest.fixture(scope="session")
def screen() -> Screen:
    return draw_screen()


def make_input(screen: Screen, **kw: object) -> AgentInput:
    fields: dict[str, object] = {
        "instance_id": "syn-1",
        "repeat": 1,
        "seed": 1,
        "instruction": "Buy the cheapest pair of headphones.",
        "context": ("Opened Shop", 'Searched for "headphones"'),
        "language": "en",
        "screenshot": screen.image,
        "ui": screen.ui,
        "candidate_boxes": dict(screen.boxes),
        "acceptable": ("c2",),
    }
    fields.update(kw)
    return AgentInput(**fields)  # type: ignore[arg-type]


@pytest.fixture
def inp(screen: Screen) -> AgentInput:
    return make_input(screen)


def decide_once(adapter: Adapter, inp: AgentInput, provider: Provider) -> Decision:
    """``adapter.decide`` on a fresh event loop, the provider's clients closed after it."""

    async def go() -> Decision:
        try:
            return await adapter.decide(inp, provider)
        finally:
            await provider.aclose()

    return asyncio.run(go())


Reply = str | Completion | Callable[[Request], "str | Completion"]


class ScriptedProvider(Provider):
    """Replies from a script, in order; the last entry repeats if ``repeat_last``."""

    name = "scripted"

    def __init__(self, *script: Reply, repeat_last: bool = False) -> None:
        self.script = list(script)
        self.repeat_last = repeat_last
        self.requests: list[Request] = []

    async def complete(self, request: Request) -> Completion:
        self.requests.append(request)
        i = len(self.requests) - 1
        if i >= len(self.script):
            if not (self.repeat_last and self.script):
                raise AssertionError(f"unexpected call {i} (role {request.role})")
            i = len(self.script) - 1
        entry = self.script[i]
        if callable(entry):
            entry = entry(request)
        if isinstance(entry, str):
            entry = Completion(text=entry, input_tokens=100, output_tokens=10, latency_s=0.5,
                               cost_usd=0.001)  # fmt: skip
        return entry

    @property
    def roles(self) -> list[str]:
        return [r.role for r in self.requests]


def centre_of(request: Request, cid: str) -> tuple[float, float]:
    """The centre of a candidate's card in the coordinates of the image shown."""
    assert request.observation is not None
    b = request.observation.candidate_boxes[cid]
    return (b.x1 + b.x2) / 2, (b.y1 + b.y2) / 2


def tap(cid: str) -> Callable[[Request], str]:
    """A reply that taps a candidate's centre, written by the adapter's own ``answer``."""

    def reply(request: Request) -> str:
        assert request.answer is not None
        return request.answer(("tap", *centre_of(request, cid)))

    return reply


def give_up(request: Request) -> str:
    assert request.answer is not None
    return request.answer(("none", "nothing fits"))


@pytest.fixture(scope="module")
def specs() -> dict[str, EpisodeSpec]:
    """One exact-match episode per simulator: its only acceptable item is below the fold."""
    planned = plan_episodes(0, 6, probes=())
    return {s.sim: s for s in planned if s.category == "exact_match"}


def agrees(ours: dict[str, Any], original: dict[str, Any]) -> bool:
    """A faithful reading against the original's: same kind or outcome, same integer pixel
    (both floored), same direction and text."""
    if set(ours) != set(original):
        return False
    return all(
        math.floor(ours[k]) == math.floor(want) if k in ("x", "y") else ours[k] == want
        for k, want in original.items()
    )
