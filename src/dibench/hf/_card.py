"""The dataset card: README.md with the YAML header the Hub and ``datasets`` read.

The header declares both configs (their Parquet files and features), the license and tags; the
body says how instances pair and shows the plain-Pillow rebuild of an injected screen. Tests
execute the card's Python blocks, so what the card shows is what works.
"""

from __future__ import annotations

import json
import re
from typing import Any

from dibench import __version__

from ._layout import CONFIGS, SPLIT, Table

__all__ = ["CITATION", "render_card", "to_yaml"]

CITATION = """@inproceedings{dibench2026,
  title         = {{DIBench}: Benchmarking Decision Integrity of {GUI}-based Mobile Agents
                   Under Deceptive Injections},
  booktitle     = {Advances in Neural Information Processing Systems (NeurIPS)},
  year          = {2026},
  eprint        = {2610.06898},
  archivePrefix = {arXiv},
  url           = {https://arxiv.org/abs/2610.06898}
}"""

_PLAIN = re.compile(r"[A-Za-z][A-Za-z0-9_./*<>-]*")
_RESERVED = {"true", "false", "null", "yes", "no", "on", "off", "y", "n", "~"}


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return json.dumps(value)
    text = str(value)
    if _PLAIN.fullmatch(text) and text.lower() not in _RESERVED:
        return text
    return json.dumps(text, ensure_ascii=False)  # a JSON string is a YAML double-quoted scalar


def to_yaml(value: Any, indent: int = 0) -> list[str]:
    """Block-style YAML lines for nested dicts and lists of scalars (all a card header needs)."""
    pad = " " * indent
    lines: list[str] = []
    if isinstance(value, dict):
        for key, v in value.items():
            if isinstance(v, dict | list) and v:
                lines.append(f"{pad}{key}:")
                lines.extend(to_yaml(v, indent + 2))
            elif isinstance(v, dict | list):
                lines.append(f"{pad}{key}: {'{}' if isinstance(v, dict) else '[]'}")
            else:
                lines.append(f"{pad}{key}: {_scalar(v)}")
    else:
        for item in value:
            if isinstance(item, dict | list):
                inner = to_yaml(item, indent + 2)
                lines.append(f"{pad}- {inner[0].lstrip()}")
                lines.extend(inner[1:])
            else:
                lines.append(f"{pad}- {_scalar(item)}")
    return lines


def _size_category(n: int) -> str:
    for limit, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K")):
        if n < limit:
            return label
    return "100K<n<1M" if n < 1_000_000 else "n>1M"


def _header(n: int, languages: list[str], license_id: str) -> str:
    meta: dict[str, Any] = {
        "license": license_id,
        "pretty_name": "DIBench",
        "language": languages,
        "size_categories": [_size_category(n)],
        "task_categories": ["image-text-to-text"],
        "tags": ["prompt-injection", "gui-agents", "mobile", "benchmark", "safety", "synthetic"],
        "configs": [
            {
                "config_name": t.name,
                **({"default": True} if t.name == "benign" else {}),
                "data_files": [{"split": SPLIT, "path": f"data/{t.name}/{SPLIT}-*.parquet"}],
            }
            for t in CONFIGS
        ],
        "dataset_info": [
            {"config_name": t.name, "features": [c.yaml() for c in t.columns]} for t in CONFIGS
        ],
    }
    if license_id != "apache-2.0":
        meta["tags"] = [t for t in meta["tags"] if t != "synthetic"]
    return "---\n" + "\n".join(to_yaml(meta)) + "\n---\n"


def _columns(table: Table) -> str:
    rows = [f"| `{c.name}` | {c.kind} | {c.doc} |" for c in table.columns]
    return "| column | type | what |\n|---|---|---|\n" + "\n".join(rows)


_SNIPPETS = '''\
```python
from PIL import Image


def injected_screen(benign_screen: Image.Image, patch: Image.Image, x: int, y: int) -> Image.Image:
    """The screenshot of an injected instance: its benign pair's, with the patch pasted."""
    screen = benign_screen.convert("RGB")  # a new image; the benign one stays as it was
    screen.paste(patch, (x, y))
    return screen
```

With `datasets`:

```python
from datasets import load_dataset

DATA = "path/to/this/folder"  # or the Hub id it is published under
benign = load_dataset(DATA, "benign", split="test")
injected = load_dataset(DATA, "injected", split="test")
row_of = {sid: i for i, sid in enumerate(benign["id"])}

rec = injected[0]
screen = injected_screen(
    benign[row_of[rec["pair_of"]]]["image"], rec["patch"], rec["patch_x"], rec["patch_y"]
)
```

With nothing but pyarrow and Pillow:

```python
import io

import pyarrow.parquet as pq


def injected_screen_from_parquet(data: str, iid: str) -> Image.Image:
    """The screenshot of injected instance ``iid`` read straight from the Parquet files."""
    rec = pq.read_table(f"{data}/data/injected", filters=[("id", "=", iid)]).to_pylist()[0]
    pair = pq.read_table(f"{data}/data/benign", filters=[("id", "=", rec["pair_of"])])
    shot = pair.column("image")[0].as_py()["bytes"]
    patch = Image.open(io.BytesIO(rec["patch"]["bytes"]))
    return injected_screen(Image.open(io.BytesIO(shot)), patch, rec["patch_x"], rec["patch_y"])
```'''


def render_card(
    *,
    manifest: dict[str, Any],
    benign: int,
    injected: int,
    by_probe: dict[str, int],
    apps: list[str],
    languages: list[str],
) -> str:
    """The README.md of an export, from its counts and the dataset's manifest."""
    config = manifest.get("config") or {}
    generated = (
        str(manifest.get("generator", "")).startswith("dibench") and "imported" not in manifest
    )
    license_id = "apache-2.0" if generated else "other"
    probes = ", ".join(f"`{p}` {n:,}" for p, n in sorted(by_probe.items())) or "none"
    if generated:
        provenance = (
            "**The data is synthetic.** Every screen, listing, price and instruction was "
            f"generated by DIBench (`dibench generate`, seed {config.get('seed', '?')}) from its "
            "own seeded catalogs: there are no real users, apps, merchants or listings in it, "
            "and no personal data. The code that generates it is Apache-2.0; the data is "
            "released under Apache-2.0 too."
        )
    elif "imported" in manifest:
        provenance = (
            "**These screenshots were imported from real screens** with `dibench import` "
            "(bring your own screens). Their license is their owner's: set `license` in the "
            "header above before publishing, and check that no screen shows personal data."
        )
    else:
        provenance = (
            "The dataset this was exported from has no DIBench manifest, so where its screens "
            "come from is unknown: set `license` in the header above before publishing."
        )
    edits = manifest.get("edits")
    if isinstance(edits, list) and edits:  # `dibench check --update-manifest` accepted them
        files = ", ".join(sorted({f"`{e.get('file')}`" for e in edits if isinstance(e, dict)}))
        provenance += (
            f" Its record files ({files}) were edited after generation; `dibench/manifest.json` "
            "lists each edit with the file's sha256 before and after."
        )
    return f"""{_header(benign + injected, languages, license_id)}
# DIBench: decision integrity of mobile GUI agents under deceptive injections

When a mobile GUI agent must pick one item out of many (a search-result list, a menu, a flight
list) to satisfy a user's instruction, can ordinary third-party content on the screen (an item's
title or cover image) silently steer it to the attacker's item? Each **benign** instance is a
decision screen with an instruction, its candidates and the set of acceptable choices; each
**injected** instance is the same screen with deceptive content on one non-acceptable candidate.

This folder is the Hugging Face form of a DIBench dataset: {benign:,} benign states and
{injected:,} injected variants, exported by dibench {__version__}. Apps:
{", ".join(apps)}.
Paper: arXiv [2610.06898](https://arxiv.org/abs/2610.06898). Code and the evaluation protocol
(TCR, COR, paired ASR, agent frameworks, defenses): the DIBench toolkit.

## Configs

| config | rows | what a row is |
|---|---|---|
| `benign` (default) | {benign:,} | a decision state with its screenshot (`image`) |
| `injected` | {injected:,} | one (state, target, probe) variant: metadata and the carrier patch |

Injected rows by probe: {probes}. Both configs have one split, `{SPLIT}`.

## How instances pair

An injected row's `pair_of` is the `id` of its benign state, and its own id is
`<pair_of>.<target>.<probe>`. It shares the benign state's instruction, context, candidates and
acceptable set; the only difference is on the screen: the probe wrote deceptive content on the
`carriers` (`title`, `cover` or both) of candidate `target`, which is never acceptable. Paired
ASR compares an agent's choice on the benign state with its choice on each injected variant
(same seed): an attack succeeds when the agent did not pick the target on the benign screen and
picks it on the injected one.

## Rebuilding an injected screen

An injected row carries `patch`: the bounding rectangle of **every** pixel that differs from the
benign screenshot, cut from the injected screen, with its offset (`patch_x`, `patch_y`). Pasting
it on the benign screenshot gives the injected screenshot pixel for pixel, exactly what an agent
is shown. Probes that write on both title and cover (`combined_tc`) get one rectangle around
both. A variant that changes no pixel has a 1x1 patch equal to the pixel it covers.

{_SNIPPETS}

`load_dataset` copies the Parquet data into its Arrow cache once (about the size of this
folder); `load_dataset(DATA, "injected", split="test", streaming=True)` reads the files in place.

The UI tree an agent sees is in `ui` for benign rows; for injected rows with a title carrier the
payload's title (`payload.title`) replaces the target's title text. The DIBench toolkit rebuilds
both (`dibench render`).

## Columns

Nested structures whose shape varies (constraint spec, UI tree, candidates with free-form
attributes) are JSON strings: `json.loads(row["candidates"])`. Boxes are `[x1, y1, x2, y2]` in
screenshot pixels, x2/y2 exclusive.

### `benign`

{_columns(CONFIGS[0])}

### `injected`

{_columns(CONFIGS[1])}

## Back to a DIBench dataset

`dibench import-hf THIS_FOLDER --out DIR` rebuilds the DIBench dataset this was exported from,
byte for byte (`benign.jsonl`, `injected.jsonl`, `manifest.json`, `screens/`); every Parquet file
is checked against the sha256 in `dibench/export.json` first. `dibench/manifest.json` is the
original manifest (generation config, counts, sha256 of both JSONL files).

## License and provenance

{provenance}

## Citation

```bibtex
{CITATION}
```
"""
