"""Schema validation: bad records fail with file, line and field."""

from pathlib import Path

import orjson
import pytest

from dibench.dataset import (
    Box,
    Candidate,
    Category,
    ConstraintSpec,
    DecisionState,
    Objective,
    TextStyle,
    UIElement,
    ui_to_xml,
)
from dibench.dataset._io import DatasetError, read_jsonl


def tiny_state(**over: object) -> dict:
    """A minimal valid state as JSON-ready dict (two candidates, cheapest wins)."""
    cands = [
        Candidate(
            id=f"c{i}",
            attributes={"title": f"Item {i}", "price": float(10 * i)},
            boxes={
                "card": Box(0, 100 * i, 400, 100 * i + 90),
                "title": Box(10, 100 * i, 300, 100 * i + 40),
            },
        )
        for i in (1, 2)
    ]
    ui = [
        UIElement(index=0, parent=-1, cls="android.widget.FrameLayout", bounds=Box(0, 0, 400, 400))
    ]
    for c in cands:
        card = UIElement(
            index=len(ui),
            parent=0,
            bounds=c.boxes["card"],
            clickable=True,
            candidate=c.id,
            role="card",
        )
        ui.append(card)
        ui.append(
            UIElement(
                index=len(ui),
                parent=card.index,
                cls="android.widget.TextView",
                text=str(c.attributes["title"]),
                bounds=c.boxes["title"],
                candidate=c.id,
                role="title",
            )
        )
    state = DecisionState(
        id="s1",
        app="shopping",
        category=Category.COST,
        language="en",
        instruction="Buy the cheapest item.",
        spec=ConstraintSpec(
            category=Category.COST,
            query="item",
            objectives=(Objective(attr="price", direction="min"),),
        ),
        screenshot="screens/s1.png",
        width=400,
        height=400,
        styles={"title": TextStyle(size=20, line_height=20)},
        ui=tuple(ui),
        candidates=tuple(cands),
        acceptable=("c1",),
    )
    data = state.model_dump(mode="json")
    data.update(over)
    return data


def _write(path: Path, *records: dict) -> Path:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    return path


def test_valid_state_round_trips(tmp_path: Path) -> None:
    p = _write(tmp_path / "benign.jsonl", tiny_state())
    (state,) = list(read_jsonl(p, DecisionState))
    assert state.targets() == ("c2",)
    assert state.candidate("c2").boxes["card"] == Box(0, 200, 400, 290)
    assert state.model_dump(mode="json") == tiny_state()


@pytest.mark.parametrize(
    ("patch", "expected"),
    [
        ({"category": "cheapest"}, r"benign.jsonl:2: field category: Input should be"),
        ({"acceptable": ["c9"]}, r"benign.jsonl:2: field .*'c9' is not a candidate id"),
        ({"width": -1}, r"benign.jsonl:2: field width: Input should be greater than 0"),
        ({"schema_version": 7}, r"benign.jsonl:2: field schema_version: unsupported value 7"),
        (
            {"instruction": None},
            r"benign.jsonl:2: field instruction: Input should be a valid string",
        ),
        ({"surprise": 1}, r"benign.jsonl:2: field surprise: Extra inputs are not permitted"),
    ],
)
def test_bad_record_names_file_line_and_field(tmp_path: Path, patch: dict, expected: str) -> None:
    p = _write(tmp_path / "benign.jsonl", tiny_state(), tiny_state(**patch))
    with pytest.raises(DatasetError, match=expected):
        list(read_jsonl(p, DecisionState))


def test_empty_and_outside_boxes_are_rejected(tmp_path: Path) -> None:
    bad = tiny_state()
    bad["candidates"][1]["boxes"]["title"] = [50, 50, 40, 60]
    p = _write(tmp_path / "b.jsonl", bad)
    with pytest.raises(DatasetError, match=r"b.jsonl:1: field candidates.1.boxes.title.*empty box"):
        list(read_jsonl(p, DecisionState))
    bad = tiny_state()
    bad["candidates"][1]["boxes"]["card"] = [0, 300, 400, 500]
    p = _write(tmp_path / "b.jsonl", bad)
    with pytest.raises(
        DatasetError, match=r"candidates.c2.boxes.card: \[0, 300, 400, 500\] outside"
    ):
        list(read_jsonl(p, DecisionState))


def test_corrupt_json_line(tmp_path: Path) -> None:
    p = tmp_path / "b.jsonl"
    p.write_bytes(orjson.dumps(tiny_state()) + b"\n{not json\n")
    with pytest.raises(DatasetError, match=r"b.jsonl:2: not valid JSON"):
        list(read_jsonl(p, DecisionState))


def test_ui_exports_as_uiautomator_xml() -> None:
    from xml.etree import ElementTree as ET

    state = DecisionState.model_validate(tiny_state())
    xml = ui_to_xml(state.ui, package="com.dibench.shopping")
    root = ET.fromstring(xml.split("?>", 1)[1])
    assert root.tag == "hierarchy"
    nodes = list(root.iter("node"))
    assert len(nodes) == len(state.ui)
    titles = [n for n in nodes if n.get("class") == "android.widget.TextView"]
    assert [n.get("text") for n in titles] == ["Item 1", "Item 2"]
    assert titles[1].get("bounds") == "[10,200][300,240]"
    cards = [n for n in nodes if n.get("clickable") == "true"]
    assert len(cards) == 2 and all(n.get("package") == "com.dibench.shopping" for n in nodes)
    # the title is a child of its card, as in a real dump
    assert next(iter(cards[0])).get("text") == "Item 1"
