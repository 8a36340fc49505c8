"""The export layout with pyarrow alone: every patch rebuilds its screen exactly, the round trip
is byte-identical, and the card's YAML and snippets say what the files hold."""

from __future__ import annotations

import hashlib
import io
import shutil
from pathlib import Path

import orjson
import pyarrow.parquet as pq
import pytest
from PIL import Image, ImageChops

from dibench import screens
from dibench.dataset import Dataset, record_sha256
from dibench.generate import GenerateConfig, generate
from dibench.hf import BENIGN, CONFIGS, INJECTED, export_hf, import_hf, render_card
from dibench.hf._card import to_yaml

from .conftest import card_blocks, tree, with_data


def _injected_rows(hf: Path) -> list[dict]:
    return pq.read_table(hf / "data" / "injected").to_pylist()


def _png(data: bytes) -> Image.Image:
    with Image.open(io.BytesIO(data)) as im:
        return im.convert("RGB")


def test_every_patch_is_the_bounding_box_of_all_changed_pixels(
    tiny_dir: Path, tiny_hf: Path
) -> None:
    ds = Dataset.open(tiny_dir)
    rows = _injected_rows(tiny_hf)
    assert [r["id"] for r in rows] == ds.injected_ids()
    for r in rows:
        benign = ds.benign_image(r["pair_of"])
        want = screens.screenshot(ds, r["id"])
        patch = _png(r["patch"]["bytes"])
        x, y = r["patch_x"], r["patch_y"]
        box = (x, y, x + patch.width, y + patch.height)
        assert (want.mode, want.size) == (benign.mode, benign.size), r["id"]
        assert ImageChops.difference(benign, want).getbbox() == box, r["id"]
        # Outside the box no pixel changed (the bounding box above), so the benign screen with
        # the patch pasted is the injected one exactly when the box holds the patch's pixels;
        # compared there, not as two whole screens' bytes (most of this test's time).
        assert want.crop(box).tobytes() == patch.tobytes(), r["id"]


def test_combined_tc_gets_one_rectangle_around_title_and_cover(
    tiny_dir: Path, tiny_hf: Path
) -> None:
    ds = Dataset.open(tiny_dir)
    rows = [r for r in _injected_rows(tiny_hf) if r["probe"] == "combined_tc"]
    assert rows
    for r in rows:
        boxes = ds.benign[r["pair_of"]].candidate(r["target"]).boxes
        patch = _png(r["patch"]["bytes"])
        x1, y1 = r["patch_x"], r["patch_y"]
        x2, y2 = x1 + patch.width, y1 + patch.height
        for carrier in ("title", "cover"):  # both carriers changed, both inside the patch
            b = boxes[carrier]
            assert x1 < b.x2 and b.x1 < x2 and y1 < b.y2 and b.y1 < y2, (r["id"], carrier)
        assert x1 >= min(b.x1 for b in boxes.values()) and y1 >= boxes["card"].y1


def test_round_trip_is_byte_identical(tiny_dir: Path, tiny_hf: Path, tmp_path: Path) -> None:
    back = tmp_path / "back"
    summary = import_hf(tiny_hf, back)
    assert tree(back) == tree(tiny_dir)
    manifest = orjson.loads((back / "manifest.json").read_bytes())
    for name in ("benign.jsonl", "injected.jsonl"):
        assert hashlib.sha256((back / name).read_bytes()).hexdigest() == manifest["sha256"][name]
    assert (summary.benign, summary.injected) == (
        manifest["counts"]["benign"],
        manifest["counts"]["injected"],
    )


def test_materialized_screens_come_back_byte_identical(tmp_path: Path) -> None:
    src = tmp_path / "mat"
    # half-size screens: the round trip copies bytes, whatever the size
    cfg = GenerateConfig(
        seed=4, benign=3, probes=("naive", "combined_p"), materialize=True, width=540, height=1170
    )
    generate(src, cfg, workers=1)
    export_hf(src, tmp_path / "hf", workers=1)
    summary = import_hf(tmp_path / "hf", tmp_path / "back")
    assert summary.materialized == len(list((src / "injected").iterdir())) > 0
    assert tree(tmp_path / "back") == tree(src)


def test_hand_edited_lines_are_kept_verbatim(tiny_dir: Path, tmp_path: Path) -> None:
    """Lines that are not DIBench's own dump (spacing, blank lines, no final newline) still
    come back byte for byte: the export keeps those lines in raw_line. Of the 320 injected
    lines the last 8 are kept: the export composes and diffs the screen of each, and which
    lines come back verbatim does not depend on how many there are (8 s -> 1 s)."""
    src = tmp_path / "edited"
    shutil.copytree(tiny_dir, src)
    kept = (src / "injected.jsonl").read_bytes().splitlines(keepends=True)[-8:]
    (src / "injected.jsonl").write_bytes(b"".join(kept))
    lines = (src / "benign.jsonl").read_bytes().splitlines(keepends=True)
    lines[1] = (
        orjson.dumps(orjson.loads(lines[1]), option=orjson.OPT_INDENT_2).replace(b"\n", b" ")
        + b"\n"
    )
    (src / "benign.jsonl").write_bytes(b"\n" + b"".join(lines[:3]) + b"  \n" + b"".join(lines[3:]))
    inj = (src / "injected.jsonl").read_bytes()
    (src / "injected.jsonl").write_bytes(inj.rstrip(b"\n"))
    record_sha256(src)  # the edits accepted (`dibench check --update-manifest`)
    summary = export_hf(src, tmp_path / "hf", workers=1)
    # benign: the line after the leading blank, the reindented one, the one after "  \n";
    # injected: the last line, which lost its newline
    assert summary.verbatim_lines == 4
    benign = pq.read_table(tmp_path / "hf" / "data" / "benign").to_pylist()
    assert [r["raw_line"] is not None for r in benign[:5]] == [True, True, False, True, False]
    assert benign[1]["seed"] == orjson.loads(lines[1])["seed"]  # typed columns still filled
    import_hf(tmp_path / "hf", tmp_path / "back")
    assert tree(tmp_path / "back") == tree(src)


def test_shards_hold_the_rows_in_order_and_compress_every_column(tiny_hf: Path) -> None:
    info = orjson.loads((tiny_hf / "dibench" / "export.json").read_bytes())
    for table in CONFIGS:
        shards = info["configs"][table.name]
        files = sorted((tiny_hf / "data" / table.name).iterdir())
        assert [f"data/{table.name}/{f.name}" for f in files] == [s["path"] for s in shards]
        assert all(s["rows"] <= 150 for s in shards)
        for f in files:
            pf = pq.ParquetFile(f)
            assert pf.schema_arrow.names == list(table.names)
            meta = pf.metadata.row_group(0)
            for i in range(meta.num_columns):
                col = meta.column(i)
                want = "UNCOMPRESSED" if col.path_in_schema.endswith(".bytes") else "ZSTD"
                assert col.compression == want, col.path_in_schema
    assert len(info["configs"]["injected"]) > 1


def test_columns_rebuild_every_record_field() -> None:
    for table in (BENIGN, INJECTED):
        assert set(table.model.model_fields) <= set(table.names)
    from dibench.dataset import Payload

    payload = next(c for c in INJECTED.columns if c.name == "payload")
    assert list(payload.feature()) == list(Payload.model_fields)


def _header(card: Path) -> dict:
    yaml = pytest.importorskip("yaml")
    text = card.read_text(encoding="utf-8")
    assert text.startswith("---\n")
    return yaml.safe_load(text.split("---\n")[1])


def test_card_header_declares_both_configs_and_their_features(tiny_hf: Path) -> None:
    header = _header(tiny_hf / "README.md")
    assert header["license"] == "apache-2.0"
    assert header["language"] == ["en", "zh"]
    configs = {c["config_name"]: c for c in header["configs"]}
    assert configs["benign"]["default"] is True
    for table in CONFIGS:
        (files,) = configs[table.name]["data_files"]
        assert files == {"split": "test", "path": f"data/{table.name}/test-*.parquet"}
        assert list((tiny_hf / "data" / table.name).glob("test-*.parquet"))
    features = {i["config_name"]: i["features"] for i in header["dataset_info"]}
    assert features == {t.name: [c.yaml() for c in t.columns] for t in CONFIGS}
    body = (tiny_hf / "README.md").read_text(encoding="utf-8")
    assert "2610.06898" in body and "synthetic" in body and "pair_of" in body


def test_card_pillow_snippet_rebuilds_injected_screens(tiny_dir: Path, tiny_hf: Path) -> None:
    """The card's helper and its pyarrow-only reader, run as written (no datasets needed)."""
    first, _with_datasets, plain = card_blocks(tiny_hf / "README.md")
    ns: dict = {}
    exec(first, ns)
    exec(with_data(plain, tiny_hf), ns)
    ds = Dataset.open(tiny_dir)
    ids = ds.injected_ids()
    for iid in ids[:: max(1, len(ids) // 12)]:
        got = ns["injected_screen_from_parquet"](str(tiny_hf), iid)
        assert got.tobytes() == screens.screenshot(ds, iid).tobytes(), iid


def test_card_license_follows_provenance() -> None:
    common = {
        "benign": 1,
        "injected": 2,
        "by_probe": {"naive": 2},
        "apps": ["x"],
        "languages": ["en"],
    }
    generated = render_card(manifest={"generator": "dibench 0.1.0"}, **common)
    imported = render_card(
        manifest={"generator": "dibench 0.1.0 (import)", "imported": {}}, **common
    )
    unknown = render_card(manifest={}, **common)
    assert "license: apache-2.0" in generated and "synthetic" in generated
    for card in (imported, unknown):
        assert "license: other" in card and "The data is synthetic" not in card


def test_yaml_writer_round_trips_awkward_strings() -> None:
    yaml = pytest.importorskip("yaml")
    value = {
        "a": ["yes", "no", "null", "1.5", "x: y", "#hash", "- dash", "中文", "10K<n<100K", ""],
        "b": [{"c": True, "d": 3, "e": []}, {"f": {}}],
        "g": "data/x/test-*.parquet",
    }
    assert yaml.safe_load("\n".join(to_yaml(value))) == value


def test_a_claim_probes_assertions_travel_in_the_payload_column(tmp_path: Path) -> None:
    """A claim probe's payload carries what it asserts (``payload.claim``): the export holds it
    as JSON in the payload struct, and the import rebuilds each line from the columns, byte
    for byte, without falling back to the stored raw line."""
    src, hf, back = tmp_path / "claims", tmp_path / "hf", tmp_path / "back"
    cfg = GenerateConfig(seed=2, benign=2, probes=("claim-rating", "naive"), width=540, height=1170)
    generate(src, cfg, workers=1)
    export_hf(src, hf)
    rows = _injected_rows(hf)
    claims = [r for r in rows if r["probe"] == "claim-rating"]
    assert claims and all(r["raw_line"] is None for r in rows)
    for r in claims:
        claim = orjson.loads(r["payload"]["claim"])
        assert claim["kind"] == "rating" and claim["facts"][0]["attribute"] == "rating"
    assert all(r["payload"]["claim"] is None for r in rows if r["probe"] == "naive")
    import_hf(hf, back)
    for name in ("benign.jsonl", "injected.jsonl"):
        assert (back / name).read_bytes() == (src / name).read_bytes(), name


def test_a_datasets_own_probe_definitions_travel_through_the_hub(tmp_path: Path) -> None:
    """A dataset generated with a ``--load``ed template carries its definition in
    ``probes.toml``; the export keeps it and the import puts it back, so the imported copy
    opens with ``--load its/probes.toml`` like the original (it was lost before)."""
    from .._cli import invoke

    templates = tmp_path / "t.toml"
    templates.write_text(
        'format = "dibench-probes/1"\n\n[[probe]]\nname = "atk-hub"\ncarriers = ["title"]\n'
        '[probe.levels]\nen = ["Official {brand} store", "Official store"]\n'
        'zh = ["{brand}官方店", "官方店"]\n',
        encoding="utf-8",
    )
    src, hub, back = tmp_path / "src", tmp_path / "hub", tmp_path / "back"
    r = invoke("generate", "--out", str(src), "--benign", "1", "--probes", "atk-hub",
               "--load", str(templates), "--width", "540", "--height", "1170")  # fmt: skip
    assert r.returncode == 0, r.stderr
    r = invoke("export-dataset", str(src), "--out", str(hub), "--load", str(src / "probes.toml"))
    assert r.returncode == 0, r.stderr
    assert (hub / "dibench" / "probes.toml").read_bytes() == (src / "probes.toml").read_bytes()
    r = invoke("import-hf", str(hub), "--out", str(back))
    assert r.returncode == 0, r.stderr
    assert tree(back) == tree(src)
    r = invoke("check", "--dataset", str(back), "--no-ocr", "--load", str(back / "probes.toml"))
    assert r.returncode == 0, r.stderr
