"""render_screen: complete screens whose boxes, UI tree and pixels agree with each other."""

from __future__ import annotations

import dataclasses
from functools import cache

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

from dibench.apps import CardContent, CoverSpec, ScreenContent
from dibench.dataset import Box
from dibench.render import RenderedScreen, draw_cover, render_screen

from .conftest import LAYOUTS, make_content


@cache
def _render(layout: str, lang: str, n: int = 6, blank_titles: bool = False) -> RenderedScreen:
    content = make_content(layout, lang, n)
    if blank_titles:
        content = _with_titles(content, lambda card: "")
    return render_screen(content)


def _with_titles(content: ScreenContent, title: object) -> ScreenContent:
    cards = tuple(dataclasses.replace(c, title=title(c)) for c in content.cards)  # type: ignore[operator]
    return dataclasses.replace(content, cards=cards)


def _px(img: Image.Image) -> np.ndarray:
    return np.asarray(img, dtype=np.int16)


def _overlap(a: Box, b: Box) -> bool:
    return a.x1 < b.x2 and b.x1 < a.x2 and a.y1 < b.y2 and b.y1 < a.y2


def _within(inner: Box, outer: Box) -> bool:
    return (
        outer.x1 <= inner.x1
        and outer.y1 <= inner.y1
        and inner.x2 <= outer.x2
        and inner.y2 <= outer.y2
    )


def test_every_layout_and_language_renders_a_consistent_screen(
    layout_lang: tuple[str, str],
) -> None:
    layout, lang = layout_lang
    content = make_content(layout, lang)
    shot = _render(layout, lang)
    assert shot.image.mode == "RGB" and shot.image.size == (1080, 2340)
    # the UI tree is a pre-order dump: index == position, parents before children, one root
    for i, node in enumerate(shot.ui):
        assert node.index == i
        assert node.parent < i
        assert node.bounds.inside(1080, 2340)
    assert [n.parent for n in shot.ui].count(-1) == 1
    style = shot.styles["title"]
    assert set(shot.title_styles) == {c.candidate_id for c in content.cards}
    for card in content.cards:
        cid = card.candidate_id
        boxes = shot.boxes[cid]
        assert {"card", "title", "cover", "price"} <= set(boxes)
        for role, box in boxes.items():
            assert box.inside(1080, 2340), (cid, role, box)
            nodes = [n for n in shot.ui if n.candidate == cid and n.role == role]
            assert nodes and nodes[0].bounds == box, (cid, role)
            if role != "card":
                assert _within(box, boxes["card"]), (cid, role)
        card_node = next(n for n in shot.ui if n.candidate == cid and n.role == "card")
        assert card_node.clickable and card_node.resource_id.endswith(":id/item_card")
        title_node = next(n for n in shot.ui if n.candidate == cid and n.role == "title")
        assert title_node.text == card.title  # the full title, not the clamped lines
        assert title_node.parent == card_node.index
        assert title_node.resource_id == f"{content.package}:id/item_title"
        price_node = next(n for n in shot.ui if n.candidate == cid and n.role == "price")
        assert price_node.text == card.price
        assert boxes["title"].height == style.max_lines * style.line_height
        assert not _overlap(boxes["title"], boxes["cover"])
        # every descendant of the card lies inside it and belongs to the same candidate
        for n in shot.ui:
            if n.parent == card_node.index:
                assert n.candidate == cid and _within(n.bounds, boxes["card"])
    cards = [shot.boxes[c.candidate_id]["card"] for c in content.cards]
    assert not any(_overlap(a, b) for i, a in enumerate(cards) for b in cards[i + 1 :])


def test_title_style_is_native_and_cjk_faces_for_chinese(layout_lang: tuple[str, str]) -> None:
    layout, lang = layout_lang
    style = _render(layout, lang).styles["title"]
    assert 38 <= style.size <= 42
    assert style.max_lines == 2 and 1.2 <= style.line_height / style.size <= 1.4
    assert style.background == make_content(layout, lang).palette.surface
    assert style.font.startswith("cjk") if lang == "zh" else style.font.startswith("sans")


def test_title_boxes_hold_only_background_and_title_glyphs(layout_lang: tuple[str, str]) -> None:
    """Blank the titles: only title boxes change, and they become one flat background colour."""
    layout, lang = layout_lang
    full, blank = _render(layout, lang), _render(layout, lang, blank_titles=True)
    a, b = _px(full.image), _px(blank.image)
    changed = np.any(a != b, axis=2)
    inside = np.zeros_like(changed)
    bg = np.array(Image.new("RGB", (1, 1), full.styles["title"].background).getpixel((0, 0)))
    for cid, boxes in full.boxes.items():
        t = boxes["title"]
        inside[t.y1 : t.y2, t.x1 : t.x2] = True
        region = b[t.y1 : t.y2, t.x1 : t.x2].reshape(-1, 3)
        assert (region == bg).all(), f"{cid}: blank title box is not the pure background"
        assert changed[t.y1 : t.y2, t.x1 : t.x2].any(), f"{cid}: no title glyphs drawn"
    assert not (changed & ~inside).any(), "pixels outside title boxes depend on the title"
    assert full.boxes == blank.boxes and full.ui != blank.ui


def test_cover_boxes_hold_exactly_the_cover_image() -> None:
    content = make_content("list", "en", 5)
    shot = render_screen(content)
    for card in content.cards:
        box = shot.boxes[card.candidate_id]["cover"]
        expected = draw_cover(card.cover, box.width, box.height)
        assert shot.image.crop(box).tobytes() == expected.tobytes()
    # a different cover for one card changes nothing outside that card's cover box
    cards = list(content.cards)
    cards[2] = dataclasses.replace(cards[2], cover=CoverSpec("food:pizza", 999))
    other = render_screen(dataclasses.replace(content, cards=tuple(cards)))
    diff = np.any(_px(shot.image) != _px(other.image), axis=2)
    box = shot.boxes[cards[2].candidate_id]["cover"]
    assert diff[box.y1 : box.y2, box.x1 : box.x2].any()
    diff[box.y1 : box.y2, box.x1 : box.x2] = False
    assert not diff.any()


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("n", [4, 5, 6, 7, 8])
def test_four_to_eight_cards_fit_fully_on_screen(layout: str, n: int) -> None:
    content = make_content(layout, "zh" if n % 2 else "en", n)
    shot = render_screen(content)
    nav = [nd for nd in shot.ui if nd.resource_id.endswith(":id/bottom_navigation")]
    listing = next(nd for nd in shot.ui if nd.resource_id.endswith(":id/result_list"))
    bottom = nav[0].bounds.y1 if nav else 2340
    cards = [shot.boxes[c.candidate_id]["card"] for c in content.cards]
    assert len(cards) == n
    for box in cards:
        assert _within(box, listing.bounds) and box.y2 <= bottom
    assert not any(_overlap(a, b) for i, a in enumerate(cards) for b in cards[i + 1 :])
    # covers keep a usable size even when eight cards share the screen
    assert min(shot.boxes[c.candidate_id]["cover"].width for c in content.cards) >= 90


def test_four_cards_get_nominal_sizes() -> None:
    """With room to spare nothing is shrunk: list covers >= 240 px, ticket covers >= 200 px."""
    for layout, side in (("list", 240), ("ticket", 200), ("grid", 400)):
        shot = render_screen(make_content(layout, "en", 4))
        assert shot.styles["title"].size == 40
        assert all(b["cover"].width >= side for b in shot.boxes.values()), layout
        assert all(b["cover"].width == b["cover"].height for b in shot.boxes.values())
    hotel = render_screen(make_content("large", "en", 3))
    for b in hotel.boxes.values():
        assert b["cover"].width > 2 * b["cover"].height  # a wide cover across the card
        assert b["cover"].width > 0.9 * b["card"].width


def test_cjk_titles_draw_real_glyphs_not_tofu() -> None:
    content = make_content("list", "zh", 4)
    shot = _render("list", "zh", 4)
    tofu = render_screen(_with_titles(content, lambda c: "\u25a1" * len(c.title)))
    for card in content.cards:
        box = shot.boxes[card.candidate_id]["title"]
        real = _px(shot.image.crop(box))
        boxes = _px(tofu.image.crop(box))
        assert real.std() > 10  # not blank
        assert np.abs(real - boxes).mean() > 5, "CJK title drawn as tofu boxes"


def test_chinese_screens_show_chinese_chrome() -> None:
    shot = _render("list", "zh")
    texts = {n.text for n in shot.ui}
    assert {"首页", "订单", "我的", "面条", "综合排序"} <= texts


def test_ui_tree_looks_like_a_uiautomator_dump() -> None:
    content = make_content("grid", "en")
    shot = _render("grid", "en")
    by_id = {n.resource_id.split(":id/")[-1]: n for n in shot.ui if n.resource_id}
    assert by_id["search_box"].cls == "android.widget.EditText"
    assert by_id["search_box"].text == content.search_query and by_id["search_box"].clickable
    assert by_id["result_list"].cls == "androidx.recyclerview.widget.RecyclerView"
    chips = [n for n in shot.ui if n.resource_id.endswith(":id/chip")]
    assert [c.text for c in chips] == list(content.chips) and all(c.clickable for c in chips)
    tabs = [n for n in shot.ui if n.resource_id.endswith(":id/nav_item")]
    assert [t.content_desc for t in tabs] == list(content.tabs)
    covers = [n for n in shot.ui if n.role == "cover"]
    assert all(n.cls == "android.widget.ImageView" and n.content_desc for n in covers)
    sponsored = [n for n in shot.ui if n.role == "sponsored"]
    assert [n.candidate for n in sponsored] == [
        c.candidate_id for c in content.cards if c.sponsored
    ]
    assert all(n.text == "Sponsored" for n in sponsored)


def test_rendering_is_deterministic_and_honours_the_size() -> None:
    content = make_content("ticket", "en", 5)
    a, b = render_screen(content), render_screen(content)
    assert a.image.tobytes() == b.image.tobytes() and a.ui == b.ui and a.boxes == b.boxes
    small = render_screen(content, width=720, height=1560)
    assert small.image.size == (720, 1560)
    assert all(box.inside(720, 1560) for boxes in small.boxes.values() for box in boxes.values())
    ratio = small.boxes["c0"]["card"].width / a.boxes["c0"]["card"].width
    assert abs(ratio - 720 / 1080) < 0.02


def test_header_note_and_no_search_query_give_a_title_bar() -> None:
    content = make_content("ticket", "en", 4)
    assert content.search_query == ""
    shot = render_screen(content)
    texts = {n.resource_id.split(":id/")[-1]: n.text for n in shot.ui if n.resource_id}
    assert texts["toolbar_title"] == "Flights"
    assert texts["header_note"] == "Shanghai → Beijing · Tue 3 Dec"
    assert "search_box" not in texts


def test_sparse_cards_and_bad_input() -> None:
    """Cards without price, rating, lines or badges still render; bad content is rejected."""
    bare = tuple(
        CardContent(candidate_id=f"x{i}", title=f"Item {i}", cover=CoverSpec("mystery", i))
        for i in range(4)
    )
    for layout in LAYOUTS:
        content = dataclasses.replace(make_content(layout, "en", 4), cards=bare, tabs=(), chips=())
        shot = render_screen(content)
        assert set(shot.boxes["x0"]) == {"card", "title", "cover"}
    with pytest.raises(ValueError, match="duplicate"):
        render_screen(dataclasses.replace(make_content("list", "en", 2), cards=bare[:1] * 2))
    with pytest.raises(ValueError, match="layout"):
        render_screen(dataclasses.replace(make_content("list", "en", 2), layout="carousel"))  # type: ignore[arg-type]


_WORDS = st.sampled_from(
    [
        "Wireless",
        "降噪",
        "Pro",
        "2024款",
        "XL",
        "超长续航",
        "Free",
        "旗舰店",
        "8-Piece",
        "·",
        "→",
        "Jjf",
    ]
)


@st.composite
def _cards(draw: st.DrawFn, n: int) -> tuple[CardContent, ...]:
    out = []
    for i in range(n):
        text = lambda lo, hi: " ".join(draw(st.lists(_WORDS, min_size=lo, max_size=hi)))  # noqa: E731
        out.append(
            CardContent(
                candidate_id=f"k{i}",
                title=text(0, 20),
                cover=CoverSpec(draw(st.sampled_from(["product:phone", "food", "hotel", "?"])), i),
                price=draw(st.sampled_from([None, "$9", "¥12,999", "From $1,234.56"])),
                price_note=draw(st.sampled_from([None, "/night", "$99,999.99", text(1, 6)])),
                rating=draw(st.sampled_from([None, 0.0, 2.5, 4.75, 5.0])),
                rating_text=draw(st.sampled_from([None, "4.8 (2.3k reviews)", text(1, 8)])),
                lines=tuple((f"r{j}", text(1, 7)) for j in range(draw(st.integers(0, 5)))),
                badges=tuple(text(1, 3) for _ in range(draw(st.integers(0, 4)))),
                sponsored=draw(st.booleans()),
            )
        )
    return tuple(out)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_content_stays_inside_its_cards_and_the_screen(data: st.DataObject) -> None:
    layout = data.draw(st.sampled_from(LAYOUTS))
    lang = data.draw(st.sampled_from(["en", "zh"]))
    n = data.draw(st.integers(4, 8))
    w, h = data.draw(st.sampled_from([(1080, 2340), (720, 1560), (1440, 3120), (1080, 1920)]))
    content = dataclasses.replace(make_content(layout, lang, n), cards=data.draw(_cards(n)))
    shot = render_screen(content, w, h)
    cards = {cid: b["card"] for cid, b in shot.boxes.items()}
    assert len(cards) == n
    for node in shot.ui:
        assert node.bounds.inside(w, h)
        if node.candidate is not None:
            assert _within(node.bounds, cards[node.candidate]), (node.role, node.text)
    for b in shot.boxes.values():
        assert not _overlap(b["title"], b["cover"])
        assert b["title"].height == 2 * shot.styles["title"].line_height
    boxes = list(cards.values())
    assert not any(_overlap(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1 :])
