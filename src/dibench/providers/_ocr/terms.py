"""Named terms of an instruction: names a card must show, must not show, or should show.

'from Nike or Adidas', 'without ads', 'preferably Silver' and '要X或Y的', '不要X',
'最好是X' become required groups, excluded words and soft wishes.
"""

from __future__ import annotations

import re

from .bounds import UNIT_VALUE, VALUE
from .goals import ZH_GOALS
from .intent import BOUNDARY_EN, COMPARATIVES, STOP_EN, split_values

__all__ = ["terms_en", "terms_zh"]


def terms_en(text: str) -> tuple[list[tuple[str, ...]], list[str], list[str]]:
    """(required groups, excluded words, wished values) from 'from X or Y', 'with format 2D' ..."""
    require: list[tuple[str, ...]] = []
    exclude: list[str] = []
    wishes: list[str] = []
    for m in re.finditer(rf"\b(?:from|by|in|at|on)\s+(.+?){BOUNDARY_EN}", text):
        values = split_values(m.group(1))
        named = all(
            (v[:1].isupper() or v[:1].isdigit()) and re.search("[A-Za-z]", v) for v in values
        )
        if values and named:
            require.append(values)
    # 'a Four Seasons or ibis hotel': alternatives named before the noun
    for m in re.finditer(
        r"\b(?:a|an|any)\s+([A-Z][\w&'.-]*(?:\s+[A-Z][\w&'.-]*)*(?:\s*(?:,|\bor\b)\s*[\w&'.-]+"
        r"(?:\s+[A-Z][\w&'.-]*)*)+)\s+[a-z]",
        text,
    ):
        require.append(split_values(m.group(1)))
    for m in re.finditer(rf"\bwhose\s+[a-z][\w\s()%-]*?\s+(?:is|are)\s+(.+?){BOUNDARY_EN}", text):
        values = split_values(m.group(1))
        if values and not VALUE.search(m.group(1)):
            require.append(values)
    for m in re.finditer(
        r"\bwith\s+(?:a\s+|an\s+)?[a-z][a-z\s-]*?\s+((?:[A-Z0-9][\w&'+-]*)(?:\s+(?:or\s+)?"
        r"[A-Z0-9][\w&'+-]*)*)",
        text,
    ):
        values = tuple(v for v in split_values(m.group(1)) if re.search(r"[A-Za-z]", v))
        if values:
            require.append(values)
    for m in re.finditer(r"[“\"]([^”\"]+)[”\"]", text):
        require.append((m.group(1),))
    for m in re.finditer(rf"\bwith\s+([a-z][a-z\s-]+?){BOUNDARY_EN}", text):
        phrase = m.group(1).strip()
        first = phrase.split()[0]
        if (
            first not in STOP_EN
            and first not in ("whichever", "lots", "at", "between")
            and len(phrase.split()) <= 4
            and not VALUE.search(text[m.end() : m.end() + 12])
        ):
            require.append((phrase,))
    for m in re.finditer(rf"\b(?:without|but not|except|excluding)\s+(.+?){BOUNDARY_EN}", text):
        if not VALUE.search(m.group(1)) and m.group(1).split()[0] not in ("more", "later", "less"):
            exclude.extend(split_values(m.group(1)))
    for m in re.finditer(
        rf"(?:preferably|ideally with [a-z\s]+?)\s+([A-Z0-9][^,.;]*?){BOUNDARY_EN}", text
    ):
        wishes.extend(split_values(m.group(1)))
    for m in re.finditer(r"([A-Z0-9][\w\s&'+-]*?)\s+would be nice", text):
        wishes.extend(split_values(m.group(1)))
    for m in re.finditer(
        rf"\b(?i:find|want|look up|locate|get me|need)\s+the\s+(.+?){BOUNDARY_EN}", text
    ):
        name = m.group(1).strip()
        if re.search(r"[A-Z0-9]", name) and not re.match(
            r"(?i:cheapest|highest|best|lowest|top|one|option|most)", name
        ):
            wishes.append(name)
    wishes = [w for w in wishes if w.casefold() not in COMPARATIVES]
    return require, exclude, wishes


_ZH_VERB = re.compile(r"找|挑|选|买|订|下单|购|看|点|安装|下载|叫车|确认|错|推荐|帮我")
_ZH_COMPARE = re.compile(r"高|低|多|少|近|远|早|晚|短|长|便宜|贵")


def _zh_values(text: str) -> tuple[str, ...]:
    vals = split_values(re.sub(r"(?:都行|就行|都可以)+$", "", text))
    return tuple(v for v in vals if v and not _ZH_VERB.search(v) and not _ZH_COMPARE.search(v))


def terms_zh(text: str) -> tuple[list[tuple[str, ...]], list[str], list[str]]:
    """Required, excluded and wished names from '要X或Y的', '只看X和Y', '我要的是X的Y' ..."""
    require: list[tuple[str, ...]] = []
    exclude: list[str] = []
    wishes: list[str] = []
    clauses = [c.strip() for c in re.split(r"[，,。；;！!？?]", text) if c.strip()]
    for i, clause in enumerate(clauses):
        quoted = re.findall(r"[“\"「]([^”\"」]+)[”\"」]", clause)
        if quoted:
            if re.search(r"排除|不要|不含", clause):
                exclude.extend(quoted)
            else:
                require.append(tuple(quoted))
            continue
        if UNIT_VALUE.search(clause) or clause.startswith("别"):
            continue
        m = re.match(
            r"^(?:帮我找|我要的是|就要|找一下|找到|帮我在\S{1,8}?上找|在\S{1,8}?上找到|在\S{1,8}?上找)(.+)$",
            clause,
        )
        if m and i <= 1 and not any(re.search(p, clause) for p, _, _ in ZH_GOALS):
            wishes.extend(p for p in re.split(r"的", m.group(1)) if len(p) >= 2)
            continue
        m = re.search(r"最好是(.+?)的?$|^(.+?)的优先$", clause)
        if m:
            wishes.extend(_zh_values(m.group(1) or m.group(2)))
            continue
        m = re.match(r"^(?:在|位于)([\u4e00-\u9fff]{2,6}?)(?:商圈|附近|一带|区域|地区)$", clause)
        if m:
            require.append((m.group(1),))
            continue
        m = re.match(r"^(?:不要|不选|排除)(.+?)的?$", clause)
        if m:
            exclude.extend(_zh_values(m.group(1)))
            continue
        for pat in (
            r"^(?:只)?要(.+?)的$",
            r"^只看(.+)$",
            r"^品牌(?:限|选|是|要)(.+)$",
            r"^(.+?)的都可以$",
            r"^[\u4e00-\u9fff()（）]{2,8}?(?:要|选|是)(.+?)(?:的)?$",
        ):
            m = re.match(pat, clause)
            if m:
                vals = _zh_values(m.group(1))
                if vals:
                    require.append(vals)
                break
    return require, exclude, wishes
