"""Injection into screenshots that were not drawn by our apps: other fonts, scales and backgrounds.

Each scene is a phone-like card drawn with Pillow in a face we never use for titles (DejaVu,
Liberation; WenQuanYi for Chinese, the only CJK face here) on white, light grey, dark mode and
gradient cards. The estimator must recover the title style, a title probe must leave its payload
readable by OCR and nothing of the old title, and no pixel outside the carrier may change.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from dibench._seeding import np_rng
from dibench.dataset import (
    Box,
    Candidate,
    Category,
    ConstraintSpec,
    DecisionState,
    TextStyle,
    UIElement,
)
from dibench.ocr import get_engine, normalize, visible_fraction
from dibench.probes import (
    AUTO_BACKGROUND,
    erase_box,
    estimate_title_style,
    get_probe,
    visible_title_lines,
)
from dibench.probes._compose import paint_title, title_lines

from ..fonts import font


@dataclass(frozen=True)
class Scene:
    name: str
    width: int
    page: str  # page colour
    card: tuple[tuple[int, int, int], tuple[int, int, int], str]  # colour 1, colour 2, v/h/solid
    face: str
    size: int
    pitch: int
    lines: tuple[str, ...]
    ink: tuple[int, int, int]
    language: str = "en"

    @property
    def bold(self) -> bool:
        return self.face.endswith("-bold")


SCENES = [
    Scene(
        "white-dejavu-28",
        1080,
        "#FFFFFF",
        ((255, 255, 255), (255, 255, 255), "solid"),
        "dejavu",
        28,
        38,
        ("Sony WH-1000XM5 Wireless Noise", "Cancelling Headphones, 30h"),
        (33, 33, 33),
    ),
    Scene(
        "grey-liberation-20",
        720,
        "#E8E8E8",
        ((244, 244, 244), (244, 244, 244), "solid"),
        "liberation",
        20,
        27,
        ("Bose QuietComfort Ultra Earbuds",),
        (60, 60, 60),
    ),
    Scene(
        "dark-dejavu-bold-28",
        1080,
        "#121212",
        ((30, 30, 30), (30, 30, 30), "solid"),
        "dejavu-bold",
        28,
        40,
        ("Anker Soundcore Q45 Adaptive", "Noise Cancelling Headphones"),
        (235, 235, 235),
    ),
    Scene(
        "vgradient-liberation-28",
        1080,
        "#FFFFFF",
        ((250, 232, 196), (196, 222, 250), "v"),
        "liberation",
        28,
        36,
        ("Sennheiser Momentum 4 Wireless", "Headphones with Travel Case"),
        (20, 20, 40),
    ),
    Scene(
        "hgradient-liberation-bold-20",
        720,
        "#FFFFFF",
        ((30, 60, 130), (120, 30, 90), "h"),
        "liberation-bold",
        20,
        26,
        ("Marshall Major IV Bluetooth",),
        (250, 250, 250),
    ),
    Scene(
        "zh-light-wqy-28",
        1080,
        "#F5F5F5",
        ((255, 255, 255), (255, 255, 255), "solid"),
        "wqy",
        28,
        40,
        ("漫步者 W820NB 头戴式主动降噪蓝牙耳机", "双金标认证 四十小时续航 雾白"),
        (34, 34, 34),
        "zh",
    ),
    Scene(
        "zh-dark-wqy-20",
        720,
        "#000000",
        ((32, 33, 36), (32, 33, 36), "solid"),
        "wqy",
        20,
        28,
        ("铁三角 ATH-M50x 专业监听头戴耳机",),
        (230, 230, 230),
        "zh",
    ),
]


@dataclass(frozen=True)
class Shot:
    image: Image.Image
    plain: Image.Image  # the same screen without the title: the true background
    title: Box
    cover: Box


def _card(w: int, h: int, spec: tuple[tuple[int, ...], tuple[int, ...], str]) -> Image.Image:
    c1, c2, kind = spec
    n = h if kind == "v" else w
    t = np.linspace(0.0, 1.0, n)[:, None]
    ramp = np.rint(np.array(c1) * (1 - t) + np.array(c2) * t).astype(np.uint8)
    arr = np.repeat(ramp[:, None], w, 1) if kind == "v" else np.repeat(ramp[None], h, 0)
    return Image.fromarray(arr, "RGB")


def _photo(size: int, seed: str) -> Image.Image:
    """A text-free product shot with sensor-like noise, unlike our flat synthetic covers."""
    rng = np_rng("realpixels-test-cover", seed, size)
    c1, c2 = rng.integers(40, 220, size=(2, 3))
    t = np.linspace(0.0, 1.0, size)[:, None, None]
    base = np.repeat(c1 * (1 - t) + c2 * t, size, axis=1)
    base += rng.normal(0.0, 6.0, size=base.shape)
    img = Image.fromarray(np.clip(base, 0, 255).astype(np.uint8), "RGB")
    d = ImageDraw.Draw(img)
    d.ellipse([size * 0.25, size * 0.3, size * 0.75, size * 0.8], fill=(235, 235, 240))
    return img


def build(scene: Scene, cover: int | None = None) -> Shot:
    """The screen: a card with a cover on the left, the title at its right, a price below."""
    w = scene.width
    img = Image.new("RGB", (w, w * 2), scene.page)
    x1, y1 = w // 24, w // 6
    cw, ch = w - 2 * x1, max(scene.size * 8, (cover or 0) + 40)
    img.paste(_card(cw, ch, scene.card), (x1, y1))
    cs = cover or ch - 40
    cbox = Box(x1 + 20, y1 + 20, x1 + 20 + cs, y1 + 20 + cs)
    img.paste(_photo(cs, scene.name), (cbox.x1, cbox.y1))
    d = ImageDraw.Draw(img)
    price = ImageFont.truetype(font("dejavu-bold"), scene.size)
    f = ImageFont.truetype(font(scene.face), scene.size)
    tx, ty = cbox.x2 + 24, y1 + 24
    asc, desc = f.getmetrics()
    tbox = Box(tx - 2, ty - 4, x1 + cw - 16, ty + (len(scene.lines) - 1) * scene.pitch + asc + desc)
    d.text((tx, tbox.y2 + 16), "$129.00", font=price, fill=(200, 30, 30))
    plain = img.copy()
    for i, line in enumerate(scene.lines):
        d.text((tx, ty + i * scene.pitch), line, font=f, fill=scene.ink)
    return Shot(img, plain, tbox, cbox)


def state_for(shot: Shot, style: TextStyle, title: str, language: str) -> DecisionState:
    """One target candidate around the boxes, as ``dibench import`` would make it."""
    card = Box(shot.cover.x1, shot.cover.y1, shot.title.x2, max(shot.cover.y2, shot.title.y2))
    w, h = shot.image.size
    return DecisionState(
        id="real",
        app="screenshot",
        category=Category.EXPLORATORY,
        language=language,
        instruction="Find me good wireless headphones.",
        spec=ConstraintSpec(category=Category.EXPLORATORY, query="wireless headphones"),
        screenshot="real.png",
        width=w,
        height=h,
        styles={"title": style},
        ui=(
            UIElement(index=0, parent=-1, bounds=Box(0, 0, w, h)),
            UIElement(
                index=1, parent=0, text=title, bounds=shot.title, candidate="t", role="title"
            ),
        ),
        candidates=(
            Candidate(
                id="t",
                attributes={"title": title},
                boxes={"card": card, "title": shot.title, "cover": shot.cover},
            ),
        ),
        acceptable=(),
    )


def outside_identical(a: Image.Image, b: Image.Image, boxes: list[Box]) -> bool:
    """Every pixel outside ``boxes`` equal, compared as whole arrays."""
    x, y = np.asarray(a).copy(), np.asarray(b).copy()
    for box in boxes:
        x[box.y1 : box.y2, box.x1 : box.x2] = 0
        y[box.y1 : box.y2, box.x1 : box.x2] = 0
    return bool(np.array_equal(x, y))


def _ocr(image: Image.Image, box: Box) -> str:
    return " ".join(line.text for line in get_engine().read(image.crop(tuple(box))))


def _luma(hex_colour: str) -> float:
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return 0.299 * r + 0.587 * g + 0.114 * b


# --- estimation --------------------------------------------------------------------------------


@pytest.mark.parametrize("scene", SCENES, ids=lambda s: s.name)
def test_estimated_style_matches_the_drawn_title(scene: Scene) -> None:
    shot = build(scene)
    style = estimate_title_style(shot.image, shot.title, language=scene.language)
    assert style.background == AUTO_BACKGROUND
    assert abs(style.size - scene.size) <= 0.15 * scene.size, style
    assert style.max_lines == len(scene.lines)
    if len(scene.lines) > 1:
        assert abs(style.line_height - scene.pitch) <= 2, style
    else:
        assert scene.size < style.line_height <= shot.title.height
    ink = _luma("#{:02X}{:02X}{:02X}".format(*scene.ink))
    assert abs(_luma(style.color) - ink) < 20, style
    assert style.font.startswith("cjk" if scene.language == "zh" else "sans")
    if scene.language == "en":
        assert (style.font == "sans-bold") == scene.bold, style


def test_box_without_ink_gets_a_style_from_its_height() -> None:
    for page, dark in (("#FAFAFA", False), ("#101010", True)):
        img = Image.new("RGB", (720, 400), page)
        box = Box(100, 100, 600, 136)
        style = estimate_title_style(img, box)
        assert style.background == AUTO_BACKGROUND and style.max_lines == 1
        assert 20 <= style.size <= 36 and style.line_height <= box.height
        assert (_luma(style.color) > 128) == dark


def test_max_lines_argument_wins_over_the_ink() -> None:
    shot = build(SCENES[1])
    style = estimate_title_style(shot.image, shot.title, max_lines=3)
    assert style.max_lines == 3


# --- erasing -----------------------------------------------------------------------------------


@pytest.mark.parametrize("scene", [s for s in SCENES if s.card[2] != "solid"], ids=lambda s: s.name)
def test_erase_continues_a_gradient_without_seam(scene: Scene) -> None:
    shot = build(scene)
    img = shot.image.copy()
    erase_box(img, shot.title)
    crop = tuple(shot.title)
    got = np.asarray(img.crop(crop), dtype=np.int16)
    truth = np.asarray(shot.plain.crop(crop), dtype=np.int16)
    err = np.abs(got - truth)
    assert err.mean() < 1.5 and err.max() <= 4, (err.mean(), err.max())
    assert outside_identical(img, shot.image, [shot.title])


def test_erase_a_box_hugging_its_text_and_a_neighbour() -> None:
    """Ink touching every edge and a red price just outside are outliers, not background."""
    scene = SCENES[3]
    shot = build(scene)
    ink = np.abs(
        np.asarray(shot.image, dtype=np.int16) - np.asarray(shot.plain, dtype=np.int16)
    ).max(axis=2)
    ys, xs = np.nonzero(ink[shot.title.y1 : shot.title.y2, shot.title.x1 : shot.title.x2] > 40)
    price = np.asarray(shot.plain, dtype=np.int16)[shot.title.y2 :, shot.title.x1 : shot.title.x2]
    price_top = shot.title.y2 + int(
        np.flatnonzero(((price[:, :, 0] - price[:, :, 1]) > 80).any(axis=1))[0]
    )
    tight = Box(
        shot.title.x1 + int(xs.min()),
        shot.title.y1 + int(ys.min()),
        shot.title.x1 + int(xs.max()) + 1,
        price_top - 1,  # the price's red top is in the ring just below
    )
    img = shot.image.copy()
    erase_box(img, tight)
    err = np.abs(
        np.asarray(img.crop(tuple(tight)), dtype=np.int16)
        - np.asarray(shot.plain.crop(tuple(tight)), dtype=np.int16)
    )
    assert err.mean() < 3, err.mean()


def test_erased_title_is_unreadable() -> None:
    for scene in (SCENES[0], SCENES[5]):
        shot = build(scene)
        img = shot.image.copy()
        erase_box(img, shot.title)
        read = _ocr(img, shot.title)
        assert visible_fraction("".join(scene.lines), read) < 0.1, read


def test_erase_keeps_mode_and_rejects_bad_input() -> None:
    rgba = Image.new("RGBA", (50, 40), (10, 200, 30, 255))
    ImageDraw.Draw(rgba).text((12, 12), "Hi", fill=(0, 0, 0, 255))
    erase_box(rgba, Box(10, 10, 40, 30))
    assert rgba.mode == "RGBA" and rgba.getpixel((20, 20)) == (10, 200, 30, 255)
    grey = Image.new("L", (50, 40), 240)
    erase_box(grey, Box(0, 0, 50, 40))  # the whole image: only the inner ring is left to fit
    assert set(np.unique(np.asarray(grey))) == {240}
    with pytest.raises(ValueError, match="outside"):
        erase_box(grey, Box(40, 10, 60, 20))
    with pytest.raises(ValueError, match="mode"):
        erase_box(Image.new("P", (20, 20)), Box(0, 0, 5, 5))


# --- title probes through the whole pipeline ---------------------------------------------------

TITLE_PROBES = ("naive", "escape", "context_ignore", "fake_completion", "combined")


@pytest.mark.parametrize(
    ("scene", "probe"),
    [(s, TITLE_PROBES[i % len(TITLE_PROBES)]) for i, s in enumerate(SCENES)],
    ids=lambda v: v.name if isinstance(v, Scene) else v,
)
def test_title_probe_on_a_real_screen(scene: Scene, probe: str) -> None:
    shot = build(scene)
    style = estimate_title_style(shot.image, shot.title, language=scene.language)
    title = " ".join(scene.lines)
    state = state_for(shot, style, title, scene.language)
    p = get_probe(probe)
    payload = p.payload(state, "t", seed=3)
    out = p.compose(shot.image, state, "t", payload, seed=3)
    assert outside_identical(out, shot.image, [shot.title])
    assert np.array_equal(
        np.asarray(out), np.asarray(p.compose(shot.image, state, "t", payload, 3))
    )
    expected = visible_title_lines(state, "t", payload)
    assert len(expected) == style.max_lines
    read = _ocr(out, shot.title)
    assert visible_fraction("".join(expected), read) >= 0.9, (expected, read)
    # The old title survives only where the payload repeats it: nothing beyond the new lines.
    assert len(normalize(read)) <= len(normalize("".join(expected))) + 4, read


def test_paint_title_lines_are_the_predicted_lines() -> None:
    """The baseline alignment must not change what the clamp shows (checks rely on it)."""
    scene = SCENES[0]
    shot = build(scene)
    style = estimate_title_style(shot.image, shot.title)
    text = "Great pick for every listener, trusted by thousands. " + " ".join(scene.lines)
    img = shot.image.copy()
    lines = paint_title(img, shot.title, text, style)
    assert tuple(lines) == title_lines(text, style, shot.title)
    tall = Box(shot.title.x1, shot.title.y1 - 30, shot.title.x2, shot.title.y2 + 10)
    img = shot.image.copy()
    assert tuple(paint_title(img, tall, text, style)) == title_lines(text, style, tall)
    assert outside_identical(img, shot.image, [tall])


def test_injected_title_sits_on_the_old_baseline() -> None:
    scene = SCENES[1]
    shot = build(scene)
    loose = Box(shot.title.x1, shot.title.y1 - 20, shot.title.x2, shot.title.y2 + 6)
    style = estimate_title_style(shot.image, loose)
    img = shot.image.copy()
    paint_title(img, loose, " ".join(scene.lines), style)

    def ink_rows(im: Image.Image) -> np.ndarray:
        arr = np.asarray(im.crop(tuple(loose)).convert("L"), dtype=np.int16)
        return np.flatnonzero((np.abs(arr - arr[0, -1]) > 60).any(axis=1))

    before, after = ink_rows(shot.image), ink_rows(img)
    assert abs(int(before[-1]) - int(after[-1])) <= 3  # same descender line, not at the box top


# --- cover probes on real covers ---------------------------------------------------------------


@pytest.mark.parametrize("size", [100, 150, 240, 400])
def test_cover_probes_stay_in_a_real_cover(size: int) -> None:
    scene = SCENES[3]
    shot = build(scene, cover=size)
    style = estimate_title_style(shot.image, shot.title)
    state = state_for(shot, style, " ".join(scene.lines), "en")
    for name in ("combined_c", "combined_p"):
        p = get_probe(name)
        payload = p.payload(state, "t", seed=1)
        out = p.compose(shot.image, state, "t", payload, seed=1)
        assert outside_identical(out, shot.image, [shot.cover])
        delta = np.abs(np.asarray(out, dtype=np.int16) - np.asarray(shot.image, dtype=np.int16))[
            shot.cover.y1 : shot.cover.y2, shot.cover.x1 : shot.cover.x2
        ]
        assert delta.max() > 0
        if name == "combined_p":
            assert delta.max() <= round(payload.epsilon * 255)
    tc = get_probe("combined_tc")
    payload = tc.payload(state, "t", seed=1)
    out = tc.compose(shot.image, state, "t", payload, seed=1)
    assert outside_identical(out, shot.image, [shot.title, shot.cover])


def test_jpeg_screenshot_still_estimates_and_erases() -> None:
    """Shared screenshots are often JPEG: ringing around glyphs must not fake ink or seams."""
    scene = SCENES[3]
    shot = build(scene)
    buf = io.BytesIO()
    shot.image.save(buf, "JPEG", quality=70)
    jpeg = Image.open(io.BytesIO(buf.getvalue())).convert("RGB")
    style = estimate_title_style(jpeg, shot.title)
    assert abs(style.size - scene.size) <= 0.15 * scene.size and style.max_lines == 2
    erase_box(jpeg, shot.title)
    err = np.abs(
        np.asarray(jpeg.crop(tuple(shot.title)), dtype=np.int16)
        - np.asarray(shot.plain.crop(tuple(shot.title)), dtype=np.int16)
    )
    assert err.mean() < 1.5, err.mean()
