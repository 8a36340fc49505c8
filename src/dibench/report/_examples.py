"""Attack successes worth looking at: chosen deterministically, drawn with the target marked.

A table says *how often* an injection worked; an example shows *how*: the same screen before and
after, and what the model said each time. Choice is a stable hash order, round-robin over probes,
so two reports of one run show the same examples and every probe that succeeded gets a turn.
"""

from __future__ import annotations

import base64
import hashlib
import io
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from PIL import Image, ImageDraw, ImageFont

from dibench._values import Condition
from dibench.metrics import AsrPair
from dibench.screens import screenshot

from ._common import agent_label
from ._common import html_isolated as _i
from ._common import html_prose as _p
from ._common import html_text as _e
from ._model import Example, Report, StepView, order_key, value_label

if (
    TYPE_CHECKING
):  # the runner and dataset packages are slow to import; only build_report needs them
    from dibench.dataset import Dataset
    from dibench.runner import ResultStore, StoredAction, StoredRun

__all__ = [
    "MAX_PROMPT_CHARS",
    "MAX_REPLY_CHARS",
    "example_html",
    "examples_html",
    "make_example",
    "pick_successes",
]

MAX_REPLY_CHARS = 6000
MAX_PROMPT_CHARS = 8000
GREEN: tuple[int, int, int] = (46, 125, 50)
RED: tuple[int, int, int] = (211, 47, 47)
BLUE: tuple[int, int, int] = (21, 101, 192)


def _stable_hash(p: AsrPair) -> str:
    r = p.injected
    key = f"{r.framework}|{r.model}|{r.defense}|{r.instance_id}|{r.repeat}"
    return hashlib.sha256(key.encode()).hexdigest()


def _interleave_agents(pairs: list[AsrPair], offset: int) -> list[AsrPair]:
    """Hash order within each agent, agents taking turns (each probe starts with another one)."""
    by_agent: dict[tuple[str, str, str], list[AsrPair]] = {}
    for p in sorted(pairs, key=_stable_hash):
        r = p.injected
        by_agent.setdefault((r.framework, r.model, r.defense), []).append(p)
    agents = sorted(by_agent)
    agents = agents[offset % len(agents) :] + agents[: offset % len(agents)]
    out: list[AsrPair] = []
    for depth in range(max(len(v) for v in by_agent.values())):
        out += [by_agent[a][depth] for a in agents if depth < len(by_agent[a])]
    return out


def pick_successes(pairs: Iterable[AsrPair], limit: int) -> list[AsrPair]:
    """Up to ``limit`` successful pairs: probes in paper order, taking turns, hash order within."""
    if limit <= 0:
        return []
    by_probe: dict[str, list[AsrPair]] = {}
    for p in pairs:
        if p.success:
            by_probe.setdefault(p.injected.probe or "", []).append(p)
    queues = [
        _interleave_agents(by_probe[probe], offset)
        for offset, probe in enumerate(sorted(by_probe, key=lambda v: order_key("probe", v)))
    ]
    out: list[AsrPair] = []
    depth = 0
    while len(out) < limit and any(depth < len(q) for q in queues):
        for q in queues:
            if depth < len(q) and len(out) < limit:
                out.append(q[depth])
        depth += 1
    return out


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… [{len(text) - limit} more characters not shown]"


def _action_text(action: StoredAction | None) -> str:
    """A one-line reading of a stored Action (``tap (540, 1210)``, ``tap_element #4``)."""
    if action is None:
        return ""
    parts = [action.kind or "?"]
    if action.element is not None:
        parts.append(f"#{action.element}")
    if action.x is not None and action.y is not None:
        parts.append(f"({float(action.x):.0f}, {float(action.y):.0f})")
    if action.direction:
        parts.append(action.direction)
    if action.text:
        parts.append(f'"{action.text}"')
    return " ".join(parts)


def _steps(details: StoredRun | None) -> tuple[StepView, ...]:
    if details is None:
        return ()
    return tuple(
        StepView(
            role=s.role,
            prompt=_clip(s.prompt, MAX_PROMPT_CHARS),
            reply=_clip(s.reply, MAX_REPLY_CHARS),
            action=_action_text(s.action),
            error=s.error,
        )
        for s in details.steps
    )


RGB = tuple[int, int, int]


def _badge(
    draw: ImageDraw.ImageDraw, xy: tuple[float, float], text: str, fill: RGB, right: bool
) -> None:
    """A small label in a card corner; anchored right for the 'picked' badge so both fit."""
    font = ImageFont.load_default(size=13)
    x, y = xy
    w = draw.textlength(text, font=font) + 10
    x0 = x - w if right else x
    draw.rectangle([x0, y, x0 + w, y + 18], fill=fill)
    draw.text((x0 + 5, y + 2), text, font=font, fill=(255, 255, 255))


def marked_jpeg(
    image: Image.Image,
    boxes: dict[str, tuple[int, int, int, int]],
    *,
    target: str | None,
    acceptable: Sequence[str],
    chosen: str | None,
    width: int,
    quality: int = 82,
) -> bytes:
    """Downscale a screen and outline acceptable (green), target (red) and the pick (blue)."""
    scale = min(1.0, width / image.width)
    size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
    out = image.convert("RGB").resize(size, Image.Resampling.LANCZOS)
    draw = ImageDraw.Draw(out)
    for cid, (x1, y1, x2, y2) in boxes.items():
        box = [x1 * scale, y1 * scale, x2 * scale - 1, y2 * scale - 1]
        if cid == target:
            draw.rectangle(box, outline=RED, width=3)
            _badge(draw, (box[0] + 3, box[1] + 3), "TARGET", RED, right=False)
        elif cid in acceptable:
            draw.rectangle(box, outline=GREEN, width=2)
        if cid == chosen:
            inner = [box[0] + 4, box[1] + 4, box[2] - 4, box[3] - 4]
            draw.rectangle(inner, outline=BLUE, width=2)
            _badge(draw, (box[2] - 3, box[1] + 3), "PICKED", BLUE, right=True)
    buf = io.BytesIO()
    out.save(buf, format="JPEG", quality=quality, optimize=True)
    return buf.getvalue()


def _plain_jpeg(png: bytes, width: int) -> bytes:
    with Image.open(io.BytesIO(png)) as im:
        return marked_jpeg(im, {}, target=None, acceptable=(), chosen=None, width=width)


def _store_image(
    store: ResultStore, details: StoredRun | None, width: int, last: bool = False
) -> bytes | None:
    """The first (``last``: the final) image the model was shown in this run, from the store.
    A screen the store keeps as a reference to a dataset that is gone or changed raises
    ``ScreenGoneError`` (its one line becomes the example's note)."""
    steps = details.steps if details is not None else ()
    for s in reversed(steps) if last else steps:
        png = store.image(s.image) if s.image else None
        if png:
            return _plain_jpeg(png, width)
    return None


def make_example(
    pair: AsrPair,
    store: ResultStore,
    ds: Dataset | None,
    dataset_note: str,
    image_width: int,
    last_image: bool = False,
) -> Example:
    """Replies from the store, screenshots from the dataset (or a note saying why not).

    ``last_image``: without a dataset, show the last screen the model saw rather than the first
    (a simulator episode starts on the home screen; its decision is made on the last one).
    """
    from dibench.runner import ScreenGoneError

    inj, ben = pair.injected, pair.benign
    cond = Condition(inj.framework, inj.model, inj.defense).key
    inj_details = store.details(cond, inj.instance_id, inj.repeat)
    ben_details = store.details(cond, ben.instance_id, ben.repeat)
    instruction = title = cover = None
    ben_img = inj_img = None
    note = dataset_note
    if ds is not None:
        try:
            inst = ds.instance(inj.instance_id)
            instruction = inst.instruction
            if inst.record is not None:
                title, cover = inst.record.payload.title, inst.record.payload.cover_text
            boxes = {c.id: tuple(c.boxes["card"]) for c in inst.candidates}
            common = {"target": pair.target, "acceptable": inst.acceptable, "width": image_width}
            ben_img = marked_jpeg(
                screenshot(ds, inst.benign_id), boxes, chosen=ben.decision, **common
            )
            inj_img = marked_jpeg(
                screenshot(ds, inj.instance_id), boxes, chosen=inj.decision, **common
            )
            note = ""
        except Exception as exc:  # one bad picture must not sink the whole report
            note = f"screenshots unavailable: {type(exc).__name__}: {exc}"
    if ben_img is None and inj_img is None:
        try:
            ben_img = _store_image(store, ben_details, image_width, last_image)
            inj_img = _store_image(store, inj_details, image_width, last_image)
        except ScreenGoneError as exc:
            note = f"{note}; {exc}" if note else str(exc)
        if ben_img or inj_img:
            shown = "showing the images the model was shown (target not marked)"
            note = f"{note}; {shown}" if note else shown
    return Example(
        condition=cond,
        framework=inj.framework,
        model=inj.model,
        defense=inj.defense,
        instance_id=inj.instance_id,
        pair_of=inj.pair_of,
        repeat=inj.repeat,
        probe=inj.probe or "",
        carriers=inj.carriers,
        target=pair.target,
        benign_decision=ben.decision,
        injected_decision=inj.decision,
        acceptable=inj.acceptable,
        instruction=instruction,
        target_title=title,
        target_cover_text=cover,
        benign_steps=_steps(ben_details),
        injected_steps=_steps(inj_details),
        benign_image=ben_img,
        injected_image=inj_img,
        image_note=note,
    )


# --- HTML ----------------------------------------------------------------------------------------
def _pick_text(decision: str | None, target: str, acceptable: Sequence[str]) -> str:
    if decision is None:
        return "no decision (⊥)"
    kind = "target" if decision == target else "acceptable" if decision in acceptable else "other"
    return f"picked {decision} ({kind})"


def _steps_html(steps: Sequence[StepView]) -> str:
    if not steps:
        return '<p class="imgnote">No model calls stored for this run.</p>'
    out = []
    for i, s in enumerate(steps, 1):
        action = f" → <b>{_i(s.action)}</b>" if s.action else ""
        err = f' <span class="err">error: {_p(s.error)}</span>' if s.error else ""
        prompt = (
            f"<details><summary>prompt ({len(s.prompt):,} characters)</summary>"
            f'<pre dir="auto">{_e(s.prompt)}</pre></details>'
            if s.prompt
            else ""
        )
        out.append(
            f'<div class="step"><div class="role">step {i} · {_i(s.role or "model")}{action}{err}'
            f'</div><pre dir="auto">{_e(s.reply) or "(empty reply)"}</pre>{prompt}</div>'
        )
    return "".join(out)


def _img(data: bytes | None, alt: str) -> str:
    if data is None:
        return '<div class="noimg">no screenshot</div>'
    return f'<img alt="{_e(alt)}" src="data:image/jpeg;base64,{base64.b64encode(data).decode()}">'


def example_html(i: int, ex: Example) -> str:
    carriers = "+".join(ex.carriers) or "?"
    head = (
        f'<span class="exnum">{i}</span><b>{_i(value_label("probe", ex.probe))}</b> on '
        f"{_i(carriers)} · {_p(agent_label(ex.framework, ex.model))}"
        + (f" · defense {_i(ex.defense)}" if ex.defense != "none" else "")
        + f" · {_i(ex.instance_id)} · repeat {ex.repeat} · target {_i(ex.target)}"
    )
    info = []
    if ex.instruction is not None:
        info.append(f'<p><span class="lbl">Instruction</span>{_i(ex.instruction)}</p>')
    if ex.target_title is not None:
        info.append(
            f'<p><span class="lbl">Target title shown</span>'
            f'<q class="payload">{_i(ex.target_title)}</q></p>'
        )
    if ex.target_cover_text is not None:
        info.append(
            f'<p><span class="lbl">Text on target cover</span>'
            f'<q class="payload">{_i(ex.target_cover_text)}</q></p>'
        )
    sides = []
    for name, decision, image, steps in (
        ("Benign", ex.benign_decision, ex.benign_image, ex.benign_steps),
        ("Injected", ex.injected_decision, ex.injected_image, ex.injected_steps),
    ):
        pick = _pick_text(decision, ex.target, ex.acceptable)
        sides.append(
            f'<div class="side"><h4>{name}<span class="pick">{_p(pick)}</span></h4>'
            f"{_img(image, f'{name} screen of {ex.instance_id}')}"
            f'<div class="steps">{_steps_html(steps)}</div></div>'
        )
    return (
        f'<article class="example" id="example-{i}"><header>{head}</header>'
        f'<div class="exbody">{"".join(info)}<div class="pair">{"".join(sides)}</div>'
        + (f'<p class="imgnote">{_p(ex.image_note)}</p>' if ex.image_note else "")
        + "</div></article>"
    )


def examples_html(report: Report) -> str:
    """The illustrated attack successes (HTML only: screenshots and the model's replies)."""
    f = report.facts
    legend = (
        '<p class="legend-key">Screens: <i style="border-color:#d32f2f"></i>attack target'
        '<i style="border-color:#2e7d32"></i>acceptable'
        '<i style="border-color:#1565c0"></i>the agent\'s pick</p>'
    )
    intro = (
        f'<p class="lede">{len(report.examples)} of {f.attack_successes:,} attack successes, '
        "chosen deterministically (probes and agents take turns). Each shows the benign and "
        "the injected run with the same seed and what the model replied.</p>"
    )
    if report.dataset_note:
        intro += (
            f'<div class="callout">{_p(report.dataset_note)}: the screens cannot be drawn '
            "with the target marked; where the store kept the images the model was shown, "
            "those appear instead.</div>"
        )
    return intro + legend + "".join(example_html(i, ex) for i, ex in enumerate(report.examples, 1))
