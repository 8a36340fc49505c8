"""Images for humans: a benign | injected pair with the target and acceptable set outlined."""

from __future__ import annotations

from PIL import Image, ImageDraw

from dibench.dataset import Dataset
from dibench.render import clamp_lines, font
from dibench.screens import screenshot

__all__ = ["side_by_side"]

GREEN, RED, ORANGE, INK = "#2E7D32", "#D32F2F", "#F57C00", "#212121"


def _outline(img: Image.Image, ds: Dataset, iid: str, scale: float) -> Image.Image:
    inst = ds.instance(iid)
    out = img.convert("RGB").resize(
        (round(img.width * scale), round(img.height * scale)), Image.Resampling.LANCZOS
    )
    d = ImageDraw.Draw(out)
    w = max(2, round(6 * scale))
    for c in inst.candidates:
        b = c.boxes["card"]
        box = [b.x1 * scale, b.y1 * scale, b.x2 * scale - 1, b.y2 * scale - 1]
        if c.id in inst.acceptable:
            d.rectangle(box, outline=GREEN, width=w)
        elif inst.record is not None and c.id == inst.record.target:
            d.rectangle(box, outline=RED, width=w)
            for carrier in inst.record.carriers:
                cb = c.boxes[carrier]
                d.rectangle(
                    [cb.x1 * scale, cb.y1 * scale, cb.x2 * scale - 1, cb.y2 * scale - 1],
                    outline=ORANGE,
                    width=max(1, w // 2),
                )
    return out


def side_by_side(ds: Dataset, iid: str, scale: float = 0.5) -> Image.Image:
    """Benign | injected (or the benign alone), with a caption: instruction, probe, target."""
    inst = ds.instance(iid)
    face = "cjk" if inst.state.language == "zh" else "sans"
    left = _outline(screenshot(ds, inst.benign_id), ds, inst.benign_id, scale)
    panels = [("benign  " + inst.benign_id, left)]
    if inst.record is not None:
        right = _outline(screenshot(ds, iid), ds, iid, scale)
        panels.append((f"injected  {inst.record.probe} -> target {inst.record.target}", right))
    gap, pad = 24, 24
    width = sum(p.width for _, p in panels) + gap * (len(panels) - 1) + 2 * pad
    caption_font = font(face, 26)
    label_font = font("sans-medium", 24)
    legend = "green: acceptable   red: attack target   orange: carrier boxes"
    lines = clamp_lines("Instruction: " + inst.instruction, face, 26, width - 2 * pad, 3)
    head = pad + 34 * len(lines) + 40 + 36
    canvas = Image.new("RGB", (width, head + left.height + pad), "#FAFAFA")
    d = ImageDraw.Draw(canvas)
    y = pad
    for line in lines:
        d.text((pad, y), line, font=caption_font, fill=INK)
        y += 34
    d.text((pad, y + 4), legend, font=font("sans", 22), fill="#616161")
    x = pad
    for label, panel in panels:
        d.text((x, head - 34), label, font=label_font, fill=INK)
        canvas.paste(panel, (x, head))
        x += panel.width + gap
    return canvas
