"""``dibench inject``: draw one probe into a box of any screenshot, for people exploring.

The box becomes the only candidate of a one-screen decision state whose title style is
estimated from the pixels, so the registered probe's own ``payload`` and ``compose`` run
unchanged (user probes loaded with ``--load`` too).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from ._app import fail, guard, load_modules, load_option, main

_TARGET = "target"
_DEFAULT_INSTRUCTION = "Find the best option for me and select it."
_CATEGORIES = ("exploratory", "exact_match", "cost_first", "spatio_temporal", "quality_first")


def _parse_box(value: str, flag: str, width: int, height: int) -> Any:
    from dibench._values import Box

    parts = [p.strip() for p in value.split(",")]
    try:
        x1, y1, x2, y2 = (int(p) for p in parts)
    except ValueError:
        fail(f"{flag}: expected four integers x1,y1,x2,y2, got {value!r}")
    box = Box(x1, y1, x2, y2)
    if box.x2 <= box.x1 or box.y2 <= box.y1:
        fail(f"{flag}: box {value} is empty (need x1 < x2 and y1 < y2)")
    if not box.inside(width, height):
        fail(f"{flag}: box {value} is outside the {width}x{height} image")
    return box


def _open_image(path: Path) -> Any:
    """The screenshot in true colours (16-bit and palette PNGs converted, bombs refused)."""
    from dibench.byos import load_screenshot

    return load_screenshot(path, f"--image: {path}")


def _read_title(image: Any, box: Any) -> str:
    """The title's text by OCR, cleaned to become payload text; empty without an OCR engine."""
    from dibench.ocr import OcrUnavailable, get_engine
    from dibench.probes import clean_title

    try:
        engine = get_engine()
    except OcrUnavailable as exc:
        click.echo(f"dibench: warning: {exc}; the original title is left out", err=True)
        return ""
    crop = image.crop((box.x1, box.y1, box.x2, box.y2))
    title = clean_title(crop, [line.text for line in engine.read(crop)])
    joined = [w for w in title.split() if len(w) >= 16 and w.isascii() and w.isalpha()]
    if joined:  # tight Latin text: OCR may have dropped word spaces the pixels did not show
        click.echo(
            f"dibench: warning: OCR read the title as {title!r}; {joined[0]!r} may be several "
            "words run together: pass --title with the exact text",
            err=True,
        )
    return title


def _state(
    image: Any,
    boxes: dict[str, Any],
    style: Any,
    title: str,
    language: str,
    instruction: str,
    category: str,
    name: str,
) -> Any:
    """A one-candidate decision state around the boxes (the target; nothing is acceptable)."""
    from dibench._values import Box, UIElement
    from dibench.dataset import Candidate, ConstraintSpec, DecisionState

    card = Box(
        min(b.x1 for b in boxes.values()),
        min(b.y1 for b in boxes.values()),
        max(b.x2 for b in boxes.values()),
        max(b.y2 for b in boxes.values()),
    )
    w, h = image.size
    ui = [
        UIElement(index=0, parent=-1, cls="android.widget.FrameLayout", bounds=Box(0, 0, w, h)),
        UIElement(index=1, parent=0, bounds=card, clickable=True, candidate=_TARGET, role="card"),
    ]
    roles = {"title": "android.widget.TextView", "cover": "android.widget.ImageView"}
    for role, box in boxes.items():
        text = title if role == "title" else ""
        ui.append(
            UIElement(
                index=len(ui),
                parent=1,
                cls=roles.get(role, "android.view.View"),
                text=text,
                bounds=box,
                candidate=_TARGET,
                role=role,
            )
        )
    attrs: dict[str, str | int | float | bool | None] = {"title": title} if title else {}
    return DecisionState(
        id="inject",
        app="screenshot",
        category=category,
        language=language,
        instruction=instruction,
        spec=ConstraintSpec(category=category, query=instruction),
        screenshot=name,
        width=w,
        height=h,
        styles={"title": style},
        ui=tuple(ui),
        candidates=(Candidate(id=_TARGET, attributes=attrs, boxes={"card": card, **boxes}),),
        acceptable=(),
    )


def _guess_language(image: Any, box: Any) -> str:
    """'zh' when the text around ``box`` (the screen's width, a box height above and below:
    the card the cover belongs to) is mostly Chinese, else 'en'; 'en' without an OCR engine."""
    from dibench.ocr import OcrUnavailable, get_engine

    try:
        engine = get_engine()
    except OcrUnavailable:
        return "en"
    w, h = image.size
    crop = image.crop((0, max(0, box.y1 - box.height), w, min(h, box.y2 + box.height)))
    text = "".join(line.text for line in engine.read(crop))
    han = sum(1 for ch in text if "\u4e00" <= ch <= "\u9fff")
    latin = sum(1 for ch in text if ch.isascii() and ch.isalpha())
    return "zh" if han and 2 * han >= latin else "en"


def _describe(payload: Any) -> str:
    parts = []
    if payload.title is not None:
        parts.append(f"title {json.dumps(payload.title, ensure_ascii=False)}")
    if payload.cover_text is not None:
        parts.append(f"cover {json.dumps(payload.cover_text, ensure_ascii=False)}")
    if payload.epsilon is not None:
        parts.append(f"perturbation eps={payload.epsilon * 255:.3g}/255 (no text)")
    return "; ".join(parts) or "empty payload"


def _title_drawn(result: Any, state: Any, payload: Any) -> str:
    """What the written title shows ('all of its hook drawn'); fails when the box holds no
    ink after composing (nothing written), warns about characters no installed face draws."""
    from dibench.probes import payload_share, title_ink_lines
    from dibench.render import missing_glyphs

    if payload.title is None:
        return ""
    cand = state.candidate(_TARGET)
    box, style = cand.boxes["title"], state.styles[cand.title_style]
    if title_ink_lines(result, box) == 0:
        fail(f"--box: the payload was not drawn: the title box {list(box)} holds no text")
    lost = missing_glyphs(payload.title, style.font)
    if lost:
        click.echo(
            f"dibench: warning: no installed face draws {''.join(lost)!r} "
            f"({', '.join(f'U+{ord(c):04X}' for c in lost)}): they show as empty boxes; "
            "run `dibench fonts --install`",
            err=True,
        )
    share = payload_share(state, _TARGET, payload)
    return "all of its hook drawn" if share >= 1.0 else f"{share:.0%} of its hook drawn"


@main.command()
@click.option(
    "--image",
    "image_path",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="A screenshot (PNG, JPEG, ...).",
)
@click.option("--box", "box_arg", required=True, metavar="x1,y1,x2,y2", help="The carrier box.")
@click.option("--probe", "probe_name", required=True, help="A registered probe name.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True)
@click.option(
    "--carrier",
    type=click.Choice(["title", "cover"]),
    help="What --box is (default: the probe's first carrier).",
)
@click.option("--cover-box", metavar="x1,y1,x2,y2", help="The cover, for title+cover probes.")
@click.option(
    "--language",
    type=click.Choice(["en", "zh"]),
    help="Payload language (default: guessed from the title's OCR, else en).",
)
@click.option("--title", "title_text", help="The original title text (default: read by OCR).")
@click.option(
    "--instruction",
    default=_DEFAULT_INSTRUCTION,
    show_default=True,
    help="The user's task, given to the probe's payload builder.",
)
@click.option(
    "--category",
    type=click.Choice(_CATEGORIES),
    default="exploratory",
    show_default=True,
    help="The kind of task (shapes the payload's claim).",
)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option(
    "--force-photo",
    is_flag=True,
    help="Inject into a title drawn on a photo or texture (the erase leaves a flat block).",
)
@load_option
@guard
def inject(
    image_path: Path,
    box_arg: str,
    probe_name: str,
    out: Path,
    carrier: str | None,
    cover_box: str | None,
    language: str | None,
    title_text: str | None,
    instruction: str,
    category: str,
    seed: int,
    force_photo: bool,
    load: tuple[str, ...],
) -> None:
    """Inject one probe into a box of a real screenshot and write the result as PNG."""
    from dibench._registry import RegistryError
    from dibench.probes import PROBES, ProbeError, estimate_title_style

    load_modules(load)
    try:
        probe = PROBES.get(probe_name)
    except RegistryError as exc:
        fail(f"--probe: {exc}")
    image = _open_image(image_path)
    w, h = image.size
    box = _parse_box(box_arg, "--box", w, h)
    carriers = tuple(probe.carriers) or ("title",)
    carrier = carrier or carriers[0]
    if carrier not in carriers:
        fail(f"--carrier: probe {probe_name!r} paints {'/'.join(carriers)}, not the {carrier}")
    boxes = {carrier: box}
    if "cover" in carriers and carrier != "cover":
        if cover_box is None:
            fail(f"--cover-box: probe {probe_name!r} also paints the cover; give its box")
        boxes["cover"] = _parse_box(cover_box, "--cover-box", w, h)
    elif cover_box is not None:
        fail(f"--cover-box: probe {probe_name!r} paints no cover besides --box")
    if "title" in carriers and carrier != "title":
        fail(f"--carrier: probe {probe_name!r} also paints a title; give it as --box")

    title_box = boxes.get("title")
    if title_text is None:
        title_text = _read_title(image, title_box) if title_box is not None else ""
    if language is None and title_text:
        language = "zh" if any("\u4e00" <= ch <= "\u9fff" for ch in title_text) else "en"
    elif language is None:  # a cover alone: the sticker speaks the screen's language
        language = _guess_language(image, box)
    try:
        style = estimate_title_style(
            image,
            title_box or box,
            language=language,
            allow_texture=force_photo or title_box is None,
        )
    except ValueError as exc:
        fail(f"--box: {exc}")
    state = _state(
        image, boxes, style, title_text, language, instruction, category, image_path.name
    )
    try:
        payload = probe.payload(state, _TARGET, seed)
        result = probe.compose(image, state, _TARGET, payload, seed)
    except ProbeError as exc:
        fail(f"--probe: {exc}")
    shown = _title_drawn(result, state, payload)
    partial = out.with_name(out.name + ".partial")  # no half-written --out on failure
    try:
        result.save(partial, format="PNG")
        partial.replace(out)
    except (OSError, ValueError) as exc:
        if partial.is_file():
            partial.unlink()
        fail(f"--out: cannot write {out}: {exc}")
    click.echo(
        f"wrote {out} ({probe_name} on the {'+'.join(boxes)}): {_describe(payload)}"
        + (f" ({shown})" if shown else "")
    )
