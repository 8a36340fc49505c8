"""Screens stored as references (issue 42 item 2): what a read rebuilds from the dataset is byte
for byte what the model received over HTTP, for benign, composed and materialised injected
screens, under deterministic defenses and after the frameworks' own steps (resize, AppAgent's
tags, a JPEG they send); a transform that is no named step keeps its bytes; a changed or missing
dataset (or font) is named in one line, never answered with another image."""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import hashlib
import json
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from PIL import Image

from dibench._png import encode_png
from dibench._values import Outcome
from dibench.adapters import make_adapter
from dibench.dataset import Dataset
from dibench.defenses import make_chain
from dibench.generate import GenerateConfig, generate
from dibench.metrics import asr_pairs
from dibench.providers import Provider, make_provider
from dibench.render import font_path
from dibench.report import make_example
from dibench.runner import Condition, ResultStore, RunConfig, ScreenGoneError, run_condition
from dibench.testing import FakeChatServer

TINY = GenerateConfig(benign=1, probes=("naive", "combined_p"), width=360, height=780)


@pytest.fixture(scope="module")
def datasets(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One benign state and its twins, composed on the fly and materialised (band patches)."""
    base = tmp_path_factory.mktemp("refs")
    generate(base / "plain", TINY, workers=1)
    generate(base / "mat", dataclasses.replace(TINY, materialize=True), workers=1)
    return {"plain": base / "plain", "mat": base / "mat"}


def _sent_images(srv: FakeChatServer) -> dict[str, bytes]:
    """Every image the server received, by sha256 (decoded from the requests' data URLs)."""
    out = {}
    for req in srv.received:
        for message in req.body["messages"]:
            content = message["content"]
            for part in content if isinstance(content, list) else []:
                if part.get("type") == "image_url":
                    data = base64.b64decode(part["image_url"]["url"].split(",", 1)[1])
                    out[hashlib.sha256(data).hexdigest()] = data
    return out


def _run(dataset: Path, out: Path, framework: str, defense: str) -> dict[str, bytes]:
    """One condition at one repeat against a local chat server; the images it received (a
    framework of another protocol runs against the offline ``oracle``: none)."""
    if framework == "claude-cu":
        _run_with(dataset, out, framework, defense, make_provider("oracle"))
        return {}
    with (
        FakeChatServer(reply="Answer: 1", record_last=1000) as srv,
        pytest.MonkeyPatch.context() as mp,
    ):
        mp.setenv("REFS_KEY", "sk-test")
        provider = make_provider("openai:fake-vl", base_url=srv.base_url, api_key_env="REFS_KEY")
        _run_with(dataset, out, framework, defense, provider)
        return _sent_images(srv)


Runs = Callable[[str, str, str], tuple[Path, dict[str, bytes]]]


@pytest.fixture(scope="module")
def runs(datasets: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Runs:
    """Each condition run once in this module: (its run directory, the images the server
    received). Several tests read the same run; a test that changes a store takes a copy."""
    done: dict[tuple[str, str, str], tuple[Path, dict[str, bytes]]] = {}

    def get(data: str, framework: str, defense: str) -> tuple[Path, dict[str, bytes]]:
        key = (data, framework, defense)
        if key not in done:
            out = tmp_path_factory.mktemp("run")
            done[key] = (out, _run(datasets[data], out, framework, defense))
        return done[key]

    return get


def _copy(runs: Runs, tmp_path: Path, *condition: str) -> Path:
    """A copy of a module run's directory, for a test that changes its store."""
    src, _ = runs(*condition)
    return Path(shutil.copytree(src, tmp_path / "run"))


def _run_with(dataset: Path, out: Path, framework: str, defense: str, provider: Provider) -> None:
    async def go() -> None:
        with ResultStore(out / "results.sqlite") as store:
            try:
                await run_condition(
                    Dataset.open(dataset), store, make_adapter(framework), provider,
                    RunConfig(repeats=1, concurrency=4),
                    condition=Condition(framework, "openai:fake-vl"),
                    defenses=make_chain(defense.split(",")),
                )  # fmt: skip
            finally:
                await provider.aclose()

    asyncio.run(go())


def _shown(store: ResultStore) -> list[tuple[str, str]]:
    """(instance id, image sha256) of every step image stored."""
    out = []
    cond = next(iter(store.conditions()))
    for row in store.rows(cond):
        details = store.details(cond, row.instance_id, row.repeat)
        assert details is not None
        out += [(row.instance_id, s.image) for s in details.steps if s.image]
    return out


def _counts(path: Path) -> tuple[int, int, int]:
    """Screens stored as references, as bytes, and references with stored bands."""
    db = sqlite3.connect(path)
    refs = db.execute("SELECT count(*) FROM image_refs").fetchone()[0]
    spans = db.execute("SELECT count(*) FROM image_spans").fetchone()[0]
    patches = db.execute(
        "SELECT count(*) FROM image_refs WHERE patch_offset IS NOT NULL"
    ).fetchone()[0]
    db.close()
    return refs, spans, patches


# the steps a framework applies after the defenses' (AppAgent: its tags, or the grid it asks for)
FRAMEWORK_STEPS: dict[str, tuple[tuple[str, ...], ...]] = {
    "ui-tars": (("resize/1",),),
    "gui-owl": (("resize/1",),),
    "mobile-agent-v3": (("resize/1",),),
    "ui-venus": (("resize/1",),),
    "appagent": (("appagent-tags/1",), ("appagent-grid/1",)),
    "mobile-agent-v2": (("jpeg-file/1",),),
    "mobile-agent-e": (("jpeg-file/1",),),
    "gelab": (("jpeg", "jpeg-file/1"),),  # its client's JPEG, decoded, and its server's
    "claude-cu": (("resize/1",),),
}


@pytest.mark.parametrize(
    ("data", "framework", "defense", "kept"),
    [
        ("plain", "direct", "none", "refs"),  # benign files, injected composed and spliced
        ("mat", "direct", "none", "refs"),  # injected rebuilt from the dataset's band patches
        ("plain", "direct", "jpeg:75", "refs"),
        ("plain", "direct", "downscale:0.5,noise:3", "refs"),
        # masked screens: the mask is a step too (its boxes as parameters)
        ("plain", "direct", "keyword-detector:policy=mask", "refs"),
        ("plain", "ui-tars", "jpeg:75,keyword-detector:policy=mask", "refs"),
        # the framework's own steps (SCREEN_STEPS) after the defense's: resized, tagged or
        # gridded, sent as JPEG
        ("plain", "ui-tars", "none", "refs"),
        ("plain", "ui-tars", "jpeg:75", "refs"),
        ("plain", "gui-owl", "downscale:0.5", "refs"),
        ("mat", "mobile-agent-v3", "none", "refs"),
        ("plain", "ui-venus", "noise:3", "refs"),
        ("plain", "appagent", "none", "refs"),
        ("plain", "appagent", "jpeg:75", "refs"),
        ("plain", "mobile-agent-v2", "jpeg:75", "refs"),
        # E reads the same JPEG as v2 under the same defense: one OCR pass serves both
        ("plain", "mobile-agent-e", "jpeg:75", "refs"),
        ("plain", "gelab", "none", "refs"),
        ("plain", "claude-cu", "jpeg:75", "refs"),  # Anthropic's protocol: the offline oracle
    ],
)
def test_recovered_screens_are_the_bytes_the_model_received(
    datasets: dict[str, Path], runs: Runs, data: str, framework: str, defense: str, kept: str
) -> None:
    out, sent = runs(data, framework, defense)
    with ResultStore(out / "results.sqlite", readonly=True) as store:
        shown = _shown(store)
        assert {i for i, _ in shown} >= set(Dataset.open(datasets[data]).benign)
        assert sum("." in i for i, _ in shown) >= 8  # the injected twins too
        for _iid, sha in shown:
            got = store.image(sha)  # rebuilt: its sha256 is checked against the stored one
            assert got is not None and hashlib.sha256(got).hexdigest() == sha
            if sent:  # the stored hash is the hash of what went over the wire
                assert got == sent[sha]
    refs, spans, patches = _counts(out / "results.sqlite")
    distinct = len({sha for _, sha in shown})
    images = out / "results.sqlite.images"
    if kept == "bytes":
        assert (refs, spans) == (0, distinct) and images.stat().st_size > 0
    else:
        assert (refs, spans) == (distinct, 0)
        assert (patches > 0) == (kept == "patched") == images.exists()
        # each reference names the defense's steps, then the framework's own
        db = sqlite3.connect(out / "results.sqlite")
        named = [
            [s[0] for s in json.loads(t)] for (t,) in db.execute("SELECT steps FROM image_refs")
        ]
        db.close()
        tails = FRAMEWORK_STEPS.get(framework, ((),))
        ours = [
            n for n in defense.replace(",", ":").split(":") if n in ("jpeg", "downscale", "noise")
        ]
        for names in named:
            tail = next(t for t in tails if tuple(names[len(names) - len(t) :]) == t)
            assert [n for n in names[: len(names) - len(tail)] if n != "mask/1"] == ours
        assert ("mask" in defense) == any("mask/1" in names for names in named)
        if images.exists():  # the bands a mask changed: a small part of each masked screen
            assert images.stat().st_size * 4 < sum(len(sent[sha]) for sha in sent)


def test_a_changed_or_missing_dataset_is_named_in_one_line(
    datasets: dict[str, Path], tmp_path: Path
) -> None:
    dataset = tmp_path / "ds"
    shutil.copytree(datasets["plain"], dataset)
    sent = _run(dataset, tmp_path, "direct", "jpeg:75")
    benign_id = next(iter(Dataset.open(dataset).benign))
    with ResultStore(tmp_path / "results.sqlite", readonly=True) as store:
        benign_sha = next(sha for iid, sha in _shown(store) if iid == benign_id)
        injected_sha = next(sha for iid, sha in _shown(store) if "." in iid)
        assert store.image(benign_sha) == sent[benign_sha]

    # the same pixels saved again: other bytes, so the screen is not rebuilt from them
    screen = dataset / Dataset.open(dataset).benign[benign_id].screenshot
    with Image.open(screen) as im:
        im.load()
        im.save(screen, "PNG", compress_level=9)
    with ResultStore(tmp_path / "results.sqlite", readonly=True) as store:
        for sha in (benign_sha, injected_sha):
            with pytest.raises(ScreenGoneError) as err:
                store.image(sha)
            msg = str(err.value)
            assert "\n" not in msg and str(screen) in msg and "changed since the run" in msg

    # the dataset moved away (and not beside the run directory either)
    dataset.rename(tmp_path / "elsewhere")
    with ResultStore(tmp_path / "results.sqlite", readonly=True) as store:
        with pytest.raises(ScreenGoneError, match="no dataset there") as err:
            store.image(benign_sha)
        assert str(dataset) in str(err.value) and "\n" not in str(err.value)
        # a report's example without its dataset says so in its note, with no picture
        pair = next(iter(asr_pairs(list(store.rows()))))
        example = make_example(pair, store, None, "", 200)
        assert example.benign_image is None and example.injected_image is None
        assert "no dataset there" in example.image_note
        # told where it went (``report --dataset``), the store rebuilds from there, each file
        # still checked: the screen saved again is named, the run's own bytes rebuild
        store.rebuild_from(Dataset.open(tmp_path / "elsewhere"))
        with pytest.raises(ScreenGoneError, match="changed since the run"):
            store.image(benign_sha)
        shutil.copytree(datasets["plain"], tmp_path / "moved")
        store.rebuild_from(Dataset.open(tmp_path / "moved"))
        assert store.image(benign_sha) == sent[benign_sha]
        assert store.image(injected_sha) == sent[injected_sha]


def test_a_report_example_shows_the_rebuilt_screens(runs: Runs) -> None:
    """Without the dataset at hand for pictures (``ds`` None), the example shows the screens the
    model was shown, rebuilt from the references (the dataset still where the run found it)."""
    out, _ = runs("plain", "direct", "jpeg:75")
    with ResultStore(out / "results.sqlite", readonly=True) as store:
        pair = next(iter(asr_pairs(list(store.rows()))))
        example = make_example(pair, store, None, "", 200)
    assert example.benign_image and example.injected_image
    assert example.image_note == "showing the images the model was shown (target not marked)"


def test_a_screen_is_proven_without_the_runs_own_png(datasets: dict[str, Path]) -> None:
    """Where the writer is not handed the run's PNG (Ray actors compose their own), it composes
    the instance again and compares; a screen that differs in a few bands is kept as those
    bands, one that differs everywhere as bytes."""
    from dibench import screens
    from dibench.runner import Condition, dataset_row
    from dibench.runner._refs import ScreenRefs

    ds = Dataset.open(datasets["plain"])
    iid = str(ds.injected_ids()[0])
    row = dataset_row(ds, ds.key(iid), 0, Condition("direct", "m"), None, Outcome.NO_COMMIT)
    refs = ScreenRefs(ds, None, datasets["plain"].parent)
    image = screens.screenshot(ds, iid)
    shown = screens.png(ds, iid, image)
    assert shown is not None
    ref = refs.describe(
        row, bytes(shown), hashlib.sha256(shown).hexdigest()
    )  # equal bytes, another object: composed and compared
    assert ref is not None and ref.source["instance"] == iid and ref.steps == ()
    image.putpixel((5, 5), (1, 2, 3))  # one pixel off: the band that differs is kept with it
    other = encode_png(image)
    off = refs.describe(row, other, hashlib.sha256(other).hexdigest())
    assert off is not None and off.patch is not None and len(off.patch) * 10 < len(other)
    noise = encode_png(Image.effect_noise(image.size, 60).convert("RGB"))  # nothing alike
    assert refs.describe(row, noise, hashlib.sha256(noise).hexdigest()) is None


def test_a_store_from_before_references_still_reads(tmp_path: Path) -> None:
    """A read-only store written before ``image_refs`` existed reads its bytes as before."""
    from dibench.adapters import Decision, Step

    from .test_store_moves import row

    png = encode_png(Image.new("RGB", (40, 80), (9, 99, 199)))
    path = tmp_path / "results.sqlite"
    with ResultStore(path) as store:
        cond = store.add_condition(Condition("direct", "m", "none"))
        step = Step("decision", "prompt", png, "Answer: 1", None)
        decision = Decision("c1", Outcome.COMMITTED, steps=(step,))
        store.put(cond, row("s1", 0, Outcome.COMMITTED, "c1"), decision)
    db = sqlite3.connect(path)
    db.execute("DROP TABLE image_refs")
    db.commit()
    db.close()
    with ResultStore(path, readonly=True) as store:
        assert store.image(hashlib.sha256(png).hexdigest()) == png
        assert store.image(hashlib.sha256(b"never shown").hexdigest()) is None


def test_a_preprocessed_screen_is_proven_without_its_origin(datasets: dict[str, Path]) -> None:
    """Told nothing by the run (a defense that marks nothing, an adapter that encodes outside
    ``show``), the writer runs the steps again: the first screens are compared byte for byte,
    the rest pixel for pixel; a screen the steps do not give keeps its bytes."""
    from dibench import screens
    from dibench.adapters import AgentInput
    from dibench.adapters import encode_png as adapter_png
    from dibench.defenses import DefenseContext, View, make_defense
    from dibench.runner import Condition, dataset_row
    from dibench.runner._refs import ScreenRefs

    ds = Dataset.open(datasets["plain"])
    # a quality no other test shows: this process has no origin noted for these screens
    refs = ScreenRefs(ds, make_chain(["jpeg:73"]), datasets["plain"].parent)
    jpeg = make_defense("jpeg:73")
    ids = [*ds.benign, *map(str, ds.injected_ids()[:6])]
    for iid in ids:
        inp: AgentInput = screens.agent_input(ds, iid, 0)
        view = asyncio.run(jpeg.before(View.of(inp), DefenseContext(inp)))
        shown = adapter_png(view.image)  # as an adapter encodes it, outside ``show``
        row = dataset_row(
            ds, ds.key(iid), 0, Condition("direct", "m", "jpeg:73"), None, Outcome.NO_COMMIT
        )
        ref = refs.describe(row, shown, hashlib.sha256(shown).hexdigest())
        assert ref is not None and ref.steps == (("jpeg", 73),)
    assert refs.settled["compared"] == len(ids)
    row = dataset_row(
        ds, ds.key(ids[-1]), 0, Condition("direct", "m", "jpeg:73"), None, Outcome.NO_COMMIT
    )
    raw = screens.png(ds, ids[-1], screens.screenshot(ds, ids[-1]))
    assert raw is not None  # the screen without the defense is not what the steps give
    assert refs.describe(row, raw, hashlib.sha256(raw).hexdigest()) is None


def test_a_writer_behind_keeps_bytes_rather_than_proving(datasets: dict[str, Path]) -> None:
    """While rows pile up (``hurry``), a screen that would have to be composed again is kept as
    bytes at once; it does not count towards giving references up."""
    from dibench import screens
    from dibench.runner import Condition, dataset_row
    from dibench.runner._refs import ScreenRefs

    ds = Dataset.open(datasets["plain"])
    refs = ScreenRefs(ds, None, datasets["plain"].parent)
    refs.hurry = True
    for n, iid in enumerate(map(str, ds.injected_ids()[:2])):
        row = dataset_row(ds, ds.key(iid), 0, Condition("direct", "m"), None, Outcome.NO_COMMIT)
        shown = screens.png(ds, iid, screens.screenshot(ds, iid))
        assert shown is not None
        if n == 1:
            refs.note(iid, 0, shown)  # the run's own PNG: recognised for free, even in a hurry
        ref = refs.describe(row, shown, hashlib.sha256(shown).hexdigest())
        assert (ref is not None) == (n == 1)
    assert refs.settled["bytes"] == 1 and refs.settled["identity"] == 1 and not refs.given_up


def test_a_screen_rebuilt_otherwise_is_refused(runs: Runs, tmp_path: Path) -> None:
    """Files unchanged but the rebuild gives other bytes (another DIBench or Pillow): one line
    saying so, never the other picture."""
    out = _copy(runs, tmp_path, "plain", "direct", "jpeg:75")
    db = sqlite3.connect(out / "results.sqlite")
    (sha,) = db.execute("SELECT sha256 FROM image_refs LIMIT 1").fetchone()
    db.execute("UPDATE image_refs SET steps = ? WHERE sha256 = ?", ('[["jpeg", 74]]', sha))
    db.commit()
    db.close()
    store = ResultStore(out / "results.sqlite", readonly=True)
    with store, pytest.raises(ScreenGoneError, match="differs from the one the model saw") as err:
        store.image(sha)
    assert "\n" not in str(err.value) and sha[:12] in str(err.value)


def test_a_tagged_screen_drawn_in_another_font_is_refused(runs: Runs, tmp_path: Path) -> None:
    """AppAgent's tags name the font they were drawn in: a rebuild with another font file (here:
    the run's digest altered) is refused in one line naming the font, never drawn anyway."""
    out = _copy(runs, tmp_path, "plain", "appagent", "none")
    db = sqlite3.connect(out / "results.sqlite")
    sha, steps = db.execute("SELECT sha256, steps FROM image_refs LIMIT 1").fetchone()
    *before, (name, *params, _digest) = json.loads(steps)
    assert name == "appagent-tags/1"
    other = [*before, [name, *params, "0" * 64 + ":0"]]
    db.execute("UPDATE image_refs SET steps = ? WHERE sha256 = ?", (json.dumps(other), sha))
    db.commit()
    db.close()
    store = ResultStore(out / "results.sqlite", readonly=True)
    with store, pytest.raises(ScreenGoneError, match="not the font") as err:
        store.image(sha)
    msg = str(err.value)
    assert "\n" not in msg and sha[:12] in msg and font_path("sans-bold")[0] in msg
