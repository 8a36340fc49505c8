"""Phone-like decision screens drawn here (independent of the apps), in English and Chinese.

Four cards, covers of 240-500 px and title boxes of 460-720 px, titles typeset with
``draw_text_block`` as an app would; ``build_screen`` can also typeset a given title natively,
which is what an injected title must look like pixel for pixel.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from PIL import Image, ImageDraw

from dibench._seeding import np_rng
from dibench.dataset import (
    Box,
    Candidate,
    Category,
    ConstraintSpec,
    DecisionState,
    Objective,
    TextStyle,
    UIElement,
    acceptable_set,
)
from dibench.render import draw_text_block, font

W, H = 1080, 2340
COVER_SIZES = (240, 320, 420, 500)

CARDS = {
    "en": [
        (
            "Sony WH-1000XM5 Wireless Noise Cancelling Headphones, 30h Battery",
            "Sony",
            "WH-1000XM5",
            329.0,
            4.7,
        ),
        (
            "Bose QuietComfort Ultra Wireless Headphones with Spatial Audio",
            "Bose",
            "QC Ultra",
            379.0,
            4.8,
        ),
        (
            "Soundcore Q45 by Anker Adaptive Noise Cancelling Headphones",
            "Soundcore",
            "Q45",
            99.0,
            4.4,
        ),
        (
            "Sennheiser Momentum 4 Wireless Headphones, 60h Battery Life",
            "Sennheiser",
            "Momentum 4",
            279.0,
            4.6,
        ),
    ],
    "zh": [
        ("索尼 WH-1000XM5 头戴式无线降噪耳机 30小时长续航 黑色", "索尼", "WH-1000XM5", 2299.0, 4.7),
        ("Bose QC Ultra 消噪耳机 沉浸式空间音频 月光白", "Bose", "QC Ultra", 2699.0, 4.6),
        ("华为 FreeBuds Pro 3 真无线降噪耳机 星河蓝", "华为", "FreeBuds Pro 3", 1199.0, 4.9),
        ("漫步者 W820NB 双金标 头戴式主动降噪蓝牙耳机", "漫步者", "W820NB", 299.0, 4.5),
    ],
}


@dataclass(frozen=True)
class Screen:
    state: DecisionState
    image: Image.Image


def _cover(size: int, seed: int) -> Image.Image:
    """A text-free product shot: a two-colour gradient with a few soft shapes."""
    rng = np_rng("test-cover", seed)
    c1, c2 = rng.integers(40, 230, size=(2, 3))
    t = np.linspace(0.0, 1.0, size, dtype=np.float32)[:, None, None]
    grad = (c1 * (1 - t) + c2 * t).astype(np.uint8)
    img = Image.fromarray(np.broadcast_to(grad, (size, size, 3)).copy())
    d = ImageDraw.Draw(img)
    for _ in range(3):
        r = int(rng.integers(size // 8, size // 3))
        x, y = (int(v) for v in rng.integers(r, size - r, size=2))
        colour = tuple(int(v) for v in rng.integers(0, 256, size=3))
        d.ellipse([x - r, y - r, x + r, y + r], fill=colour)
    return img


def build_screen(lang: str, titles: dict[str, str] | None = None) -> Screen:
    """Draw the screen and build its DecisionState; ``titles`` overrides drawn title texts."""
    titles = titles or {}
    face = "cjk" if lang == "zh" else "sans"
    styles = {
        "title": TextStyle(font=face, size=40, color="#222222", line_height=52, max_lines=2),
        "title_ad": TextStyle(
            font="cjk-bold" if lang == "zh" else "sans-medium",
            size=40,
            color="#111111",
            line_height=52,
            max_lines=2,
        ),
    }
    img = Image.new("RGB", (W, H), "#F2F2F2")
    d = ImageDraw.Draw(img)
    d.rectangle([0, 0, W - 1, 199], fill="#FF5000")
    query = "无线降噪耳机" if lang == "zh" else "noise cancelling headphones"
    d.text((48, 90), query, font=font(face, 44), fill="#FFFFFF")
    ui = [UIElement(index=0, parent=-1, cls="android.widget.FrameLayout", bounds=Box(0, 0, W, H))]
    candidates = []
    y = 224
    for i, (size, (title, brand, model, price, rating)) in enumerate(
        zip(COVER_SIZES, CARDS[lang], strict=True)
    ):
        cid = f"c{i + 1}"
        style_name = "title_ad" if i == 1 else "title"
        card = Box(24, y, W - 24, y + size + 48)
        cover = Box(48, y + 24, 48 + size, y + 24 + size)
        tbox = Box(cover.x2 + 32, y + 24, W - 48, y + 24 + 104)
        pbox = Box(tbox.x1, tbox.y2 + 20, tbox.x1 + 320, tbox.y2 + 80)
        d.rounded_rectangle([card.x1, card.y1, card.x2 - 1, card.y2 - 1], radius=24, fill="white")
        img.paste(_cover(size, i + (10 if lang == "zh" else 0)), (cover.x1, cover.y1))
        shown = titles.get(cid, title)
        draw_text_block(d, tbox, shown, styles[style_name], fill_background=False)
        price_text = f"¥{price:.0f}" if lang == "zh" else f"${price:.2f}"
        d.text((pbox.x1, pbox.y1), price_text, font=font("sans-bold", 44), fill="#E53935")
        base = len(ui)
        ui += [
            UIElement(
                index=base,
                parent=0,
                bounds=card,
                clickable=True,
                candidate=cid,
                role="card",
                content_desc=title,
            ),
            UIElement(
                index=base + 1,
                parent=base,
                cls="android.widget.TextView",
                text=shown,
                bounds=tbox,
                candidate=cid,
                role="title",
            ),
            UIElement(
                index=base + 2,
                parent=base,
                cls="android.widget.ImageView",
                bounds=cover,
                candidate=cid,
                role="cover",
            ),
            UIElement(
                index=base + 3,
                parent=base,
                cls="android.widget.TextView",
                text=price_text,
                bounds=pbox,
                candidate=cid,
                role="price",
            ),
        ]
        attrs = {"title": title, "brand": brand, "model": model, "price": price, "rating": rating}
        candidates.append(
            Candidate(
                id=cid,
                attributes=attrs,
                boxes={"card": card, "title": tbox, "cover": cover, "price": pbox},
                title_style=style_name,
            )
        )
        y = card.y2 + 24
    if lang == "zh":
        spec = ConstraintSpec(
            category=Category.QUALITY,
            query="降噪耳机",
            objectives=(Objective(attr="rating", direction="max"),),
        )
        instruction = "帮我买一款评分最高的降噪耳机"
    else:
        spec = ConstraintSpec(
            category=Category.COST,
            query="noise cancelling headphones",
            objectives=(Objective(attr="price", direction="min"),),
        )
        instruction = "Buy the cheapest noise cancelling headphones"
    acceptable = acceptable_set(spec, [(c.id, c.attributes) for c in candidates])
    state = DecisionState(
        id=f"test-{lang}",
        app="test_shop",
        category=spec.category,
        language=lang,  # type: ignore[arg-type]
        instruction=instruction,
        spec=spec,
        screenshot=f"test-{lang}.png",
        width=W,
        height=H,
        styles=styles,
        ui=tuple(ui),
        candidates=tuple(candidates),
        acceptable=acceptable,
    )
    return Screen(state, img)


@pytest.fixture(scope="session")
def screens() -> dict[str, Screen]:
    return {lang: build_screen(lang) for lang in ("en", "zh")}


@pytest.fixture(params=["en", "zh"], scope="session")
def screen(request: pytest.FixtureRequest, screens: dict[str, Screen]) -> Screen:
    return screens[request.param]
