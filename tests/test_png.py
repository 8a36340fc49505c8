"""The fast PNG writer: any decoder reads back exactly the pixels, in every supported mode."""

import base64
import io

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image, ImageDraw

from dibench.render import encode_png


@settings(max_examples=40, deadline=None)
@given(
    w=st.integers(1, 40),
    h=st.integers(1, 30),
    mode=st.sampled_from(["L", "RGB", "RGBA", "P", "1"]),
    seed=st.integers(0, 2**32 - 1),
)
def test_round_trip_is_exact(w: int, h: int, mode: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    arr = rng.integers(0, 256, size=(h, w, 4), dtype=np.uint8)
    image = Image.fromarray(arr, "RGBA").convert(mode)
    data = encode_png(image)
    with Image.open(io.BytesIO(data)) as back:
        back.load()
        expected = image if mode in ("L", "RGB", "RGBA") else image.convert("RGB")
        assert back.mode == expected.mode and back.size == (w, h)
        assert np.array_equal(np.asarray(back), np.asarray(expected))


@pytest.mark.parametrize("level", [1, 6])
def test_deterministic_and_compressed(level: int) -> None:
    image = Image.new("RGB", (300, 200), "#F5F5F5")
    image.paste((230, 57, 53), (20, 20, 120, 80))
    a, b = encode_png(image, level), encode_png(image.copy(), level)
    assert a == b and a.startswith(b"\x89PNG\r\n\x1a\n")
    assert len(a) < 300 * 200 * 3 // 20  # flat UI pixels compress well


def _changed(
    h: int, w: int, spans: list[tuple[int, int]], seed: int, blank: bool = False
) -> tuple[np.ndarray, np.ndarray, list[tuple[int, int]]]:
    """A flat random screen, a copy with random pixels in the given row spans (kept as they
    were with ``blank``: rows a carrier touches without changing them), and those spans."""
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 4, size=(h, w, 3), dtype=np.uint8) * 60
    changed = base.copy()
    rows = []
    for y, n in spans:
        y1, y2 = min(y, h - 1), min(h, y + n)
        if not blank:
            changed[y1:y2] = rng.integers(0, 256, size=(y2 - y1, w, 3), dtype=np.uint8)
        rows.append((y1, y2))
    return base, changed, rows


@settings(max_examples=30, deadline=None)
@given(
    h=st.integers(1, 140),
    w=st.integers(1, 30),
    spans=st.lists(st.tuples(st.integers(0, 139), st.integers(1, 40)), max_size=3),
    seed=st.integers(0, 2**32 - 1),
)
def test_splicing_changed_bands_gives_the_new_pixels(
    h: int, w: int, spans: list[tuple[int, int]], seed: int
) -> None:
    from dibench._png import splice_png

    base, changed, rows = _changed(h, w, spans, seed)
    new = Image.fromarray(changed, "RGB")
    data = splice_png(encode_png(Image.fromarray(base, "RGB")), new, rows)
    assert data is not None
    with Image.open(io.BytesIO(data)) as back:
        assert np.array_equal(np.asarray(back.convert("RGB")), changed)
    assert splice_png(b"not a png", new, rows) is None


def test_banded_level_names_dibench_pngs_only() -> None:
    """The (level, colour type) of a PNG this encoder wrote; None for anyone else's."""
    from dibench._png import banded_level

    image = Image.new("RGB", (40, 70), (10, 200, 30))
    assert banded_level(encode_png(image, 1)) == (1, 2)
    assert banded_level(encode_png(image.convert("RGBA"), 6)) == (6, 6)
    buf = io.BytesIO()
    image.save(buf, "PNG")
    assert banded_level(buf.getvalue()) is None
    assert banded_level(b"not a png") is None


@settings(max_examples=30, deadline=None)
@given(
    h=st.integers(1, 140),
    w=st.integers(1, 30),
    spans=st.lists(st.tuples(st.integers(0, 139), st.integers(1, 40)), min_size=1, max_size=3),
    blank=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_a_spliced_strip_is_the_encoded_screen_byte_for_byte(
    h: int, w: int, spans: list[tuple[int, int]], blank: bool, seed: int
) -> None:
    """A strip of the carrier rows spliced with the base image at hand (unchanged bands keep
    their bytes) gives the very bytes of encoding the whole new screen, as the whole screen
    spliced does; a strip that misses a touched band gives None."""
    from dibench._png import BAND, decode_rows, splice_png

    base, changed, rows = _changed(h, w, spans, seed, blank)
    base_img, new = Image.fromarray(base, "RGB"), Image.fromarray(changed, "RGB")
    base_png, want = encode_png(base_img), encode_png(new)
    top = min(a for a, _ in rows) // BAND * BAND
    bottom = min(h, -(-max(b for _, b in rows) // BAND) * BAND)
    strip = new.crop((0, top, w, bottom))
    assert splice_png(base_png, new, rows) == want
    assert splice_png(base_png, strip, rows, top=top, base=base_img) == want
    assert splice_png(base_png, strip, rows, top=top) == want
    decoded = decode_rows(base_png, top, bottom)  # its bands then compared from the cache
    assert splice_png(base_png, strip, rows, top=top, base=decoded) == want
    if bottom - top > 1:
        short = new.crop((0, top, w, bottom - 1))
        assert splice_png(base_png, short, rows, top=top, base=base_img) is None


@settings(max_examples=40, deadline=None)
@given(
    h=st.integers(1, 200),
    w=st.integers(1, 40),
    spans=st.lists(st.tuples(st.integers(0, 199), st.integers(1, 60)), max_size=4),
    seed=st.integers(0, 2**32 - 1),
)
def test_the_base64_of_an_assembled_png_is_its_base64(
    h: int, w: int, spans: list[tuple[int, int]], seed: int
) -> None:
    """The text ``base64_of`` hands out for a spliced or patched PNG (made from its base's
    text at every byte alignment) is exactly ``b64encode`` of its bytes; any other bytes are
    simply encoded."""
    from dibench._png import apply_patch, band_patch, base64_bytes, base64_of, splice_png

    base, changed, rows = _changed(h, w, spans, seed)
    base_png = encode_png(Image.fromarray(base, "RGB"))
    spliced = splice_png(base_png, Image.fromarray(changed, "RGB"), rows)
    assert spliced is not None
    patch = band_patch(base_png, spliced)
    assert patch is not None
    for png in (spliced, apply_patch(base_png, patch), base_png, b"not a png"):
        assert base64_of(png) == base64.b64encode(png).decode("ascii")
        assert base64_bytes(png) == base64.b64encode(png)


@settings(max_examples=30, deadline=None)
@given(h=st.integers(1, 140), w=st.integers(1, 30), a=st.integers(0, 5), b=st.integers(0, 5))
def test_decoding_some_bands_gives_those_rows(h: int, w: int, a: int, b: int) -> None:
    """Rows from band ``a`` to band ``b`` (or the end) of a banded PNG, inflated alone, are
    the image's rows; a span that does not start and end on bands, or any other PNG, gives
    None."""
    from dibench._png import BAND, decode_rows, png_size

    image = Image.fromarray(_changed(h, w, [(0, h)], a * 7 + b)[1], "RGB")
    png = encode_png(image)
    assert png_size(png) == (w, h) and png_size(b"GIF89a") is None
    top, bottom = min(a, b) * BAND, min(h, (max(a, b) + 1) * BAND)
    rows = decode_rows(png, top, bottom)
    if top >= h:
        assert rows is None
        return
    assert rows is not None and rows.mode == "RGB"
    assert np.array_equal(np.asarray(rows), np.asarray(image)[top:bottom])
    ImageDraw.Draw(rows).rectangle((0, 0, w, bottom - top), fill="red")  # the caller's own
    again = decode_rows(png, top, bottom)  # the same rows again, kept: still the rows
    assert again is not None and np.array_equal(np.asarray(again), np.asarray(image)[top:bottom])
    if bottom - top > 1 and (bottom - 1) % BAND:  # ends inside a band
        assert decode_rows(png, top, bottom - 1) is None
    if bottom - top > 1:
        assert decode_rows(png, top + 1, bottom) is None
    assert decode_rows(encode_png(image.convert("L")), top, bottom) is None
    assert decode_rows(b"not a png", top, bottom) is None
