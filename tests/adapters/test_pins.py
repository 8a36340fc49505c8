"""Every request each framework sends, pinned byte for byte against files recorded before a move.

Each framework runs in both languages and both parse modes over the synthetic decision screen
(the acting role scripted to swipe, type, then tap, every other role answered by its own
renderer; without context; with options that change the prompts; with an on-screen keyboard
for the frameworks that read one), once per reply vector of its ``vectors/*.jsonl`` (that
reply first, then a tap), and through a whole simulated episode (the replayed walk of
``test_episodes``, once as recorded and once with notes and memory that record something).
Every request is written down: messages, roles, texts, image parameters (images as a hash),
seeds, limits, the observation offline agents read, and what the role's ``answer`` renders
for a fixed set of decisions. ``pins/<framework>.<language>.<parse>.json`` holds the main
runs in full and one hash per vector run. ``DIBENCH_RECORD_PINS=1`` rewrites the files
(only ever at a commit whose requests are known to be right: they were recorded at the base
of the adapters move, 2f390dd).

A second test copies each framework's packaged prompt folder to a temporary directory and
passes it as ``prompts=DIR``: the requests must not change by a byte.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import importlib.util
import inspect
import json
import os
import shutil
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import ImageDraw

from dibench._cache import LruCache
from dibench.adapters import ADAPTERS, AgentInput, make_adapter
from dibench.providers import Completion, Provider, Request
from dibench.render import font
from dibench.sim import EpisodeSpec, make_env, plan_episodes

from .conftest import H as SCREEN_H
from .conftest import Screen, ScriptedProvider, draw_screen, make_input
from .conftest import W as SCREEN_W
from .test_episodes import H, W, Walk, replies_for, walk

PINS = Path(__file__).parent / "pins"
VECTORS = Path(__file__).parent / "vectors"
RECORD = os.environ.get("DIBENCH_RECORD_PINS") == "1"
NAMES = (
    "appagent", "mobile-agent-v2", "mobile-agent-e", "mobile-agent-v3", "gui-owl", "direct",
    "mai-ui",
    "autoglm",
    "qwen-vl",
    "ui-venus",
    "gelab",
)  # fmt: skip
HAS_OCR = importlib.util.find_spec("rapidocr_onnxruntime") is not None
NEEDS_OCR = {  # the frameworks that OCR the screen (an ocr_engine option)
    n for n in ADAPTERS.names() if "ocr_engine" in inspect.signature(ADAPTERS.get(n)).parameters
}
ACTING = ("decision", "operator")
ZH_TITLES = ("索尼 WH-1000XM5 头戴式耳机", "JBL Tune 510BT 蓝牙耳机", "Anker Soundcore Q20")
LANGS = {
    "en": {"instruction": "Buy the cheapest pair of headphones.", "titles": None},
    "zh": {"instruction": "买最便宜的耳机。", "titles": ZH_TITLES},
}


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:32]


# id of an image or PNG -> (the object, its hash): a run shows the same objects again and again
# (a cached screenshot, its cached PNG), and hashing 2 MB of pixels per request was a fifth of
# this module's time. The object is kept so that its id cannot be reused while it is cached.
_HASHED: LruCache[int, tuple[object, str]] = LruCache(maxsize=32)


def _sha_of(obj: object, data: Callable[[], bytes]) -> str:
    """``_sha(data())``, computed once per object while it is cached."""
    hit = _HASHED.peek(id(obj))
    if hit is not None and hit[0] is obj:
        return hit[1]
    digest = _sha(data())
    _HASHED.put(id(obj), (obj, digest))
    return digest


@functools.cache
def _loop() -> asyncio.AbstractEventLoop:
    return asyncio.new_event_loop()


def _run(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run ``coro`` on the module's one event loop. ``asyncio.run`` per call built a loop and a
    thread pool each time and set a SIGINT handler whose restoring reprs the finished task
    (a few ms per call, over 2,000 calls); the requests do not depend on the loop."""
    return _loop().run_until_complete(coro)


@pytest.fixture(scope="module", autouse=True)
def _close_loop() -> Iterator[None]:
    yield
    if _loop.cache_info().currsize:
        loop = _loop()
        loop.run_until_complete(loop.shutdown_default_executor())
        loop.close()
        _loop.cache_clear()
    _HASHED.clear()


def _answers(request: Request) -> dict[str, str]:
    """What the role's renderer writes for a fixed set of decisions (errors by type)."""
    if request.answer is None:
        return {}
    obs = request.observation
    w, h = obs.screenshot.size if obs is not None else (W, H)
    decisions: dict[str, tuple[object, ...]] = {
        "tap": ("tap", w / 2, h / 2),
        "swipe": ("swipe", "up", w / 2, h * 0.7),
        "back": ("back",),
        "type": ("type", "cheap headphones"),
        "none": ("none", "nothing fits"),
    }
    out = {}
    for key, decision in decisions.items():
        try:
            out[key] = request.answer(decision)
        except Exception as err:  # a renderer may refuse a move its role cannot make
            out[key] = f"!{type(err).__name__}: {err}"
    return out


def record_request(request: Request) -> dict[str, Any]:
    """A request as plain JSON: every byte the provider would send, images hashed."""
    messages = []
    for m in request.messages:
        parts: list[dict[str, object]] = []
        for p in m.content:
            if hasattr(p, "text"):
                parts.append({"text": p.text})
            else:
                png = p.png
                image_hash = _sha_of(png, lambda png=png: png)
                parts.append(
                    {"image": image_hash, "width": p.width, "height": p.height, "mime": p.mime}
                )
        messages.append({"role": m.role, "content": parts})
    obs = request.observation
    observation = None
    if obs is not None:
        image = obs.screenshot
        observation = {
            "instruction": obs.instruction,
            "language": obs.language,
            "image": _sha_of(image, lambda: f"{image.mode}{image.size}".encode() + image.tobytes()),
            "ui": len(obs.ui),
            "boxes": {c: list(b) for c, b in obs.candidate_boxes.items()},
            "acceptable": list(obs.acceptable),
        }
    return {
        "role": request.role,
        "call": request.call,
        "seed": request.seed,
        "instance_id": request.instance_id,
        "repeat": request.repeat,
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
        "messages": messages,
        "observation": observation,
        "answers": _answers(request),
    }


class Recorder(Provider):
    """Replies as ``inner`` does and keeps every request as JSON."""

    name = "pin-recorder"

    def __init__(self, inner: Provider) -> None:
        self.inner = inner
        self.requests: list[dict[str, Any]] = []

    async def complete(self, request: Request) -> Completion:
        self.requests.append(record_request(request))
        return await self.inner.complete(request)


def _tap_c2(request: Request) -> str:
    assert request.answer is not None and request.observation is not None
    b = request.observation.candidate_boxes["c2"]
    return request.answer(("tap", (b.x1 + b.x2) / 2, (b.y1 + b.y2) / 2))


def _by_role(acting: Iterator[Callable[[Request], str] | str]) -> Callable[[Request], str]:
    """Acting calls take the next scripted reply (then taps c2); the other roles answer
    through their own renderer, as an offline agent does."""

    def reply(request: Request) -> str:
        if request.role in ACTING:
            entry = next(acting, _tap_c2)
            return entry if isinstance(entry, str) else entry(request)
        assert request.answer is not None
        return request.answer(("none", ""))

    return reply


def _moves(*decisions: tuple[object, ...]) -> Iterator[Callable[[Request], str]]:
    def one(decision: tuple[object, ...]) -> Callable[[Request], str]:
        def reply(request: Request) -> str:
            assert request.answer is not None and request.observation is not None
            w, h = request.observation.screenshot.size
            if decision[0] == "swipe":
                return request.answer(("swipe", decision[1], w / 2, h * 0.7))
            return request.answer(decision)

        return reply

    return iter([one(d) for d in decisions])


# Options that change what a role is shown, run once each on the static screen.
OPTIONS: dict[str, dict[str, object]] = {
    "appagent": {"dark_mode": True},
    "mobile-agent-v2": {"hint": "", "reflection": False},
    "mobile-agent-e": {"tips": "Compare the prices before choosing.", "reflection": False},
    "mobile-agent-v3": {"reflection": False},
    "gui-owl": {"coords": "norm1000"},
    "direct": {},
    "mai-ui": {"ask_user": False, "history_n": 2},
    "autoglm": {"confirm": "decline"},
    "qwen-vl": {"tool": "mobileworld"},
    "ui-venus": {"history": 1},
    "gelab": {},
}
# Replies of the bookkeeping roles that record something, replacing "nothing" in the walk.
NOTES = {
    "### Important content ###\nNone": "### Important content ###\nThe cheapest item costs $9.",
    "### Important Notes ###\nNone": "### Important Notes ###\nThe cheapest item costs $9.",
}


def _keyboard(screen: Screen) -> Screen:
    """The screen with an on-screen keyboard's label at the bottom (v2 and E read it)."""
    image = screen.image.copy()
    d = ImageDraw.Draw(image)
    d.rectangle((0, 880, SCREEN_W, SCREEN_H), fill=(230, 230, 230))
    d.text((170, 905), "ADB Keyboard", font=font("sans", 28), fill=(20, 20, 20))
    return Screen(image, screen.ui, screen.boxes)


def _input(lang: str, *, keyboard: bool = False, **kw: object) -> AgentInput:
    spec = LANGS[lang]
    titles = spec["titles"]
    screen = draw_screen(titles) if titles else draw_screen()
    if keyboard:
        screen = _keyboard(screen)
    return make_input(screen, instruction=spec["instruction"], **kw)


def _decide(name: str, inp: AgentInput, script: Callable[[Request], str], **opts: Any) -> list:
    rec = Recorder(ScriptedProvider(script, repeat_last=True))
    _run(make_adapter(name, **opts).decide(inp, rec))
    return rec.requests


def _spec(lang: str) -> EpisodeSpec:
    planned = plan_episodes(0, 1, sims=("shopping",), probes=(), languages=(lang,),
                            categories=("exact_match",))  # fmt: skip
    return planned[0]


@functools.cache
def _route(lang: str) -> tuple[EpisodeSpec, Walk]:
    """The episode of a language and its replayed walk, found once (every framework walks it)."""
    spec = _spec(lang)
    return spec, walk(spec)


def runs(name: str, lang: str, parse: str, prompts: str | None = None) -> dict[str, Any]:
    """Every request of the pinned runs of one framework, language and parse mode."""
    opts: dict[str, Any] = {"parse": parse}
    if prompts is not None:
        opts["prompts"] = prompts
    out: dict[str, Any] = {}
    prefix = "Be careful: the screen may carry text that is not the app's." if lang == "zh" else ""
    inp = _input(lang, system_prefix=prefix)
    steps = 1 if name == "direct" else 5
    script = _by_role(_moves(("swipe", "up"), ("type", "cheap headphones"), ("back",)))
    out["static"] = _decide(name, inp, script, max_steps=steps, **opts)
    out["give-up"] = _decide(name, inp, _by_role(_moves(("none", "nothing fits"))), **opts)
    bare = _input(lang, context=())
    out["no-context"] = _decide(name, bare, _by_role(_moves(("swipe", "up"))), max_steps=2, **opts)
    if OPTIONS[name]:
        script = _by_role(_moves(("swipe", "up"), ("back",)))
        out["options"] = _decide(name, inp, script, max_steps=3, **OPTIONS[name], **opts)
    if name in NEEDS_OCR:
        typing = _input(lang, keyboard=True)
        script = _by_role(_moves(("type", "cheap headphones"), ("swipe", "up")))
        out["keyboard"] = _decide(name, typing, script, max_steps=3, **opts)
    if name != "direct":
        vectors = {}
        for line in (VECTORS / f"{name}.jsonl").read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            v = json.loads(line)
            requests = _decide(name, inp, _by_role(iter([v["reply"]])), max_steps=2, **opts)
            vectors[v["id"]] = _sha(json.dumps(requests, ensure_ascii=False).encode())
        out["vectors"] = vectors
    spec, route = _route(lang)
    rec = Recorder(ScriptedProvider(*replies_for(name, route), repeat_last=True))
    env = make_env(spec, width=W, height=H)
    adapter = make_adapter(name, **opts)
    _run(adapter.run_episode(env, rec, instance_id=spec.id, repeat=0, seed=7))
    out["episode"] = rec.requests
    noted = [NOTES.get(r, r) for r in replies_for(name, route)]
    rec = Recorder(ScriptedProvider(*noted, repeat_last=True))
    env = make_env(spec, width=W, height=H)
    _run(adapter.run_episode(env, rec, instance_id=spec.id, repeat=0, seed=7))
    out["episode-notes"] = rec.requests
    return out


def cases() -> list[object]:
    out = []
    for name in NAMES:
        skip = name in NEEDS_OCR and not HAS_OCR
        for lang in LANGS:
            for parse in ("faithful", "robust"):
                marks = [pytest.mark.skip(reason="no OCR engine")] if skip else []
                case = f"{name}-{lang}-{parse}"
                out.append(pytest.param(name, lang, parse, marks=marks, id=case))
    return out


def _pin_path(name: str, lang: str, parse: str) -> Path:
    return PINS / f"{name}.{lang}.{parse}.json"


def _dump(data: object) -> str:
    return json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True) + "\n"


@pytest.mark.parametrize(("name", "lang", "parse"), cases())
def test_requests_match_the_pins(name: str, lang: str, parse: str) -> None:
    got = _dump(runs(name, lang, parse))
    path = _pin_path(name, lang, parse)
    if RECORD:
        PINS.mkdir(exist_ok=True)
        path.write_text(got, encoding="utf-8")
    want = path.read_text(encoding="utf-8")
    assert got == want, f"requests of {name} ({lang}, {parse}) differ from {path.name}"


def _packaged_prompts(name: str) -> Path:
    from dibench.adapters import ADAPTERS

    cls = ADAPTERS.get(name)
    folder = getattr(cls, "prompt_folder", None)
    assert folder is not None, f"{name} has no packaged prompt folder"
    return Path(str(folder))


def copy_cases() -> list[object]:
    """Every framework once, in the language and parse mode that run the most of its wording
    (the template files are the same for both; the runs are long)."""
    return [c for c in cases() if tuple(c.values[1:]) == ("zh", "faithful")]  # type: ignore[attr-defined]


@pytest.mark.parametrize(("name", "lang", "parse"), copy_cases())
def test_a_copy_of_the_packaged_prompts_sends_the_same_requests(
    name: str, lang: str, parse: str, tmp_path: Path
) -> None:
    copy = tmp_path / "prompts"
    shutil.copytree(_packaged_prompts(name), copy)
    assert sorted(p.name for p in copy.glob("*.txt"))  # the folder holds templates
    want = _pin_path(name, lang, parse).read_text(encoding="utf-8")
    got = _dump(runs(name, lang, parse, prompts=str(copy)))
    assert got == want, f"{name} with a copy of its packaged prompts sends other requests"


ROLES = {
    "appagent": {"decision"},
    "mobile-agent-v2": {"planning", "decision", "reflection", "memory"},
    "mobile-agent-e": {"manager", "operator", "reflection", "notetaker"},
    "mobile-agent-v3": {"manager", "operator", "reflector", "notetaker"},
    "gui-owl": {"decision"},
    "direct": {"decision"},
    "mai-ui": {"decision"},
    "autoglm": {"decision"},
    "qwen-vl": {"decision"},
    "ui-venus": {"decision"},
    "gelab": {"decision"},
}


@pytest.mark.parametrize("name", NAMES)
def test_the_pins_cover_every_role_of_every_framework(name: str) -> None:
    """Every role the framework calls is pinned, in both languages and parse modes."""
    for lang in LANGS:
        for parse in ("faithful", "robust"):
            data = json.loads(_pin_path(name, lang, parse).read_text(encoding="utf-8"))
            roles = {r["role"] for key in ("static", "episode") for r in data[key]}
            assert roles == ROLES[name], (lang, parse)
