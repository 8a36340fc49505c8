"""Procedural cover images: thumbnails a person reads as product photos, dishes, hotels, posters.

``draw_cover(spec, w, h)`` is a pure function of (spec, w, h): all randomness comes from
``py_rng(spec.seed, ...)``. Motifs are painted at about 300 x 300 px with flat and gradient
shapes, then resized to the requested size, which both anti-aliases and softens them into
something closer to a photo than to vector art. A cover is ~1 ms.

``spec.kind`` is '<family>' or '<family>:<item>'; families: product, food, hotel, airline, train,
poster, app, car, restaurant, item. Unknown families get a generic gradient and shape.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np
from PIL import Image, ImageDraw

from dibench._seeding import py_rng

from ._fonts import font, is_bold
from ._paint import RGB, hsv, mix
from ._text import is_wide

if TYPE_CHECKING:  # apps import the renderer's callers; keep import-time edges one-way
    from dibench.apps import CoverSpec

__all__ = ["COVER_FAMILIES", "draw_cover"]

UV = tuple[float, float]
Fill = RGB | tuple[RGB, RGB, str]  # a colour, or (from, to, 'h' | 'v' | 'd') gradient


def draw_cover(spec: CoverSpec, width: int, height: int) -> Image.Image:
    """An RGB image of exactly ``width`` x ``height`` showing the motif of ``spec.kind``."""
    if width <= 0 or height <= 0:
        raise ValueError(f"cover size must be positive, got {width}x{height}")
    return _cached(spec, width, height).copy()


@lru_cache(maxsize=16)  # re-renders of one screen reuse covers; a cover is up to ~1 MB
def _cached(spec: CoverSpec, width: int, height: int) -> Image.Image:
    w, h = width, height
    family, _, item = spec.kind.partition(":")
    family = family.strip().lower()
    item = item.strip().lower()
    rng = py_rng("cover", spec.seed, spec.kind, spec.label)
    cv = _Canvas(w, h)
    COVER_FAMILIES.get(family, _generic)(cv, rng, item, spec.label)
    return cv.im


# ---------------------------------------------------------------- canvas


class _Canvas:
    """An RGB canvas with a centred square 'stage' addressed in unit coordinates."""

    def __init__(self, w: int, h: int) -> None:
        self.w, self.h = w, h
        self.im = Image.new("RGB", (w, h))
        self.d = ImageDraw.Draw(self.im)
        self.S = min(w, h)
        self.ox = (w - self.S) / 2
        self.oy = (h - self.S) / 2

    # coordinates -------------------------------------------------------------------------
    def p(self, u: float, v: float) -> tuple[float, float]:
        return (self.ox + u * self.S, self.oy + v * self.S)

    def q(self, u: float, v: float) -> tuple[float, float]:
        """Full-canvas unit coordinates (for backgrounds on non-square covers)."""
        return (u * self.w, v * self.h)

    def box(self, u1: float, v1: float, u2: float, v2: float) -> list[float]:
        x1, y1 = self.p(u1, v1)
        x2, y2 = self.p(u2, v2)
        return [x1, y1, x2, y2]

    # backgrounds -------------------------------------------------------------------------
    def vgrad(
        self, stops: list[tuple[float, RGB]], box: tuple[int, int, int, int] | None = None
    ) -> None:
        """A vertical gradient through colour stops (positions 0..1) over ``box``."""
        x1, y1, x2, y2 = box or (0, 0, self.w, self.h)
        hh = max(1, y2 - y1)
        t = np.linspace(0.0, 1.0, hh)
        pos = [s[0] for s in stops]
        col = np.stack([np.interp(t, pos, [s[1][c] for s in stops]) for c in range(3)], axis=-1)
        strip = Image.fromarray(col.astype(np.uint8)[:, None, :], "RGB")
        self.im.paste(strip.resize((max(1, x2 - x1), hh), Image.Resampling.NEAREST), (x1, y1))

    def radial(
        self, inner: RGB, outer: RGB, cu: float = 0.5, cv: float = 0.45, r: float = 0.8
    ) -> None:
        """Studio light: bright around ``cv``, falling off to ``outer`` at the top and bottom.

        A vertical ramp, not a true radial one: per-pixel work is what costs time here.
        """
        self.vgrad([(0.0, mix(inner, outer, 0.55)), (cv, inner), (1.0, outer)])

    def glow(self, u: float, v: float, r: float, color: RGB, strength: float) -> None:
        """A blurred disc of light (or shade) blended over what is there."""
        x, y = self.p(u, v)
        R = r * self.S
        bb = (round(x - R), round(y - R), round(x + R), round(y + R))
        m = _soft_disc(max(2, bb[2] - bb[0]), max(2, bb[3] - bb[1]), strength)
        self.im.paste(color, (*bb[:2], bb[0] + m.width, bb[1] + m.height), m)

    def shadow(self, u: float, v: float, ru: float, rv: float, strength: float = 0.35) -> None:
        """A soft elliptic contact shadow under an object."""
        x, y = self.p(u, v)
        rx, ry = ru * self.S, rv * self.S
        bb = (round(x - rx), round(y - ry), round(x + rx), round(y + ry))
        m = _soft_disc(max(2, bb[2] - bb[0]), max(2, bb[3] - bb[1]), strength)
        self.im.paste((0, 0, 0), (*bb[:2], bb[0] + m.width, bb[1] + m.height), m)

    # shapes ------------------------------------------------------------------------------
    def _paint(
        self, bb: list[float], draw: Callable[[ImageDraw.ImageDraw, float, float], None], fill: Fill
    ) -> None:
        if len(fill) == 3 and isinstance(fill[0], int):
            draw(self.d, 0.0, 0.0)  # flat fill: the draw function closes over the colour
            return
        c1, c2, mode = fill  # type: ignore[misc]
        x1, y1 = math.floor(bb[0]), math.floor(bb[1])
        x2, y2 = math.ceil(bb[2]) + 1, math.ceil(bb[3]) + 1
        w, h = max(1, x2 - x1), max(1, y2 - y1)
        mask = Image.new("L", (w, h), 0)
        draw(ImageDraw.Draw(mask), -x1, -y1)
        self.im.paste(_gradient(w, h, c1, c2, mode), (x1, y1), mask)  # type: ignore[arg-type]

    def poly(self, pts: list[UV], fill: Fill) -> None:
        xy = [self.p(u, v) for u, v in pts]
        xs, ys = [p[0] for p in xy], [p[1] for p in xy]
        flat = fill if isinstance(fill[0], int) else 255

        def draw(d: ImageDraw.ImageDraw, dx: float, dy: float) -> None:
            d.polygon([(x + dx, y + dy) for x, y in xy], fill=flat)  # type: ignore[arg-type]

        self._paint([min(xs), min(ys), max(xs), max(ys)], draw, fill)

    def ellipse(self, u1: float, v1: float, u2: float, v2: float, fill: Fill) -> None:
        bb = self.box(u1, v1, u2, v2)
        flat = fill if isinstance(fill[0], int) else 255

        def draw(d: ImageDraw.ImageDraw, dx: float, dy: float) -> None:
            d.ellipse([bb[0] + dx, bb[1] + dy, bb[2] + dx, bb[3] + dy], fill=flat)  # type: ignore[arg-type]

        self._paint(bb, draw, fill)

    def circle(self, u: float, v: float, r: float, fill: Fill) -> None:
        self.ellipse(u - r, v - r, u + r, v + r, fill)

    def rrect(self, u1: float, v1: float, u2: float, v2: float, r: float, fill: Fill) -> None:
        bb = self.box(u1, v1, u2, v2)
        flat = fill if isinstance(fill[0], int) else 255
        rad = max(0.0, min(r * self.S, (bb[2] - bb[0]) / 2, (bb[3] - bb[1]) / 2))

        def draw(d: ImageDraw.ImageDraw, dx: float, dy: float) -> None:
            d.rounded_rectangle(
                [bb[0] + dx, bb[1] + dy, bb[2] + dx, bb[3] + dy], radius=rad, fill=flat
            )  # type: ignore[arg-type]

        self._paint(bb, draw, fill)

    def line(self, pts: list[UV], color: RGB, w: float) -> None:
        self.d.line(
            [self.p(u, v) for u, v in pts],
            fill=color,
            width=max(1, round(w * self.S)),
            joint="curve",
        )

    def arc(
        self, u1: float, v1: float, u2: float, v2: float, a0: float, a1: float, color: RGB, w: float
    ) -> None:
        self.d.arc(self.box(u1, v1, u2, v2), a0, a1, fill=color, width=max(1, round(w * self.S)))

    def text(
        self,
        u: float,
        v: float,
        s: str,
        size: float,
        color: RGB,
        anchor: str = "mm",
        bold: bool = True,
    ) -> None:
        face = (
            ("cjk-bold" if bold else "cjk")
            if any(is_wide(c) for c in s)
            else ("sans-bold" if bold else "sans")
        )
        px = max(6, round(size * self.S))
        f = font(face, px)
        stroke = max(1, px // 30) if is_bold(face) else 0
        self.d.text(
            self.p(u, v),
            s,
            font=f,
            fill=color,
            anchor=anchor,
            stroke_width=stroke,
            stroke_fill=color,
        )

    def fit_text(self, s: str, max_u: float, size: float) -> float:
        """The largest size <= ``size`` at which ``s`` fits ``max_u`` stage units."""
        face = "cjk-bold" if any(is_wide(c) for c in s) else "sans-bold"
        px = max(6, round(size * self.S))
        w = font(face, px).getlength(s)
        lim = max_u * self.S
        return size if w <= lim else size * lim / max(1.0, w)


@lru_cache(maxsize=256)
def _soft_disc(w: int, h: int, strength: float) -> Image.Image:
    """An elliptic mask fading smoothly from ``strength`` at the centre to 0 at the edge."""
    ys = np.linspace(-1.0, 1.0, h)[:, None]
    xs = np.linspace(-1.0, 1.0, w)[None, :]
    d = np.sqrt(xs * xs + ys * ys)
    m = np.clip(1.0 - d, 0.0, 1.0) ** 1.3 * (255.0 * strength)
    return Image.fromarray(m.astype(np.uint8), "L")


def _gradient(w: int, h: int, c1: RGB, c2: RGB, mode: str) -> Image.Image:
    """A two-colour ramp, horizontal ('h', also used for 'd') or vertical ('v')."""
    n = h if mode == "v" else w
    t = np.linspace(0.0, 1.0, max(1, n))[:, None]
    a, b = np.array(c1, float), np.array(c2, float)
    ramp = (a + (b - a) * t).astype(np.uint8)
    strip = Image.fromarray(ramp[:, None, :] if mode == "v" else ramp[None, :, :], "RGB")
    return strip.resize((w, h), Image.Resampling.NEAREST)


# ---------------------------------------------------------------- colour helpers


def _shade(c: RGB, k: float) -> RGB:
    """Darker (k < 0) or lighter (k > 0) version of a colour."""
    return mix(c, (0, 0, 0), -k) if k < 0 else mix(c, (255, 255, 255), k)


def _studio(cv: _Canvas, rng: random.Random, warm: bool = False) -> RGB:
    """A seamless studio backdrop; returns its mid colour."""
    hue = rng.random()
    sat = rng.uniform(0.04, 0.16)
    inner = hsv(hue, sat * 0.6, 0.99)
    outer = hsv(hue + rng.uniform(-0.05, 0.05), sat + 0.05, rng.uniform(0.8, 0.9))
    if warm:
        inner, outer = mix(inner, (255, 240, 220), 0.3), mix(outer, (225, 205, 180), 0.4)
    cv.radial(inner, outer, 0.5, 0.4, 0.9)
    return mix(inner, outer, 0.5)


def _object_colour(rng: random.Random) -> RGB:
    """Product colours: mostly neutrals, sometimes a saturated brand colour."""
    r = rng.random()
    if r < 0.25:
        return hsv(0, 0, rng.uniform(0.12, 0.2))  # black
    if r < 0.42:
        return hsv(rng.random(), 0.03, rng.uniform(0.9, 0.97))  # white
    if r < 0.55:
        return hsv(rng.uniform(0.55, 0.62), 0.08, rng.uniform(0.6, 0.75))  # silver / grey
    return hsv(rng.random(), rng.uniform(0.45, 0.8), rng.uniform(0.5, 0.9))


def _grad(c: RGB, k: float = 0.28, mode: str = "d") -> Fill:
    return (_shade(c, k * 0.6), _shade(c, -k), mode)


# ---------------------------------------------------------------- product motifs


def _headphones(cv: _Canvas, rng: random.Random, c: RGB) -> None:
    cv.shadow(0.5, 0.86, 0.36, 0.05)
    band = _shade(c, -0.1)
    cv.arc(0.2, 0.14, 0.8, 0.8, 180, 360, band, 0.07)
    cv.arc(0.24, 0.2, 0.76, 0.78, 190, 350, _shade(c, 0.25), 0.015)
    for x in (0.16, 0.64):
        cv.rrect(x + 0.02, 0.38, x + 0.18, 0.5, 0.03, _grad(_shade(c, -0.2)))
        cv.rrect(x, 0.46, x + 0.2, 0.84, 0.09, _grad(c))
        cv.rrect(x + 0.04, 0.52, x + 0.16, 0.78, 0.06, _grad(_shade(c, -0.35), 0.2))
    cv.circle(0.76, 0.6, 0.012, _shade(c, 0.5))


def _earbuds(cv: _Canvas, rng: random.Random, c: RGB) -> None:
    cv.shadow(0.5, 0.84, 0.32, 0.05)
    cv.rrect(0.22, 0.46, 0.78, 0.84, 0.14, _grad(c))
    cv.line([(0.23, 0.58), (0.77, 0.58)], _shade(c, -0.25), 0.008)
    cv.circle(0.5, 0.7, 0.012, (90, 220, 120))
    for x, flip in ((0.32, 1), (0.62, -1)):
        cv.rrect(x - 0.03, 0.22, x + 0.03, 0.42, 0.03, _grad(_shade(c, 0.05), 0.2, "h"))
        cv.circle(x + flip * 0.02, 0.2, 0.075, _grad(c))
        cv.circle(x + flip * 0.06, 0.2, 0.03, _shade(c, -0.45))


def _phone(cv: _Canvas, rng: random.Random, c: RGB) -> None:
    cv.shadow(0.5, 0.9, 0.34, 0.04)
    # back, slightly behind
    cv.rrect(0.46, 0.12, 0.8, 0.86, 0.06, _grad(c, 0.3))
    cv.rrect(0.5, 0.16, 0.65, 0.36, 0.04, _shade(c, -0.15))
    for u, v in ((0.545, 0.21), (0.605, 0.21), (0.545, 0.3)):
        cv.circle(u, v, 0.027, (30, 30, 34))
        cv.circle(u, v, 0.012, (70, 80, 110))
    # front with a wallpaper
    cv.rrect(0.18, 0.16, 0.52, 0.9, 0.06, (28, 28, 32))
    hue = rng.random()
    cv.rrect(
        0.195, 0.175, 0.505, 0.885, 0.05, (hsv(hue, 0.6, 0.95), hsv(hue + 0.15, 0.8, 0.55), "d")
    )
    cv.circle(0.35, 0.2, 0.01, (15, 15, 15))
    cv.ellipse(0.23, 0.5, 0.5, 0.9, (hsv(hue + 0.3, 0.5, 0.9), hsv(hue + 0.1, 0.7, 0.6), "v"))


def _laptop(cv: _Canvas, rng: random.Random, c: RGB) -> None:
    cv.shadow(0.5, 0.82, 0.44, 0.04)
    cv.rrect(0.17, 0.18, 0.83, 0.66, 0.02, _shade(c, -0.3))
    hue = rng.random()
    cv.rrect(0.19, 0.2, 0.81, 0.64, 0.01, (hsv(hue, 0.55, 0.95), hsv(hue + 0.12, 0.75, 0.5), "d"))
    cv.poly([(0.12, 0.67), (0.88, 0.67), (0.95, 0.78), (0.05, 0.78)], _grad(c, 0.2, "v"))
    cv.poly([(0.42, 0.7), (0.58, 0.7), (0.59, 0.74), (0.41, 0.74)], _shade(c, -0.15))
    cv.rrect(0.05, 0.775, 0.95, 0.8, 0.01, _shade(c, -0.3))


def _watch(cv: _Canvas, rng: random.Random, c: RGB) -> None:
    strap = _shade(_object_colour(rng), -0.1)
    cv.shadow(0.52, 0.9, 0.2, 0.04)
    cv.rrect(0.38, 0.04, 0.62, 0.34, 0.04, _grad(strap, 0.2, "h"))
    cv.rrect(0.38, 0.64, 0.62, 0.96, 0.04, _grad(strap, 0.2, "h"))
    cv.rrect(0.3, 0.28, 0.7, 0.72, 0.1, _grad(c, 0.35))
    cv.rrect(0.33, 0.31, 0.67, 0.69, 0.08, (16, 16, 20))
    hue = rng.random()
    for r, k in ((0.13, 0), (0.1, 0.33), (0.07, 0.66)):
        cv.arc(
            0.5 - r,
            0.5 - r,
            0.5 + r,
            0.5 + r,
            -90,
            -90 + rng.uniform(120, 330),
            hsv(hue + k, 0.75, 0.95),
            0.022,
        )
    cv.rrect(0.695, 0.42, 0.725, 0.52, 0.01, _shade(c, -0.2))


def _shoe(cv: _Canvas, rng: random.Random, c: RGB) -> None:
    cv.shadow(0.5, 0.78, 0.42, 0.05)
    upper = [
        (0.1, 0.62),
        (0.14, 0.42),
        (0.26, 0.36),
        (0.36, 0.44),
        (0.52, 0.46),
        (0.66, 0.5),
        (0.84, 0.56),
        (0.92, 0.64),
        (0.9, 0.72),
        (0.1, 0.72),
    ]
    cv.poly(upper, _grad(c, 0.3))
    cv.poly(
        [(0.08, 0.68), (0.93, 0.66), (0.92, 0.76), (0.1, 0.78)], _grad((236, 236, 232), 0.15, "v")
    )
    cv.line([(0.09, 0.72), (0.92, 0.71)], (190, 190, 185), 0.008)
    accent = hsv(rng.random(), 0.6, 0.85)
    cv.poly([(0.36, 0.6), (0.56, 0.5), (0.7, 0.56), (0.46, 0.66)], accent)
    for i in range(4):
        u = 0.38 + i * 0.06
        cv.line([(u, 0.44), (u + 0.04, 0.5)], _shade(c, 0.5), 0.012)
    cv.ellipse(0.14, 0.38, 0.3, 0.46, _shade(c, -0.4))


def _bag(cv: _Canvas, rng: random.Random, c: RGB) -> None:
    cv.shadow(0.5, 0.86, 0.36, 0.04)
    cv.arc(0.32, 0.1, 0.68, 0.52, 180, 360, _shade(c, -0.2), 0.035)
    cv.poly([(0.2, 0.36), (0.8, 0.36), (0.86, 0.86), (0.14, 0.86)], _grad(c, 0.3))
    cv.poly([(0.2, 0.36), (0.8, 0.36), (0.78, 0.56), (0.22, 0.56)], _grad(_shade(c, -0.08), 0.25))
    cv.rrect(0.46, 0.52, 0.54, 0.6, 0.02, (212, 180, 90))
    cv.line([(0.16, 0.8), (0.84, 0.8)], _shade(c, -0.18), 0.006)


def _backpack(cv: _Canvas, rng: random.Random, c: RGB) -> None:
    cv.shadow(0.5, 0.9, 0.3, 0.04)
    cv.arc(0.4, 0.06, 0.6, 0.24, 180, 360, _shade(c, -0.3), 0.03)
    cv.rrect(0.24, 0.14, 0.76, 0.88, 0.14, _grad(c, 0.3))
    cv.rrect(0.3, 0.52, 0.7, 0.84, 0.07, _grad(_shade(c, -0.1), 0.25))
    cv.line([(0.32, 0.58), (0.68, 0.58)], _shade(c, -0.4), 0.01)
    cv.rrect(0.47, 0.5, 0.53, 0.62, 0.01, (200, 200, 200))


def _bottle(cv: _Canvas, rng: random.Random, c: RGB) -> None:
    cv.shadow(0.5, 0.92, 0.18, 0.03)
    cv.rrect(0.43, 0.06, 0.57, 0.16, 0.02, _grad(_shade(c, -0.35), 0.3, "h"))
    cv.poly([(0.44, 0.15), (0.56, 0.15), (0.64, 0.3), (0.36, 0.3)], _grad(c, 0.3, "h"))
    cv.rrect(0.34, 0.26, 0.66, 0.92, 0.07, _grad(c, 0.35, "h"))
    label = hsv(rng.random(), 0.2, 0.97)
    cv.rrect(0.34, 0.48, 0.66, 0.72, 0.0, label)
    cv.rrect(0.4, 0.54, 0.6, 0.57, 0.01, _shade(label, -0.6))
    cv.rrect(0.42, 0.61, 0.58, 0.63, 0.01, _shade(label, -0.35))
    cv.rrect(0.37, 0.3, 0.41, 0.88, 0.02, _shade(c, 0.45))


def _camera(cv: _Canvas, rng: random.Random, c: RGB) -> None:
    body = c if rng.random() < 0.5 else (30, 30, 32)
    cv.shadow(0.5, 0.84, 0.4, 0.05)
    cv.rrect(0.36, 0.24, 0.56, 0.34, 0.02, _shade(body, -0.1))
    cv.rrect(0.12, 0.3, 0.88, 0.78, 0.06, _grad(body, 0.3, "v"))
    cv.rrect(0.12, 0.3, 0.3, 0.78, 0.06, _grad(_shade(body, -0.15), 0.2, "h"))
    cv.circle(0.56, 0.54, 0.2, _grad((40, 40, 44), 0.3))
    cv.circle(0.56, 0.54, 0.15, (20, 20, 24))
    cv.circle(0.56, 0.54, 0.1, (hsv(rng.uniform(0.55, 0.75), 0.5, 0.45), (10, 10, 20), "d"))
    cv.circle(0.52, 0.5, 0.03, (230, 235, 255))
    cv.rrect(0.74, 0.34, 0.84, 0.4, 0.01, (220, 60, 50))


def _tshirt(cv: _Canvas, rng: random.Random, c: RGB) -> None:
    cv.shadow(0.5, 0.92, 0.3, 0.03)
    pts = [
        (0.36, 0.12),
        (0.44, 0.16),
        (0.56, 0.16),
        (0.64, 0.12),
        (0.86, 0.24),
        (0.8, 0.4),
        (0.72, 0.36),
        (0.72, 0.88),
        (0.28, 0.88),
        (0.28, 0.36),
        (0.2, 0.4),
        (0.14, 0.24),
    ]
    cv.poly(pts, _grad(c, 0.25))
    cv.arc(0.43, 0.08, 0.57, 0.22, 0, 180, _shade(c, -0.25), 0.012)
    if rng.random() < 0.5:
        cv.circle(0.5, 0.44, 0.07, hsv(rng.random(), 0.6, 0.85))


def _mug(cv: _Canvas, rng: random.Random, c: RGB) -> None:
    cv.shadow(0.48, 0.84, 0.28, 0.04)
    cv.arc(0.58, 0.36, 0.82, 0.68, 270, 90, _shade(c, -0.1), 0.05)
    cv.rrect(0.22, 0.26, 0.66, 0.84, 0.06, _grad(c, 0.3, "h"))
    cv.ellipse(0.22, 0.22, 0.66, 0.32, _shade(c, -0.25))
    cv.ellipse(0.25, 0.235, 0.63, 0.305, (92, 58, 38))


def _speaker(cv: _Canvas, rng: random.Random, c: RGB) -> None:
    cv.shadow(0.5, 0.9, 0.3, 0.04)
    cv.rrect(0.28, 0.12, 0.72, 0.88, 0.2, _grad(c, 0.3, "h"))
    for v, r in ((0.33, 0.1), (0.65, 0.16)):
        cv.circle(0.5, v, r, _shade(c, -0.35))
        cv.circle(0.5, v, r * 0.45, _shade(c, -0.15))


def _tv(cv: _Canvas, rng: random.Random, c: RGB) -> None:
    cv.shadow(0.5, 0.86, 0.3, 0.03)
    cv.poly([(0.4, 0.74), (0.6, 0.74), (0.66, 0.84), (0.34, 0.84)], (60, 60, 64))
    cv.rrect(0.06, 0.2, 0.94, 0.74, 0.01, (20, 20, 22))
    hue = rng.random()
    cv.rrect(0.075, 0.215, 0.925, 0.725, 0.0, (hsv(hue, 0.5, 0.95), hsv(hue + 0.2, 0.8, 0.45), "d"))
    cv.poly(
        [(0.075, 0.725), (0.4, 0.45), (0.62, 0.6), (0.925, 0.4), (0.925, 0.725)],
        hsv(hue + 0.4, 0.5, 0.45),
    )


def _keyboard(cv: _Canvas, rng: random.Random, c: RGB) -> None:
    cv.shadow(0.5, 0.74, 0.46, 0.05)
    cv.rrect(0.04, 0.34, 0.96, 0.7, 0.03, _grad(c, 0.25, "v"))
    key = _shade(c, 0.25 if sum(c) < 300 else -0.12)
    for r in range(4):
        for k in range(12):
            u = 0.07 + k * 0.0733
            v = 0.38 + r * 0.078
            cv.rrect(u, v, u + 0.06, v + 0.062, 0.008, key)


def _box(cv: _Canvas, rng: random.Random, c: RGB) -> None:
    cv.shadow(0.5, 0.86, 0.36, 0.05)
    cv.poly([(0.2, 0.34), (0.56, 0.26), (0.84, 0.34), (0.5, 0.44)], _shade(c, 0.25))
    cv.poly([(0.2, 0.34), (0.5, 0.44), (0.5, 0.86), (0.2, 0.74)], _grad(c, 0.15))
    cv.poly([(0.5, 0.44), (0.84, 0.34), (0.84, 0.74), (0.5, 0.86)], _grad(_shade(c, -0.2), 0.15))
    cv.poly([(0.6, 0.52), (0.78, 0.46), (0.78, 0.56), (0.6, 0.62)], _shade(c, 0.45))


def _bike(cv: _Canvas, rng: random.Random, c: RGB) -> None:
    dark = (40, 40, 44)
    for u in (0.24, 0.76):
        cv.arc(u - 0.19, 0.44, u + 0.19, 0.82, 0, 360, dark, 0.025)
        cv.circle(u, 0.63, 0.02, dark)
    frame = [(0.24, 0.63), (0.42, 0.42), (0.66, 0.42), (0.5, 0.63), (0.24, 0.63)]
    cv.line(frame, c, 0.025)
    cv.line([(0.5, 0.63), (0.4, 0.34)], c, 0.025)
    cv.line([(0.66, 0.42), (0.76, 0.63)], c, 0.022)
    cv.line([(0.66, 0.42), (0.63, 0.32), (0.7, 0.3)], dark, 0.018)
    cv.rrect(0.35, 0.31, 0.45, 0.34, 0.01, dark)


def _guitar(cv: _Canvas, rng: random.Random, c: RGB) -> None:
    wood = mix(c, (190, 120, 60), 0.6)
    cv.shadow(0.5, 0.92, 0.24, 0.03)
    cv.rrect(0.47, 0.04, 0.53, 0.5, 0.01, (70, 45, 30))
    cv.rrect(0.45, 0.02, 0.55, 0.1, 0.02, (50, 32, 22))
    cv.circle(0.5, 0.58, 0.16, _grad(wood, 0.25))
    cv.circle(0.5, 0.76, 0.21, _grad(wood, 0.25))
    cv.circle(0.5, 0.6, 0.055, (30, 20, 15))
    cv.rrect(0.44, 0.8, 0.56, 0.83, 0.005, (40, 30, 20))


def _chair(cv: _Canvas, rng: random.Random, c: RGB) -> None:
    cv.shadow(0.5, 0.9, 0.34, 0.04)
    legs = (90, 64, 40)
    for a, b in (
        ((0.28, 0.6), (0.24, 0.9)),
        ((0.72, 0.6), (0.76, 0.9)),
        ((0.38, 0.6), (0.4, 0.84)),
        ((0.62, 0.6), (0.6, 0.84)),
    ):
        cv.line([a, b], legs, 0.022)
    cv.rrect(0.28, 0.14, 0.72, 0.5, 0.06, _grad(c, 0.25))
    cv.poly([(0.24, 0.52), (0.76, 0.52), (0.8, 0.64), (0.2, 0.64)], _grad(_shade(c, 0.1), 0.2, "v"))


def _book(cv: _Canvas, rng: random.Random, c: RGB) -> None:
    cv.shadow(0.5, 0.88, 0.3, 0.04)
    cv.poly([(0.3, 0.14), (0.74, 0.1), (0.74, 0.84), (0.3, 0.88)], (240, 236, 226))
    cv.poly([(0.26, 0.16), (0.7, 0.12), (0.7, 0.86), (0.26, 0.9)], _grad(c, 0.25))
    cv.rrect(0.34, 0.3, 0.62, 0.34, 0.01, _shade(c, 0.6))
    cv.rrect(0.34, 0.38, 0.56, 0.41, 0.01, _shade(c, 0.45))
    cv.circle(0.48, 0.62, 0.1, _shade(c, 0.3))


def _sofa(cv: _Canvas, rng: random.Random, c: RGB) -> None:
    cv.shadow(0.5, 0.82, 0.46, 0.05)
    cv.rrect(0.12, 0.3, 0.88, 0.64, 0.06, _grad(_shade(c, -0.1), 0.2, "v"))
    cv.rrect(0.08, 0.5, 0.92, 0.76, 0.05, _grad(c, 0.2, "v"))
    cv.rrect(0.04, 0.44, 0.18, 0.76, 0.06, _grad(c, 0.25))
    cv.rrect(0.82, 0.44, 0.96, 0.76, 0.06, _grad(c, 0.25))
    cv.line([(0.5, 0.52), (0.5, 0.72)], _shade(c, -0.25), 0.008)
    for u in (0.14, 0.86):
        cv.rrect(u - 0.015, 0.76, u + 0.015, 0.82, 0.005, (70, 50, 35))


def _lipstick(cv: _Canvas, rng: random.Random, c: RGB) -> None:
    red = hsv(rng.uniform(-0.04, 0.02), 0.75, 0.75)
    cv.shadow(0.5, 0.9, 0.22, 0.03)
    cv.poly([(0.42, 0.36), (0.58, 0.26), (0.58, 0.46), (0.42, 0.46)], _grad(red, 0.3, "h"))
    cv.rrect(0.4, 0.44, 0.6, 0.58, 0.01, _grad((212, 175, 95), 0.35, "h"))
    cv.rrect(0.38, 0.56, 0.62, 0.9, 0.02, _grad(c, 0.35, "h"))


def _stroller(cv: _Canvas, rng: random.Random, c: RGB) -> None:
    dark = (45, 45, 50)
    cv.shadow(0.5, 0.9, 0.34, 0.04)
    for u in (0.3, 0.7):
        cv.circle(u, 0.82, 0.08, dark)
        cv.circle(u, 0.82, 0.03, (150, 150, 150))
    cv.line([(0.3, 0.82), (0.5, 0.6), (0.7, 0.82)], dark, 0.02)
    cv.line([(0.66, 0.58), (0.82, 0.18)], dark, 0.02)
    cv.ellipse(0.18, 0.26, 0.72, 0.66, _grad(c, 0.25))
    cv.poly([(0.18, 0.46), (0.72, 0.46), (0.72, 0.66), (0.18, 0.66)], _grad(_shade(c, -0.15), 0.2))


_PRODUCTS: dict[str, Callable[[_Canvas, random.Random, RGB], None]] = {
    "headphones": _headphones,
    "earbuds": _earbuds,
    "phone": _phone,
    "laptop": _laptop,
    "watch": _watch,
    "shoe": _shoe,
    "bag": _bag,
    "backpack": _backpack,
    "bottle": _bottle,
    "camera": _camera,
    "tshirt": _tshirt,
    "mug": _mug,
    "speaker": _speaker,
    "tv": _tv,
    "keyboard": _keyboard,
    "box": _box,
    "bike": _bike,
    "guitar": _guitar,
    "chair": _chair,
    "book": _book,
    "sofa": _sofa,
    "lipstick": _lipstick,
    "stroller": _stroller,
}

_SYNONYMS: dict[str, tuple[str, ...]] = {
    "headphones": ("headphone", "headset", "耳机", "头戴"),
    "earbuds": ("earbud", "earphone", "earphones", "airpods", "tws", "蓝牙耳机"),
    "phone": ("smartphone", "mobile", "iphone", "tablet", "ipad", "手机", "平板"),
    "laptop": ("notebook", "computer", "macbook", "pc", "电脑", "笔记本"),
    "watch": ("smartwatch", "band", "tracker", "手表", "手环"),
    "shoe": ("shoes", "sneaker", "sneakers", "boot", "boots", "trainers", "鞋", "运动鞋"),
    "bag": ("handbag", "purse", "tote", "wallet", "包", "手提包"),
    "backpack": ("rucksack", "schoolbag", "背包", "书包", "luggage", "suitcase", "行李箱"),
    "bottle": (
        "water",
        "thermos",
        "flask",
        "shampoo",
        "perfume",
        "skincare",
        "serum",
        "cream",
        "lotion",
        "cosmetics",
        "水杯",
        "保温杯",
        "香水",
        "护肤",
    ),
    "camera": ("cam", "dslr", "gopro", "相机"),
    "tshirt": (
        "t-shirt",
        "shirt",
        "tee",
        "hoodie",
        "jacket",
        "dress",
        "clothes",
        "clothing",
        "sweater",
        "coat",
        "衣服",
        "t恤",
        "外套",
        "卫衣",
        "裙",
    ),
    "mug": ("cup", "kettle", "pot", "杯", "茶壶"),
    "speaker": ("soundbar", "音箱", "音响"),
    "tv": ("television", "monitor", "display", "projector", "电视", "显示器"),
    "keyboard": ("mouse", "键盘", "鼠标"),
    "box": (
        "charger",
        "powerbank",
        "power bank",
        "router",
        "toy",
        "lego",
        "gift",
        "appliance",
        "充电宝",
        "玩具",
    ),
    "bike": ("bicycle", "scooter", "自行车", "单车"),
    "guitar": ("instrument", "ukulele", "吉他"),
    "chair": ("stool", "desk", "table", "椅子", "桌子"),
    "book": ("books", "textbook", "novel", "书"),
    "sofa": ("couch", "沙发", "bed", "mattress"),
    "lipstick": ("makeup", "口红", "彩妆"),
    "stroller": ("pram", "婴儿车", "baby"),
}


def _product_drawer(item: str) -> Callable[[_Canvas, random.Random, RGB], None] | None:
    if item in _PRODUCTS:
        return _PRODUCTS[item]
    for key, words in _SYNONYMS.items():
        if item in words or any(w in item for w in words if len(w) > 3 or not w.isascii()):
            return _PRODUCTS[key]
    return None


def _product(cv: _Canvas, rng: random.Random, item: str, label: str) -> None:
    _studio(cv, rng)
    draw = _product_drawer(item) or rng.choice(
        [_box, _bottle, _box, _speaker]  # unknown products: something boxy
    )
    draw(cv, rng, _object_colour(rng))


# ---------------------------------------------------------------- food motifs


def _table(cv: _Canvas, rng: random.Random) -> RGB:
    """A wooden table or a tablecloth seen from above."""
    r = rng.random()
    if r < 0.55:
        base = hsv(rng.uniform(0.06, 0.09), rng.uniform(0.35, 0.55), rng.uniform(0.45, 0.7))
        cv.vgrad([(0.0, _shade(base, 0.08)), (1.0, _shade(base, -0.12))])
        n = rng.randint(5, 8)
        for i in range(n):
            y = (i + 0.5) / n
            cv.d.line(
                [cv.q(0, y), cv.q(1, y + rng.uniform(-0.03, 0.03))],
                fill=_shade(base, -0.18),
                width=max(1, cv.h // 150),
            )
        return base
    if r < 0.8:
        base = hsv(rng.random(), 0.05, rng.uniform(0.85, 0.95))  # stone
        cv.radial(_shade(base, 0.05), _shade(base, -0.1), 0.4, 0.3, 1.0)
        return base
    base = hsv(rng.choice((0.0, 0.6, 0.33)), 0.55, 0.7)  # red, blue or green gingham
    cv.im.paste((244, 244, 240), (0, 0, cv.w, cv.h))
    n = 6
    for i in range(n):
        x1, x2 = round(cv.w * (2 * i) / (2 * n)), round(cv.w * (2 * i + 1) / (2 * n))
        y1, y2 = round(cv.h * (2 * i) / (2 * n)), round(cv.h * (2 * i + 1) / (2 * n))
        cv.d.rectangle([x1, 0, x2, cv.h], fill=mix(base, (244, 244, 240), 0.55))
        cv.d.rectangle([0, y1, cv.w, y2], fill=mix(base, (244, 244, 240), 0.55))
    return base


def _bowl(cv: _Canvas, rng: random.Random, r: float = 0.4) -> tuple[float, float, float]:
    """A bowl from above; returns (cx, cy, inner radius)."""
    cx, cy = 0.5 + rng.uniform(-0.03, 0.03), 0.52 + rng.uniform(-0.03, 0.03)
    cv.shadow(cx + 0.03, cy + 0.04, r + 0.04, r + 0.04, 0.4)
    rim = (250, 250, 248) if rng.random() < 0.6 else hsv(rng.random(), 0.35, 0.55)
    cv.circle(cx, cy, r, (_shade(rim, 0.1), _shade(rim, -0.18), "d"))
    return cx, cy, r * 0.84


def _food(cv: _Canvas, rng: random.Random, item: str, label: str) -> None:
    _table(cv, rng)
    it = item
    if any(w in it for w in ("pizza", "披萨")):
        cx, cy = 0.5, 0.5
        cv.shadow(cx + 0.03, cy + 0.04, 0.46, 0.46, 0.4)
        cv.circle(cx, cy, 0.44, (_shade((214, 150, 70), 0.15), (170, 100, 40), "d"))
        cv.circle(cx, cy, 0.37, (200, 50, 30))
        cv.circle(cx, cy, 0.35, ((250, 215, 120), (235, 180, 80), "d"))
        for _ in range(9):
            a, d = rng.uniform(0, 6.28), rng.uniform(0.05, 0.28)
            cv.circle(cx + d * math.cos(a), cy + d * math.sin(a), 0.05, (175, 45, 35))
        for _ in range(10):
            a, d = rng.uniform(0, 6.28), rng.uniform(0.05, 0.3)
            cv.circle(cx + d * math.cos(a), cy + d * math.sin(a), 0.014, (60, 120, 50))
        for k in range(4):
            a = k * math.pi / 4
            cv.line(
                [
                    (cx - 0.37 * math.cos(a), cy - 0.37 * math.sin(a)),
                    (cx + 0.37 * math.cos(a), cy + 0.37 * math.sin(a)),
                ],
                (225, 170, 90),
                0.006,
            )
        return
    if any(w in it for w in ("burger", "汉堡", "sandwich")):
        cv.shadow(0.5, 0.84, 0.38, 0.06, 0.45)
        cv.rrect(0.14, 0.66, 0.86, 0.82, 0.06, ((226, 160, 80), (180, 110, 50), "v"))
        cv.rrect(0.12, 0.56, 0.88, 0.68, 0.05, ((110, 60, 35), (70, 38, 22), "v"))
        cv.poly(
            [(0.14, 0.56), (0.86, 0.56), (0.8, 0.64), (0.6, 0.6), (0.44, 0.66), (0.3, 0.6)],
            (250, 190, 40),
        )
        pts = [(0.1 + i * 0.04, 0.52 + (0.025 if i % 2 else 0.0)) for i in range(21)]
        cv.poly([*pts, (0.9, 0.58), (0.1, 0.58)], (110, 180, 60))
        cv.ellipse(0.12, 0.18, 0.88, 0.72, ((240, 175, 85), (195, 120, 50), "v"))
        cv.rrect(0.12, 0.45, 0.88, 0.54, 0.02, (205, 135, 60))
        for _ in range(14):
            cv.ellipse(
                *(lambda u, v: (u, v, u + 0.025, v + 0.014))(
                    rng.uniform(0.25, 0.72), rng.uniform(0.24, 0.4)
                ),
                (250, 240, 210),
            )
        return
    if any(w in it for w in ("coffee", "latte", "咖啡")):
        cx, cy = 0.5, 0.5
        cv.shadow(cx + 0.03, cy + 0.04, 0.4, 0.4, 0.35)
        cv.circle(cx, cy, 0.42, (246, 246, 244))
        cv.circle(cx, cy, 0.3, (250, 250, 250))
        cv.arc(cx + 0.18, cy - 0.1, cx + 0.42, cy + 0.1, 270, 90, (246, 246, 244), 0.04)
        cv.circle(cx, cy, 0.24, ((190, 130, 80), (120, 70, 35), "d"))
        cv.poly(
            [
                (cx, cy + 0.14),
                (cx - 0.13, cy - 0.02),
                (cx - 0.08, cy - 0.1),
                (cx, cy - 0.05),
                (cx + 0.08, cy - 0.1),
                (cx + 0.13, cy - 0.02),
            ],
            (245, 228, 205),
        )
        return
    if any(w in it for w in ("tea", "drink", "juice", "奶茶", "饮", "果茶", "boba", "smoothie")):
        cv.shadow(0.5, 0.9, 0.2, 0.04, 0.35)
        tea = hsv(rng.uniform(0.05, 0.1), rng.uniform(0.3, 0.6), rng.uniform(0.65, 0.85))
        if "juice" in it or "果" in it:
            tea = hsv(rng.uniform(0.0, 0.15), 0.7, 0.95)
        cv.line([(0.56, 0.02), (0.52, 0.4)], (240, 90, 110), 0.035)
        cv.poly([(0.3, 0.2), (0.7, 0.2), (0.65, 0.9), (0.35, 0.9)], (232, 236, 238))
        cv.poly(
            [(0.315, 0.3), (0.685, 0.3), (0.645, 0.88), (0.355, 0.88)],
            (_shade(tea, 0.2), _shade(tea, -0.1), "v"),
        )
        for _ in range(16):
            cv.circle(rng.uniform(0.39, 0.61), rng.uniform(0.76, 0.86), 0.028, (40, 26, 20))
        cv.rrect(0.28, 0.17, 0.72, 0.21, 0.01, (220, 224, 228))
        return
    if any(w in it for w in ("dumpling", "饺", "包子", "bun", "dim")):
        cv.shadow(0.53, 0.55, 0.44, 0.44, 0.35)
        cv.circle(0.5, 0.5, 0.44, (248, 248, 246))
        cv.circle(0.5, 0.5, 0.36, (240, 240, 238))
        for k in range(6):
            a = k * math.pi / 3 + rng.uniform(-0.2, 0.2)
            u, v = 0.5 + 0.22 * math.cos(a), 0.5 + 0.22 * math.sin(a)
            cv.ellipse(
                u - 0.1, v - 0.06, u + 0.1, v + 0.07, ((250, 244, 226), (222, 205, 170), "v")
            )
            cv.arc(u - 0.08, v - 0.1, u + 0.08, v + 0.02, 20, 160, (215, 198, 160), 0.006)
        return
    if any(w in it for w in ("sushi", "寿司")):
        cv.shadow(0.5, 0.55, 0.46, 0.3, 0.35)
        cv.rrect(0.04, 0.28, 0.96, 0.78, 0.02, ((120, 85, 50), (90, 60, 35), "v"))
        for r in range(2):
            for k in range(4):
                u, v = 0.1 + k * 0.21, 0.32 + r * 0.22
                cv.rrect(u, v + 0.04, u + 0.17, v + 0.18, 0.04, (248, 246, 240))
                cv.rrect(
                    u - 0.005,
                    v,
                    u + 0.175,
                    v + 0.1,
                    0.04,
                    ((250, 140, 90), (225, 95, 60), "d")
                    if (k + r) % 2
                    else ((235, 80, 70), (185, 40, 40), "d"),
                )
        return
    if any(w in it for w in ("hotpot", "火锅", "spicy", "麻辣")):
        cx, cy, ri = _bowl(cv, rng, 0.45)
        cv.circle(cx, cy, ri, (195, 40, 25))
        cv.d.pieslice(cv.box(cx - ri, cy - ri, cx + ri, cy + ri), 90, 270, fill=(238, 225, 200))
        cv.line([(cx, cy - ri), (cx, cy + ri)], (200, 200, 200), 0.015)
        for _ in range(18):
            a, d = rng.uniform(0, 6.28), rng.uniform(0.05, ri - 0.05)
            u, v = cx + d * math.cos(a), cy + d * math.sin(a)
            col = (120, 20, 15) if u > cx else (90, 160, 70)
            cv.ellipse(u - 0.025, v - 0.012, u + 0.025, v + 0.012, col)
        return
    if any(w in it for w in ("cake", "dessert", "蛋糕", "甜品")):
        cv.shadow(0.53, 0.55, 0.42, 0.42, 0.35)
        cv.circle(0.5, 0.5, 0.44, (250, 250, 250))
        cream = hsv(rng.choice([0.95, 0.08, 0.12, 0.0]), 0.25, 0.98)
        cv.circle(0.5, 0.5, 0.33, (_shade(cream, 0.2), _shade(cream, -0.12), "d"))
        for k in range(10):
            a = k * math.pi / 5
            cv.circle(0.5 + 0.26 * math.cos(a), 0.5 + 0.26 * math.sin(a), 0.04, (200, 30, 50))
        cv.circle(0.5, 0.5, 0.08, (250, 240, 235))
        return
    if any(w in it for w in ("chicken", "fried", "炸鸡", "wings", "fries", "薯条")):
        cv.shadow(0.52, 0.56, 0.44, 0.4, 0.35)
        cv.rrect(0.08, 0.12, 0.92, 0.9, 0.12, (200, 36, 32))
        cv.rrect(0.13, 0.17, 0.87, 0.85, 0.09, (246, 238, 220))
        for k in range(5):  # greaseproof paper check
            t = 0.25 + k * 0.14
            cv.line([(0.13, t), (0.87, t)], (238, 150, 140), 0.005)
            cv.line([(t - 0.01, 0.17), (t - 0.01, 0.85)], (238, 150, 140), 0.005)
        pieces = [
            (0.34, 0.36, 0.6),
            (0.62, 0.34, -0.5),
            (0.4, 0.64, 2.4),
            (0.66, 0.64, 3.5),
            (0.52, 0.5, 1.3),
        ]
        rng.shuffle(pieces)
        for u, v, a in pieces[: rng.randint(4, 5)]:
            du, dv = math.cos(a), math.sin(a)
            bone = (u + du * 0.19, v + dv * 0.19)
            cv.line([(u, v), bone], (236, 222, 196), 0.04)
            cv.circle(
                bone[0] + du * 0.01 - dv * 0.015,
                bone[1] + dv * 0.01 + du * 0.015,
                0.022,
                (244, 234, 214),
            )
            cv.circle(
                bone[0] + du * 0.01 + dv * 0.015,
                bone[1] + dv * 0.01 - du * 0.015,
                0.022,
                (244, 234, 214),
            )
            cv.ellipse(
                u - 0.11, v - 0.085, u + 0.11, v + 0.085, ((232, 162, 70), (150, 78, 28), "d")
            )
            for _ in range(4):
                cu, cvv = u + rng.uniform(-0.07, 0.07), v + rng.uniform(-0.05, 0.05)
                cv.circle(cu, cvv, 0.012, (246, 190, 100))
        return
    # noodles, rice, salad and unknown dishes: a bowl with toppings
    cx, cy, ri = _bowl(cv, rng)
    salad = any(w in it for w in ("salad", "沙拉", "poke", "bowl", "veg", "轻食"))
    rice = any(w in it for w in ("rice", "饭", "bibimbap", "curry", "咖喱", "盖浇", "炒饭"))
    if salad:
        cv.circle(cx, cy, ri, (120, 170, 70))
        for _ in range(14):
            a, d = rng.uniform(0, 6.28), rng.uniform(0, ri - 0.08)
            u, v = cx + d * math.cos(a), cy + d * math.sin(a)
            cv.ellipse(
                u - 0.07,
                v - 0.04,
                u + 0.07,
                v + 0.04,
                hsv(rng.uniform(0.22, 0.3), 0.6, rng.uniform(0.5, 0.8)),
            )
        for _ in range(5):
            a, d = rng.uniform(0, 6.28), rng.uniform(0.05, ri - 0.08)
            cv.circle(cx + d * math.cos(a), cy + d * math.sin(a), 0.045, (220, 50, 40))
        cv.ellipse(cx - 0.1, cy - 0.06, cx + 0.1, cy + 0.06, (250, 230, 170))
        return
    if rice:
        cv.circle(cx, cy, ri, (248, 246, 238))
        for _ in range(40):
            u, v = cx + rng.uniform(-ri, ri) * 0.75, cy + rng.uniform(-ri, ri) * 0.75
            cv.ellipse(u - 0.012, v - 0.006, u + 0.012, v + 0.006, (230, 226, 214))
        meat = hsv(rng.uniform(0.02, 0.08), 0.7, rng.uniform(0.45, 0.7))
        for _ in range(9):  # braised meat piled on one side
            u, v = cx + rng.uniform(0.0, 0.18), cy + rng.uniform(-0.2, 0.02)
            cv.rrect(
                u - 0.06,
                v - 0.045,
                u + 0.06,
                v + 0.045,
                0.02,
                (_shade(meat, 0.15), _shade(meat, -0.25), "d"),
            )
        for _ in range(8):  # greens on the other
            u, v = cx + rng.uniform(-0.22, -0.04), cy + rng.uniform(-0.18, 0.0)
            cv.ellipse(
                u - 0.06, v - 0.03, u + 0.06, v + 0.03, hsv(0.27, 0.6, rng.uniform(0.45, 0.7))
            )
        cv.circle(cx - 0.02, cy + 0.14, 0.085, (252, 252, 250))
        cv.circle(cx - 0.02, cy + 0.14, 0.04, (250, 185, 40))
        return
    broth = hsv(rng.uniform(0.03, 0.09), rng.uniform(0.45, 0.75), rng.uniform(0.6, 0.85))
    cv.circle(cx, cy, ri, (_shade(broth, 0.1), _shade(broth, -0.2), "d"))
    noodle = (246, 214, 130)
    for _ in range(11):
        u, v = cx + rng.uniform(-0.2, 0.12), cy + rng.uniform(-0.2, 0.12)
        r = rng.uniform(0.08, 0.14)
        a0 = rng.uniform(0, 360)
        cv.arc(u - r, v - r, u + r, v + r, a0, a0 + rng.uniform(120, 240), noodle, 0.014)
    for k in range(2):
        u, v = cx + 0.14 - k * 0.08, cy - 0.13 + k * 0.02
        cv.ellipse(u - 0.09, v - 0.06, u + 0.09, v + 0.06, (252, 250, 245))
        cv.circle(u, v, 0.04, (245, 160, 30))
    for _ in range(3):
        u, v = cx - 0.16 + rng.uniform(-0.04, 0.04), cy + 0.08 + rng.uniform(-0.08, 0.08)
        cv.ellipse(u - 0.09, v - 0.05, u + 0.09, v + 0.05, ((215, 150, 130), (165, 95, 75), "d"))
    for _ in range(22):
        a, d = rng.uniform(0, 6.28), rng.uniform(0, ri - 0.03)
        cv.circle(cx + d * math.cos(a), cy + d * math.sin(a), 0.012, (80, 160, 60))


# ---------------------------------------------------------------- places and vehicles


def _sky(cv: _Canvas, rng: random.Random, ground: float = 1.0, dusk: bool = False) -> None:
    if dusk:
        top, bottom = hsv(0.66, 0.55, 0.45), hsv(0.07, 0.55, 0.98)
    else:
        top = hsv(rng.uniform(0.56, 0.6), rng.uniform(0.45, 0.65), rng.uniform(0.8, 0.95))
        bottom = hsv(0.57, 0.12, 0.99)
    cv.vgrad([(0.0, top), (1.0, bottom)], (0, 0, cv.w, max(1, round(cv.h * ground))))


def _cloud(cv: _Canvas, u: float, v: float, s: float, color: RGB = (255, 255, 255)) -> None:
    for du, dv, r in ((0, 0, 0.08), (0.07, -0.03, 0.1), (0.15, 0, 0.08), (0.07, 0.02, 0.09)):
        cv.ellipse(
            u + du * s - r * s,
            v + dv * s - r * s * 0.7,
            u + du * s + r * s,
            v + dv * s + r * s * 0.7,
            color,
        )


def _hotel(cv: _Canvas, rng: random.Random, item: str, label: str) -> None:
    kind = item or rng.choice(["room", "room", "exterior", "pool"])
    if kind in ("room", "bedroom", "suite", "interior"):
        wall = hsv(rng.uniform(0.06, 0.12), rng.uniform(0.08, 0.22), rng.uniform(0.8, 0.95))
        cv.vgrad([(0.0, _shade(wall, 0.05)), (1.0, _shade(wall, -0.15))])
        floor = hsv(0.08, 0.35, rng.uniform(0.4, 0.6))
        cv.vgrad(
            [(0.0, _shade(floor, 0.1)), (1.0, _shade(floor, -0.2))],
            (0, round(cv.h * 0.78), cv.w, cv.h),
        )
        # window with a view
        wx1, wx2 = (0.04, 0.3) if rng.random() < 0.5 else (0.7, 0.96)
        x1, y1 = cv.q(wx1, 0.1)
        x2, y2 = cv.q(wx2, 0.6)
        sky = (hsv(0.58, 0.45, 0.95), hsv(0.56, 0.15, 1.0))
        sub = _Canvas(max(2, round(x2 - x1)), max(2, round(y2 - y1)))
        sub.vgrad([(0.0, sky[0]), (1.0, sky[1])])
        for k in range(5):
            bx = k / 5
            bh = rng.uniform(0.2, 0.6)
            sub.d.rectangle(
                [*sub.q(bx, 1 - bh), *sub.q(bx + 0.18, 1.0)], fill=hsv(0.6, 0.1, 0.7 - k * 0.04)
            )
        cv.im.paste(sub.im, (round(x1), round(y1)))
        cv.d.rectangle([x1, y1, x2, y2], outline=(245, 245, 240), width=max(2, cv.h // 60))
        cv.d.line(
            [((x1 + x2) / 2, y1), ((x1 + x2) / 2, y2)],
            fill=(245, 245, 240),
            width=max(1, cv.h // 90),
        )
        # bed: headboard, duvet, pillows
        head = hsv(rng.uniform(0.05, 0.12), 0.3, rng.uniform(0.35, 0.6))
        bx1 = 0.36 if wx1 < 0.5 else 0.06
        bx2 = bx1 + 0.58
        cv.d.rectangle([*cv.q(bx1, 0.36), *cv.q(bx2, 0.62)], fill=head)
        cv.d.rounded_rectangle(
            [*cv.q(bx1 - 0.03, 0.58), *cv.q(bx2 + 0.03, 0.9)],
            radius=cv.h * 0.03,
            fill=(248, 248, 246),
        )
        cv.d.rectangle(
            [*cv.q(bx1 - 0.03, 0.72), *cv.q(bx2 + 0.03, 0.78)], fill=hsv(rng.random(), 0.35, 0.7)
        )
        for k in range(2):
            px = bx1 + 0.05 + k * 0.26
            cv.d.rounded_rectangle(
                [*cv.q(px, 0.5), *cv.q(px + 0.22, 0.6)],
                radius=cv.h * 0.03,
                fill=(255, 255, 255),
                outline=(225, 225, 222),
            )
        lamp = (255, 226, 160)
        lx = bx2 + 0.08 if bx2 + 0.1 < 1 else bx1 - 0.08
        cv.d.polygon(
            [
                cv.q(lx - 0.04, 0.38),
                cv.q(lx + 0.04, 0.38),
                cv.q(lx + 0.05, 0.46),
                cv.q(lx - 0.05, 0.46),
            ],
            fill=lamp,
        )
        cv.d.rectangle([*cv.q(lx - 0.005, 0.46), *cv.q(lx + 0.005, 0.6)], fill=(90, 80, 70))
        cv.glow(0.5 + (lx - 0.5) * cv.w / cv.S, 0.42, 0.25, (255, 230, 170), 0.3)
        return
    if kind in ("pool", "resort"):
        _sky(cv, rng, 0.55)
        _cloud(cv, rng.uniform(0.05, 0.5), 0.15, 0.8)
        cv.vgrad(
            [(0.0, (235, 222, 200)), (1.0, (210, 195, 170))], (0, round(cv.h * 0.5), cv.w, cv.h)
        )
        cv.d.polygon(
            [cv.q(0.15, 0.62), cv.q(0.85, 0.62), cv.q(1.0, 0.95), cv.q(0.0, 0.95)],
            fill=(60, 180, 220),
        )
        cv.d.polygon(
            [cv.q(0.25, 0.7), cv.q(0.6, 0.7), cv.q(0.55, 0.76), cv.q(0.2, 0.76)],
            fill=(140, 220, 240),
        )
        for k in range(3):
            u = 0.08 + k * 0.12
            cv.d.polygon(
                [cv.q(u, 0.3), cv.q(u + 0.02, 0.3), cv.q(u + 0.015, 0.58), cv.q(u + 0.005, 0.58)],
                fill=(110, 80, 50),
            )
            cv.d.ellipse([*cv.q(u - 0.07, 0.24), *cv.q(u + 0.09, 0.34)], fill=(50, 130, 60))
        cv.d.rectangle([*cv.q(0.55, 0.2), *cv.q(0.95, 0.52)], fill=(245, 240, 230))
        for r in range(3):
            for k in range(4):
                cv.d.rectangle(
                    [
                        *cv.q(0.58 + k * 0.09, 0.24 + r * 0.09),
                        *cv.q(0.64 + k * 0.09, 0.3 + r * 0.09),
                    ],
                    fill=(120, 170, 200),
                )
        return
    # exterior
    dusk = rng.random() < 0.35
    _sky(cv, rng, 1.0, dusk)
    if not dusk:
        _cloud(cv, rng.uniform(0.0, 0.3), rng.uniform(0.08, 0.2), 0.9)
    facade = hsv(rng.uniform(0.05, 0.6), rng.uniform(0.05, 0.25), rng.uniform(0.7, 0.92))
    glass = hsv(0.58, 0.35, 0.55) if not dusk else (255, 214, 140)
    x1 = rng.uniform(0.16, 0.3)
    x2 = x1 + rng.uniform(0.45, 0.6)
    top = rng.uniform(0.1, 0.25)
    cv.d.rectangle([*cv.q(x1, top), *cv.q(x2, 1.0)], fill=facade)
    cv.d.rectangle([*cv.q(x1, top), *cv.q(x1 + 0.03, 1.0)], fill=_shade(facade, -0.15))
    cols, rows = rng.randint(4, 6), rng.randint(6, 9)
    for r in range(rows):
        for k in range(cols):
            u = x1 + 0.05 + k * (x2 - x1 - 0.07) / cols
            v = top + 0.04 + r * (0.8 - top) / rows
            lit = dusk and rng.random() < 0.5
            cv.d.rectangle(
                [
                    *cv.q(u, v),
                    *cv.q(u + (x2 - x1 - 0.07) / cols * 0.7, v + (0.8 - top) / rows * 0.6),
                ],
                fill=glass if not dusk or lit else hsv(0.62, 0.3, 0.35),
            )
    cv.d.rectangle([*cv.q(x1 - 0.04, 0.84), *cv.q(x2 + 0.04, 0.88)], fill=_shade(facade, -0.3))
    cv.d.rectangle(
        [*cv.q(x1 + 0.15, 0.88), *cv.q(x2 - 0.15, 1.0)],
        fill=(255, 230, 170) if dusk else (60, 70, 80),
    )
    side = hsv(rng.random(), 0.1, 0.75)
    cv.d.rectangle([*cv.q(x2 + 0.02, top + 0.2), *cv.q(1.0, 1.0)], fill=_shade(side, -0.1))
    for k in range(3):
        u = rng.uniform(0.0, 1.0)
        cv.d.ellipse(
            [*cv.q(u - 0.1, 0.78), *cv.q(u + 0.1, 0.98)], fill=hsv(0.3, 0.5, 0.45 + k * 0.05)
        )


def _airline(cv: _Canvas, rng: random.Random, item: str, label: str) -> None:
    brand = py_rng("airline", label or item or rng.random())
    c1 = hsv(brand.random(), brand.uniform(0.6, 0.9), brand.uniform(0.45, 0.8))
    c2 = hsv(brand.random(), brand.uniform(0.6, 0.9), brand.uniform(0.75, 0.95))
    cv.vgrad([(0.0, hsv(0.58, 0.55, rng.uniform(0.78, 0.92))), (1.0, hsv(0.56, 0.12, 1.0))])
    for _ in range(3):
        _cloud(
            cv,
            rng.uniform(-0.1, 0.8),
            rng.uniform(0.1, 0.9),
            rng.uniform(0.6, 1.2),
            (255, 255, 255),
        )
    # fuselage tail and the fin
    cv.poly([(0.0, 0.78), (0.7, 0.7), (1.0, 0.62), (1.0, 1.0), (0.0, 1.0)], (246, 247, 250))
    fin = [(0.22, 0.76), (0.5, 0.12), (0.82, 0.08), (0.74, 0.72)]
    cv.poly(fin, (_shade(c1, 0.1), _shade(c1, -0.2), "d"))
    cv.poly([(0.5, 0.12), (0.82, 0.08), (0.79, 0.3), (0.42, 0.3)], c2)
    cv.circle(0.58, 0.48, 0.12, (255, 255, 255))
    cv.circle(0.58, 0.48, 0.1, c2)
    code = (label or "").strip()[:3] or "".join(
        brand.choice("ABCDEFGHJKLMNPQRSTUVWXZ") for _ in range(2)
    )
    cv.text(0.58, 0.48, code, cv.fit_text(code, 0.17, 0.1), (255, 255, 255))


def _train(cv: _Canvas, rng: random.Random, item: str, label: str) -> None:
    _sky(cv, rng, 0.65)
    cv.vgrad(
        [(0.0, hsv(0.28, 0.35, 0.7)), (1.0, hsv(0.25, 0.4, 0.5))],
        (0, round(cv.h * 0.62), cv.w, cv.h),
    )
    for k in range(4):
        u = k * 0.3 + rng.uniform(-0.1, 0.1)
        cv.d.polygon(
            [cv.q(u - 0.25, 0.65), cv.q(u, 0.42 + rng.uniform(-0.05, 0.05)), cv.q(u + 0.25, 0.65)],
            fill=hsv(0.5, 0.15, 0.62),
        )
    stripe = hsv(rng.choice([0.0, 0.58, 0.6, 0.33, 0.08]), 0.8, 0.75)
    body = [(1.05, 0.4), (0.45, 0.4), (0.2, 0.5), (0.04, 0.7), (0.1, 0.8), (1.05, 0.8)]
    cv.poly(body, ((252, 252, 252), (205, 208, 215), "v"))
    cv.poly([(1.05, 0.66), (0.1, 0.68), (0.08, 0.73), (1.05, 0.73)], stripe)
    cv.poly([(0.42, 0.45), (0.28, 0.5), (0.2, 0.58), (0.44, 0.58)], (40, 50, 65))
    for k in range(4):
        u = 0.52 + k * 0.13
        cv.rrect(u, 0.47, u + 0.1, 0.58, 0.015, (45, 55, 70))
    cv.rrect(0.0, 0.82, 1.0, 0.86, 0.0, (95, 90, 85))
    cv.line([(0.0, 0.9), (1.0, 0.9)], (150, 150, 150), 0.01)
    if label:
        cv.text(0.72, 0.625, label, cv.fit_text(label, 0.4, 0.06), _shade(stripe, -0.2), bold=True)


def _car(cv: _Canvas, rng: random.Random, item: str, label: str) -> None:
    _studio(cv, rng)
    c = _object_colour(rng)
    cv.shadow(0.5, 0.78, 0.46, 0.05, 0.5)
    body = [
        (0.04, 0.7),
        (0.06, 0.56),
        (0.22, 0.5),
        (0.34, 0.36),
        (0.66, 0.35),
        (0.8, 0.48),
        (0.94, 0.52),
        (0.97, 0.66),
        (0.94, 0.72),
        (0.06, 0.74),
    ]
    cv.poly(body, (_shade(c, 0.25), _shade(c, -0.3), "v"))
    glass = (60, 75, 95)
    cv.poly([(0.36, 0.39), (0.49, 0.39), (0.49, 0.5), (0.26, 0.5)], glass)
    cv.poly([(0.52, 0.39), (0.64, 0.39), (0.75, 0.5), (0.52, 0.5)], glass)
    cv.line([(0.07, 0.6), (0.95, 0.6)], _shade(c, 0.35), 0.006)
    for u in (0.24, 0.76):
        cv.circle(u, 0.72, 0.1, (28, 28, 30))
        cv.circle(u, 0.72, 0.055, (175, 178, 182))
        cv.circle(u, 0.72, 0.02, (60, 60, 64))
    cv.ellipse(0.9, 0.55, 0.96, 0.59, (255, 240, 200))


def _restaurant(cv: _Canvas, rng: random.Random, item: str, label: str) -> None:
    if item and item not in ("interior", "dining", "room"):
        _food(cv, rng, item, label)
        return
    if rng.random() < 0.4:
        _food(
            cv, rng, rng.choice(["noodles", "rice", "hotpot", "salad", "pizza", "dumplings"]), label
        )
        return
    wall = hsv(rng.uniform(0.04, 0.1), rng.uniform(0.35, 0.6), rng.uniform(0.35, 0.6))
    cv.vgrad([(0.0, _shade(wall, -0.3)), (0.7, wall), (1.0, _shade(wall, -0.1))])
    for k in range(rng.randint(2, 4)):
        u = 0.15 + k * 0.28
        cv.line([(u, 0.0), (u, 0.2)], (40, 35, 30), 0.006)
        cv.glow(u, 0.27, 0.2, (255, 210, 140), 0.45)
        cv.d.pieslice(cv.box(u - 0.08, 0.18, u + 0.08, 0.34), 180, 360, fill=(40, 38, 36))
        cv.circle(u, 0.26, 0.02, (255, 240, 200))
    cv.vgrad([(0.0, (90, 60, 40)), (1.0, (55, 35, 25))], (0, round(cv.h * 0.7), cv.w, cv.h))
    for k in range(3):
        u = 0.1 + k * 0.35
        cv.ellipse(u, 0.6, u + 0.26, 0.7, (235, 232, 225))
        cv.rrect(u + 0.12, 0.68, u + 0.14, 0.92, 0.0, (50, 35, 25))
        cv.circle(u + 0.13, 0.63, 0.03, (250, 250, 250))


def _poster(cv: _Canvas, rng: random.Random, item: str, label: str) -> None:
    hue = rng.random()
    cv.vgrad(
        [
            (0.0, hsv(hue, 0.7, 0.12)),
            (0.55, hsv(hue + 0.05, 0.75, 0.45)),
            (1.0, hsv(hue + 0.1, 0.6, 0.08)),
        ]
    )
    glow = hsv(hue + 0.5 if rng.random() < 0.5 else hue + 0.08, 0.5, 1.0)
    cv.glow(0.5, rng.uniform(0.3, 0.42), 0.36, glow, 0.6)
    motif = rng.randrange(3)
    if motif == 0:  # a figure against a big moon
        cv.circle(0.5, 0.36, 0.22, mix(glow, (255, 255, 255), 0.4))
        cv.circle(0.5, 0.42, 0.07, (12, 12, 16))
        cv.poly([(0.38, 0.78), (0.42, 0.52), (0.5, 0.48), (0.58, 0.52), (0.62, 0.78)], (12, 12, 16))
    elif motif == 1:  # skyline
        for k in range(12):
            u = k / 12
            top = rng.uniform(0.35, 0.6)
            cv.d.rectangle([*cv.q(u, top), *cv.q(u + 1 / 12 + 0.01, 0.8)], fill=(10, 10, 14))
            for _ in range(3):
                wu, wv = u + rng.uniform(0.01, 0.06), rng.uniform(top + 0.02, 0.75)
                cv.d.rectangle([*cv.q(wu, wv), *cv.q(wu + 0.012, wv + 0.01)], fill=(255, 210, 120))
    else:  # mountain ridges with a lone figure on the nearest peak
        for k, (top, shade) in enumerate(((0.42, 0.45), (0.52, 0.3), (0.62, 0.12))):
            peak = rng.uniform(0.3, 0.7)
            col = mix(hsv(hue, 0.6, 0.3), (8, 8, 12), 1 - shade)
            cv.poly(
                [
                    (-0.1, 0.8),
                    (peak - 0.3, top + 0.12),
                    (peak, top),
                    (peak + 0.35, top + 0.15),
                    (1.1, 0.8),
                ],
                col,
            )
            if k == 2:
                cv.rrect(peak - 0.008, top - 0.06, peak + 0.008, top, 0.004, (8, 8, 12))
                cv.circle(peak, top - 0.07, 0.012, (8, 8, 12))
    cv.vgrad([(0.0, hsv(hue, 0.6, 0.06)), (1.0, (0, 0, 0))], (0, round(cv.h * 0.78), cv.w, cv.h))
    title = (label or "").strip()
    if title:
        lines = _wrap_poster(title)
        size = min(cv.fit_text(ln, 0.84, 0.12) for ln in lines)
        for i, ln in enumerate(lines):
            cv.text(0.5, 0.86 - (len(lines) - 1 - i) * size * 1.15, ln, size, (255, 255, 255))
    for k in range(2):
        w = rng.uniform(0.3, 0.5) - k * 0.1
        cv.rrect(0.5 - w / 2, 0.94 + k * 0.025, 0.5 + w / 2, 0.95 + k * 0.025, 0.0, (120, 120, 125))


def _wrap_poster(title: str) -> list[str]:
    words = title.split()
    if len(words) <= 2 or len(title) <= 12:
        return [title]
    half = len(words) // 2
    return [" ".join(words[:half]), " ".join(words[half:])]


def _app(cv: _Canvas, rng: random.Random, item: str, label: str) -> None:
    bg = hsv(rng.random(), 0.05, 0.98)
    cv.im.paste(bg, (0, 0, cv.w, cv.h))
    hue = rng.random()
    c1, c2 = hsv(hue, rng.uniform(0.55, 0.85), 0.98), hsv(hue + rng.uniform(0.04, 0.12), 0.85, 0.75)
    cv.shadow(0.5, 0.55, 0.42, 0.42, 0.2)
    cv.rrect(0.1, 0.1, 0.9, 0.9, 0.19, (c1, c2, "d"))
    glyph = (label or "").strip()[:1]
    kind = rng.randrange(5)
    white = (255, 255, 255)
    if glyph and rng.random() < 0.6:
        cv.text(0.5, 0.5, glyph, 0.42, white)
    elif kind == 0:
        cv.poly([(0.4, 0.32), (0.7, 0.5), (0.4, 0.68)], white)
    elif kind == 1:
        cv.rrect(0.28, 0.3, 0.72, 0.62, 0.08, white)
        cv.poly([(0.36, 0.6), (0.34, 0.72), (0.48, 0.6)], white)
    elif kind == 2:
        cv.circle(0.5, 0.5, 0.2, white)
        cv.circle(0.5, 0.5, 0.1, c1)
    elif kind == 3:
        cv.rrect(0.28, 0.34, 0.72, 0.68, 0.05, white)
        cv.circle(0.5, 0.51, 0.1, c2)
        cv.rrect(0.4, 0.29, 0.6, 0.36, 0.02, white)
    else:
        for k in range(3):
            cv.rrect(0.3 + k * 0.15, 0.62 - k * 0.12, 0.4 + k * 0.15, 0.7, 0.02, white)


def _item(cv: _Canvas, rng: random.Random, item: str, label: str) -> None:
    """A second-hand listing photo: the object on a floor or table, warm phone-camera cast."""
    wall = hsv(rng.uniform(0.05, 0.15), rng.uniform(0.04, 0.15), rng.uniform(0.78, 0.92))
    floor = hsv(rng.uniform(0.06, 0.1), rng.uniform(0.2, 0.5), rng.uniform(0.5, 0.8))
    horizon = rng.uniform(0.45, 0.62)
    cv.vgrad(
        [(0.0, _shade(wall, -0.05)), (1.0, _shade(wall, 0.05))], (0, 0, cv.w, round(cv.h * horizon))
    )
    cv.vgrad(
        [(0.0, _shade(floor, 0.05)), (1.0, _shade(floor, -0.15))],
        (0, round(cv.h * horizon), cv.w, cv.h),
    )
    draw = _product_drawer(item) or rng.choice([_box, _chair, _bag, _book, _speaker])
    draw(cv, rng, mix(_object_colour(rng), (255, 214, 160), 0.1))


def _generic(cv: _Canvas, rng: random.Random, item: str, label: str) -> None:
    hue = rng.random()
    cv.vgrad([(0.0, hsv(hue, 0.35, 0.95)), (1.0, hsv(hue + 0.1, 0.55, 0.7))])
    cv.shadow(0.5, 0.82, 0.3, 0.05)
    shape = rng.randrange(3)
    c = hsv(hue + 0.5, 0.55, 0.85)
    if shape == 0:
        cv.circle(0.5, 0.5, 0.28, _grad(c))
    elif shape == 1:
        cv.rrect(0.24, 0.24, 0.76, 0.76, 0.08, _grad(c))
    else:
        cv.poly([(0.5, 0.2), (0.8, 0.76), (0.2, 0.76)], _grad(c))
    if label:
        cv.text(0.5, 0.9, label[:16], cv.fit_text(label[:16], 0.8, 0.08), (255, 255, 255))


COVER_FAMILIES: dict[str, Callable[[_Canvas, random.Random, str, str], None]] = {
    "product": _product,
    "food": _food,
    "hotel": _hotel,
    "airline": _airline,
    "train": _train,
    "poster": _poster,
    "app": _app,
    "car": _car,
    "restaurant": _restaurant,
    "item": _item,
}
