"""The typed on-disk records (``dibench._records``): one reader, one writer, errors that name
the file and the field, older schemas read only when asked to be tolerant."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from dibench._records import ATTACK_SCHEMA, AttackFile, ConditionRecord, RecordError


def _file(**over: object) -> dict[str, object]:
    """An attack.json as a finished search writes it (one template, one fixed probe)."""
    base: dict[str, object] = {
        "schema": ATTACK_SCHEMA,
        "status": "done",
        "identity": {"dataset": "/d", "framework": "direct", "model": "m", "config": {"seed": 0}},
        "split": {"train": ["s1"], "heldout": ["s2"], "targets": {"s1": "c1", "s2": "c3"}},
        "budget": 10,
        "spent": 10,
        "history": [{"generation": 0, "rung_states": 1, "spent": 4, "best_train_asr": 0.5}],
        "candidates": {"atk-1": {"kind": "template", "describe": "override.0 @title"}},
        "rejected": [],
        "top": ["atk-1"],
        "best_fixed": "naive",
        "heldout": {
            "pairs": 1,
            "eval_queries": 2,
            "results": [
                {"probe": "atk-1", "kind": "template", "describe": "override.0 @title",
                 "k": 1, "n": 1, "asr": 1.0, "lo": 0.2, "hi": 1.0, "states": 1,
                 "method": "single-state"},
            ],
            "tests": [
                {"template": "atk-1", "fixed": "naive", "n": 1, "states": 1, "diff": 1.0,
                 "lo": None, "hi": None, "p_value": None, "method": "single-state",
                 "test": "none", "reason": "one state"},
            ],
        },
    }  # fmt: skip
    base.update(over)
    return base


def _write(path: Path, data: object) -> Path:
    path.write_bytes(orjson.dumps(data))
    return path


def test_a_record_reads_typed_and_writes_back_what_it_read(tmp_path: Path) -> None:
    src = _write(tmp_path / "attack.json", _file(later_field={"kept": True}))
    rec = AttackFile.load(src)
    assert rec.heldout.results[0].asr == 1.0 and rec.heldout.tests[0].p_value is None
    assert rec.split.targets["s2"] == "c3" and rec.history[0].best_train_asr == 0.5
    rec.write(tmp_path / "again.json")
    again = orjson.loads((tmp_path / "again.json").read_bytes())
    # the same keys and values, a newer DIBench's field included; nothing added by defaults
    assert again == orjson.loads(src.read_bytes())
    assert "moves" not in again and "only_template" not in again["heldout"]["tests"][0]


def test_an_older_schema_is_read_only_when_tolerant(tmp_path: Path) -> None:
    old = _file(schema="dibench-attack/1")
    held = old["heldout"]
    assert isinstance(held, dict)
    for r in held["results"]:
        del r["states"], r["method"]
    for t in held["tests"]:
        del t["states"], t["method"], t["test"], t["reason"]
    src = _write(tmp_path / "attack.json", old)
    with pytest.raises(RecordError, match=r"attack\.json: schema 'dibench-attack/1'"):
        AttackFile.load(src)
    rec = AttackFile.load(src, tolerant=True)
    assert rec.heldout.results[0].method == "wilson" and rec.heldout.results[0].states == 0
    assert rec.heldout.tests[0].states is None  # schema 1: a test over runs, not states
    with pytest.raises(RecordError, match="schema 'dibench-attack/9'"):
        AttackFile.load(_write(tmp_path / "new.json", _file(schema="dibench-attack/9")),
                        tolerant=True)  # fmt: skip


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"{not json", r"bad\.json: not valid JSON"),
        (b"[1, 2]", r"bad\.json: not a JSON object"),
        (orjson.dumps(_file(status="paused")), r"bad\.json: field status: "),
        (
            orjson.dumps(_file(heldout={"results": [{"probe": "p", "kind": "fixed",
                                                     "describe": "p", "k": "many", "n": 1}]})),
            r"bad\.json: field heldout\.results\.0\.k: ",
        ),
        (orjson.dumps({k: v for k, v in _file().items() if k != "identity"}),
         r"bad\.json: field identity: Field required"),
    ],
)  # fmt: skip
def test_a_bad_file_is_refused_naming_the_file_and_the_field(
    tmp_path: Path, data: bytes, message: str
) -> None:
    (tmp_path / "bad.json").write_bytes(data)
    with pytest.raises(RecordError, match=message) as err:
        AttackFile.load(tmp_path / "bad.json")
    assert "\n" not in str(err.value)


def test_a_condition_resumes_under_other_pacing_but_not_other_settings() -> None:
    """The resume rule lives on the record it compares: what only paces the calls (the
    concurrency, a provider's rate, URL or key variable) may change; every other setting is
    named with what was recorded and what is asked."""
    old = ConditionRecord(
        key="direct|m|none", framework="direct", model="m",
        run={"repeats": 2, "probes": [], "concurrency": 8},
        provider_options={"rpm": 60, "base_url": "http://a/v1", "temperature": 0.0},
    )  # fmt: skip
    paced = old.model_copy(update={
        "run": {**old.run, "concurrency": 2},
        "provider_options": {"rpm": 5, "base_url": "http://b/v1", "temperature": 0.0},
    })  # fmt: skip
    assert old.resume_diff(paced) == ""
    other = old.model_copy(update={
        "run": {**old.run, "repeats": 3, "probes": ["naive", "combined"]},
        "adapter_options": {"parse": "robust"}, "prompt_templates": "ab12",
    })  # fmt: skip
    assert old.resume_diff(other) == (
        "adapter parse: default -> robust; probes: all -> naive,combined; "
        "prompt templates: default -> ab12; repeats: 2 -> 3"
    )


def test_run_json_keeps_a_refusals_kind_and_reads_plain_text_as_a_title_box(
    tmp_path: Path,
) -> None:
    """run.json's ``refused``: plain text (all an older DIBench wrote) is a title box too small
    and is written back byte for byte; a claim refusal keeps its kind; a kind no probe has is
    refused naming the field."""
    from dibench._records import RUN_SCHEMA, RunFile
    from dibench._values import Refusal

    title = "probe 'mimic-owl': the title box would show 61% of it; the instance is refused"
    claim = {"kind": "claim", "text": "probe 'claim-rating': target 'c3' admits no false claim"}
    data = {"schema_version": RUN_SCHEMA, "kind": "sim", "refused": {"a.c1.p": title}}
    src = _write(tmp_path / "run.json", data)
    rec = RunFile.load(src)
    assert rec.refused == {"a.c1.p": Refusal(kind="title", text=title)}
    rec.write(tmp_path / "again.json")
    assert orjson.loads((tmp_path / "again.json").read_bytes()) == data

    data["refused"] = {"a.c1.p": title, "a.c3.q": claim}
    rec = RunFile.load(_write(tmp_path / "run.json", data))
    assert rec.refused is not None and rec.refused["a.c3.q"] == Refusal(**claim)
    assert rec.dump()["refused"] == data["refused"]

    data["refused"] = {"a.c3.q": {"kind": "length", "text": "?"}}
    with pytest.raises(RecordError, match=r"run\.json: field refused\.a\.c3\.q\.kind"):
        RunFile.load(_write(tmp_path / "run.json", data))
