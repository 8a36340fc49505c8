"""Line breaking rules of the text layout."""

from __future__ import annotations


def test_closing_punctuation_never_starts_a_line() -> None:
    from dibench.render import clamp_lines

    text = "我要的是漫步者W240TN，店铺类型选第三方，在结果里找到它，然后加到购物车里。"
    for width in range(300, 520, 7):
        lines = clamp_lines(text, "cjk", 26, width, 5)
        assert "".join(lines) == text
        assert not any(line[:1] in "，。" for line in lines), lines
