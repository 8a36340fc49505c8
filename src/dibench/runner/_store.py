"""The SQLite result store of a run directory: one row per (condition, instance, repeat).

WAL mode and a transaction per row (or per batch of rows, all or none) make it crash-safe: a
SIGKILL loses at most the runs in flight or not yet committed, which resume re-runs; a committed
row is never run again. Infrastructure errors are stored (so a
person can see them) but are re-run on resume and never read as agent decisions. Images the model
was shown are stored once by content hash, in an append-only file beside the database
(``<store>.images``; the table ``image_spans`` says where each one lies). A 300 KB screenshot as
a SQLite blob is written twice (WAL, then checkpoint) across ~75 overflow pages: about 1.2 ms of
CPU per distinct screen, more than a whole model call's client work at one repeat; appended to a
file it costs a tenth of that. A span is committed in the same transaction as the row that
shows it, after its bytes are written, so a committed row never points at missing bytes; bytes
left by a killed transaction are never referenced. Stores from before keep their ``images`` table
and are read as they are.

A dataset run's screens are mostly a pure function of the dataset and the condition (the
instance's own PNG, perhaps after a defense's and the framework's screen steps: ``jpeg``, a
resize, AppAgent's tags, ...): those the writer proves so
(``ScreenRefs``) are kept in ``image_refs`` as what rebuilds them, without bytes, and ``image``
rebuilds them from the dataset and checks their sha256 (a full-size dataset at one repeat: its
rows, ~5 KB an instance, instead of 0.3-1 MB of screens an instance). A store from before has
no ``image_refs`` and reads as before.

Columns added since schema 1 (``ADDED_COLUMNS``: an ASKED_USER run's question, a run's
confirmation requests, the target's position, an episode's exposure, a chain's decisions,
what a pick cost the user and where the pick sat) keep the schema version: a store written
before them gets them added when it is opened for writing (its rows read as asking nothing,
position, exposure, cost and pick position unknown), and one opened read-only reads them as
empty.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from dibench._errors import DIBenchError
from dibench._fs import StrPath
from dibench._records import ConditionSettings, StoredCondition, StoredStep
from dibench._values import ChainPick, Condition, InstanceId, Outcome
from dibench.adapters import Action, Decision
from dibench.dataset import Dataset
from dibench.metrics import Move, ResultRow, RunUsage, Trajectory, VerdictRow

from ._refs import ScreenGoneError, ScreenRefs, rebuild_screen

__all__ = [
    "IMAGE_SOURCES",
    "STORE_SCHEMA_VERSION",
    "ResultStore",
    "StoreError",
    "StoredRun",
]

STORE_SCHEMA_VERSION = 1
# meta key: the stores whose screens this one shares (a merged run directory's sources)
IMAGE_SOURCES = "image_sources"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS conditions (
    condition TEXT PRIMARY KEY, framework TEXT NOT NULL, model TEXT NOT NULL,
    defense TEXT NOT NULL, config TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS results (
    condition TEXT NOT NULL, instance_id TEXT NOT NULL, repeat INTEGER NOT NULL,
    pair_of TEXT NOT NULL, injected INTEGER NOT NULL, app TEXT, category TEXT, language TEXT,
    probe TEXT, carriers TEXT, target TEXT, seed INTEGER NOT NULL,
    decision TEXT, outcome TEXT NOT NULL, cause TEXT, acceptable TEXT NOT NULL,
    input_tokens INTEGER, output_tokens INTEGER, cost_usd REAL, latency_s REAL,
    steps TEXT NOT NULL, finished REAL NOT NULL,
    question TEXT NOT NULL DEFAULT '', confirmations TEXT NOT NULL DEFAULT '[]',
    PRIMARY KEY (condition, instance_id, repeat)
);
CREATE TABLE IF NOT EXISTS images (sha256 TEXT PRIMARY KEY, png BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS image_spans (
    sha256 TEXT PRIMARY KEY, offset INTEGER NOT NULL, length INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS image_refs (
    sha256 TEXT PRIMARY KEY, length INTEGER NOT NULL, source TEXT NOT NULL, steps TEXT NOT NULL,
    patch_offset INTEGER, patch_length INTEGER
);
CREATE TABLE IF NOT EXISTS verdicts (
    condition TEXT NOT NULL, instance_id TEXT NOT NULL, repeat INTEGER NOT NULL,
    seq INTEGER NOT NULL, detector TEXT NOT NULL, fired INTEGER NOT NULL, score REAL,
    flagged TEXT NOT NULL, policy TEXT NOT NULL, stage TEXT NOT NULL, detail TEXT NOT NULL,
    PRIMARY KEY (condition, instance_id, repeat, seq)
);
CREATE TABLE IF NOT EXISTS moves (
    condition TEXT NOT NULL, instance_id TEXT NOT NULL, repeat INTEGER NOT NULL,
    seq INTEGER NOT NULL, move TEXT NOT NULL,
    PRIMARY KEY (condition, instance_id, repeat, seq)
);
"""


# results columns added after schema 1 (their DDL, for stores created before them): what an
# ASKED_USER run asked, the messages of a run's confirmation requests (a JSON list), where the
# injected target sat in the list, and what a simulator episode showed the agent (NULL where
# not recorded)
ADDED_COLUMNS: dict[str, str] = {
    "question": "TEXT NOT NULL DEFAULT ''",
    "confirmations": "TEXT NOT NULL DEFAULT '[]'",
    "target_rank": "INTEGER",
    "target_row": "INTEGER",
    "target_col": "INTEGER",
    "target_fold": "TEXT",
    "target_seen": "INTEGER",
    "target_seen_step": "INTEGER",
    "scroll_depth": "INTEGER",
    "items_seen": "INTEGER",
    "items_inspected": "INTEGER",
    "chain": "TEXT",
    "harm": "TEXT",
    "violations": "TEXT",
    "regret": "REAL",
    "regret_pct": "REAL",
    "regret_attr": "TEXT",
    "regret_unit": "TEXT",
    "target_harm": "TEXT",
    "pick_rank": "INTEGER",
    "pick_row": "INTEGER",
    "pick_col": "INTEGER",
    "pick_fold": "TEXT",
}
# the position, exposure, chain, cost and pick-position columns, in ResultRow's order (NULL /
# None when not recorded)
_DEPTH_COLUMNS = tuple(ADDED_COLUMNS)[2:]
_EMPTY = {"question": "''", "confirmations": "'[]'"}
_RESULT_COLUMNS = (
    "condition", "instance_id", "repeat", "pair_of", "injected", "app", "category", "language",
    "probe", "carriers", "target", "seed", "decision", "outcome", "cause", "acceptable",
    "input_tokens", "output_tokens", "cost_usd", "latency_s", "steps", "finished", "question",
    "confirmations", *_DEPTH_COLUMNS,
)  # fmt: skip
_INSERT_RESULT = (
    f"INSERT OR REPLACE INTO results ({', '.join(_RESULT_COLUMNS)}) "
    f"VALUES ({', '.join('?' * len(_RESULT_COLUMNS))})"
)


class StoreError(DIBenchError, RuntimeError):
    """The store cannot be opened or written (corrupt file, full disk); names the file."""


def _why(exc: sqlite3.Error) -> str:
    """SQLite's words for the failures a user can fix, in plain terms."""
    text = str(exc)
    if "disk is full" in text or "disk I/O" in text:
        return f"{text}: free some space and re-run the same command to resume"
    if "not a database" in text or "malformed" in text:
        return f"{text}: not a readable results store; move it away to start over"
    if "readonly" in text or "read-only" in text:
        return f"{text}: the run directory is not writable"
    return text


def _action_json(action: Action) -> dict[str, object]:
    """A step's action as stored: ``confirm`` only when the action asked for a confirmation,
    so that steps of every other run keep the shape stores had before it existed."""
    d = asdict(action)
    if d.get("confirm") is None:
        d.pop("confirm", None)
    return d


def _sql(row: ResultRow, name: str) -> object:
    """A position, exposure, chain or cost field as stored (a bool as 0/1, a chain's decisions
    as a JSON list, NULL for a one-decision run; the violations as a JSON list, NULL when the
    cost was not recorded)."""
    value = getattr(row, name)
    if name == "violations":
        return None if row.harm is None else json.dumps(list(value), ensure_ascii=False)
    if isinstance(value, tuple):
        return json.dumps([p.model_dump() for p in value], ensure_ascii=False) if value else None
    return int(value) if isinstance(value, bool) else value


def _depth_fields(values: Sequence[Any]) -> dict[str, Any]:
    """The position, exposure, chain and cost columns of one stored row as ResultRow fields."""
    out = dict(zip(_DEPTH_COLUMNS, values, strict=True))
    if out["target_seen"] is not None:
        out["target_seen"] = bool(out["target_seen"])
    chain = out.pop("chain")
    out["chain"] = tuple(ChainPick(**d) for d in json.loads(chain)) if chain else ()
    out["violations"] = tuple(json.loads(out["violations"] or "[]"))
    return out


@dataclass(frozen=True)
class StoredRun:
    """Everything the store holds of one run (``ResultStore.details``): its row, why it ended,
    what its model calls cost (None where an older store did not record it) and each call."""

    row: ResultRow
    cause: str
    input_tokens: int | None
    output_tokens: int | None
    cost_usd: float | None
    latency_s: float | None
    steps: tuple[StoredStep, ...]


def _id_reader() -> Callable[[str, int], InstanceId]:
    """``InstanceId.read`` for the rows of one query, each id read once (its repeats and
    conditions share it; 2-3 us a row otherwise)."""
    ids: dict[tuple[str, int], InstanceId] = {}

    def read(iid: str, injected: int) -> InstanceId:
        typed = ids.get((iid, injected))
        if typed is None:
            typed = ids[iid, injected] = InstanceId.read(iid, injected=bool(injected))
        return typed

    return read


class ResultStore:
    """Results of one run directory (``results.sqlite``)."""

    def __init__(self, path: StrPath, *, readonly: bool = False) -> None:
        """Open (or create) the store; ``readonly`` opens a finished run on read-only media.

        A file that is not a store, or a store of another schema, fails here with a
        ``StoreError`` naming it, before any work starts.
        """
        self.path = Path(path)
        self.readonly = readonly
        self.images_path = self.path.with_name(self.path.name + ".images")
        self._images_fd: int | None = None
        self._images_end = 0
        self._last_png: bytes | None = None
        self._last_sha = ""
        self._sources: list[ResultStore] | None = None
        self._datasets: dict[str, Dataset] = {}  # datasets opened to rebuild referenced screens
        self._moved: Dataset | None = None  # the dataset to rebuild them from (``rebuild_from``)
        try:
            if readonly:
                self.db = self._open_readonly()
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self.db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
                self.db.execute("PRAGMA journal_mode=WAL")
                self.db.execute("PRAGMA synchronous=NORMAL")
                self.db.executescript(_SCHEMA)
            self._added = self._added_columns()
            got = self.db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
            if got is None and not readonly:
                self.db.execute(
                    "INSERT INTO meta VALUES ('schema_version', ?)", (str(STORE_SCHEMA_VERSION),)
                )
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: {_why(exc)}") from None
        if got is not None and str(got[0]) != str(STORE_SCHEMA_VERSION):
            self.db.close()
            raise StoreError(
                f"{self.path}: store schema {got[0]}, this DIBench reads {STORE_SCHEMA_VERSION}"
            )

    def _added_columns(self) -> frozenset[str]:
        """The ``ADDED_COLUMNS`` the results table has; a writable store from before them gets
        them here (a read-only one is read with them empty)."""
        have = {row[1] for row in self.db.execute("PRAGMA table_info(results)")}
        if not have:  # a read-only file that is not a store: its reads fail with a StoreError
            return frozenset()
        for name, ddl in ADDED_COLUMNS.items():
            if name not in have and not self.readonly:
                self.db.execute(f"ALTER TABLE results ADD COLUMN {name} {ddl}")
                have.add(name)
        return frozenset(n for n in ADDED_COLUMNS if n in have)

    def _column(self, name: str) -> str:
        """``r.<name>`` of an added column, or its empty value where the store lacks it."""
        if name in self._added:
            return f"r.{name}"
        return _EMPTY.get(name, "NULL")

    def _open_readonly(self) -> sqlite3.Connection:
        """Read without writing anything beside the file (no -wal/-shm on read-only media).

        ``mode=ro`` still needs the WAL index; where the folder cannot take one, the file is
        opened ``immutable`` (safe for a finished run: nobody writes it meanwhile).
        """
        if not self.path.is_file():
            raise StoreError(f"{self.path}: no such file")
        uri = self.path.resolve().as_uri()
        try:
            db = sqlite3.connect(f"{uri}?mode=ro", uri=True, check_same_thread=False)
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return db
        except sqlite3.OperationalError:
            db = sqlite3.connect(f"{uri}?immutable=1", uri=True, check_same_thread=False)
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return db

    def close(self) -> None:
        for src in self._sources or []:
            src.close()
        self._sources = None
        self.db.close()
        fd, self._images_fd = self._images_fd, None
        if fd is not None:
            os.close(fd)

    def __enter__(self) -> ResultStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- conditions and meta ---------------------------------------------------------------------
    def set_meta(self, key: str, value: Any) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, json.dumps(value, sort_keys=True))
        )

    def meta(self, key: str) -> Any:
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def add_condition(self, condition: Condition, settings: ConditionSettings | None = None) -> str:
        """Register ``condition`` with the settings its rows are run with (none: a condition
        registered by hand); its key."""
        config = (settings if settings is not None else ConditionSettings()).dump()
        self.db.execute(
            "INSERT OR REPLACE INTO conditions VALUES (?, ?, ?, ?, ?)",
            (condition.key, *condition, json.dumps(config, sort_keys=True)),
        )
        return condition.key

    def conditions(self) -> dict[str, StoredCondition]:
        """Every registered condition by key, in the order the store lists them; settings of
        an older store read as ``ConditionSettings.read`` says (what it lacks is absent)."""
        rows = self.db.execute(
            "SELECT condition, framework, model, defense, config FROM conditions"
        )
        return {
            c: StoredCondition(Condition(f, m, d), ConditionSettings.read(json.loads(cfg)))
            for c, f, m, d, cfg in rows
        }

    # --- results ---------------------------------------------------------------------------------
    def done(self, condition: str) -> set[tuple[str, int]]:
        """(instance, repeat) pairs with an agent outcome (infra errors are not done)."""
        rows = self.db.execute(
            "SELECT instance_id, repeat FROM results WHERE condition=? AND outcome != ?",
            (condition, Outcome.INFRA_ERROR.value),
        )
        return {(i, r) for i, r in rows}

    def _image(self, png: bytes, row: ResultRow, refs: ScreenRefs | None) -> str:
        """Store a shown image once; repeats pass the same bytes object, hashed once.

        Called inside the row's transaction. A screen ``refs`` proves to be a pure function of
        the dataset and the condition is stored as a reference (what rebuilds it, no bytes);
        any other is appended to the images file first, and its span is inserted with the row.
        """
        if self._last_png is png:
            return self._last_sha
        sha = hashlib.sha256(png).hexdigest()
        known = self.db.execute(
            "SELECT 1 FROM image_spans WHERE sha256=? UNION ALL "
            "SELECT 1 FROM image_refs WHERE sha256=? UNION ALL "
            "SELECT 1 FROM images WHERE sha256=? LIMIT 1",
            (sha, sha, sha),
        ).fetchone()
        if known is None:
            ref = refs.describe(row, png, sha) if refs is not None else None
            if ref is not None:
                at = self._append(ref.patch) if ref.patch is not None else (None, None)
                self.db.execute(
                    "INSERT INTO image_refs VALUES (?, ?, ?, ?, ?, ?)",
                    (sha, len(png), json.dumps(ref.source), json.dumps(ref.steps), *at),
                )
            else:
                offset, length = self._append(png)
                self.db.execute("INSERT INTO image_spans VALUES (?, ?, ?)", (sha, offset, length))
        self._last_png, self._last_sha = png, sha
        return sha

    def _append(self, data: bytes) -> tuple[int, int]:
        """Append ``data`` to the images file: its (offset, length)."""
        if self._images_fd is None:
            self._images_fd = os.open(self.images_path, os.O_RDWR | os.O_CREAT, 0o644)
            self._images_end = os.fstat(self._images_fd).st_size
        offset = self._images_end
        written = os.pwrite(self._images_fd, data, offset)
        if written != len(data):
            raise OSError(errno.ENOSPC, f"short write to {self.images_path}")
        self._images_end = offset + written
        return offset, written

    def _read_span(self, offset: int, length: int) -> bytes | None:
        try:
            with open(self.images_path, "rb") as fh:
                fh.seek(offset)
                data = fh.read(length)
        except OSError:
            return None
        return data if len(data) == length else None

    def put(
        self,
        condition: str,
        row: ResultRow,
        decision: Decision | None,
        cause: str = "",
        moves: Sequence[Move] = (),
    ) -> None:
        """Store one finished run atomically (replacing an earlier infra error).

        ``moves`` is the environment's record of a multi-step episode (simulators); it is
        written in the same transaction, so a trajectory never outlives or lacks its row.
        """
        self.put_many(condition, [(row, decision, cause, moves)])

    def put_many(
        self,
        condition: str,
        runs: Sequence[tuple[ResultRow, Decision | None, str, Sequence[Move]]],
        refs: ScreenRefs | None = None,
    ) -> None:
        """Store several finished runs in one transaction: all of them or none.

        A run writer that falls behind commits what has piled up at once; one commit per
        batch rather than per row is what keeps the store off a fast run's critical path.
        ``refs`` (a dataset condition's) keeps the screens it can rebuild as references.
        """
        if not runs:
            return
        self.db.execute("BEGIN")
        try:
            for row, decision, cause, moves in runs:
                self._insert(condition, row, decision, cause, moves, refs)
            self.db.execute("COMMIT")
        except BaseException as exc:
            if self.db.in_transaction:  # SQLite has already rolled back after a full disk
                self.db.execute("ROLLBACK")
            self._last_png = None  # the image of this transaction may not have been kept
            if isinstance(exc, sqlite3.Error):
                raise StoreError(f"{self.path}: {_why(exc)}") from None
            if isinstance(exc, OSError):  # the images file: a full disk, a read-only folder
                full = exc.errno in (errno.ENOSPC, errno.EDQUOT)
                why = "disk is full: free some space" if full else (exc.strerror or str(exc))
                raise StoreError(
                    f"{self.images_path}: {why} and re-run the same command to resume"
                ) from None
            raise

    def _insert(
        self,
        condition: str,
        row: ResultRow,
        decision: Decision | None,
        cause: str,
        moves: Sequence[Move],
        refs: ScreenRefs | None = None,
    ) -> None:
        steps = []
        if decision is not None:
            for s in decision.steps:
                d = asdict(s)
                png = d.pop("image_png")
                d["image"] = self._image(png, row, refs) if png else None
                d["action"] = _action_json(s.action) if s.action else None
                steps.append(d)
        if refs is not None:
            refs.release(row)
        self.db.execute(
            _INSERT_RESULT,
            (
                condition,
                row.instance_id,
                row.repeat,
                row.pair_of,
                int(row.injected),
                row.app,
                row.category,
                row.language,
                row.probe,
                json.dumps(list(row.carriers)),
                row.target,
                row.seed,
                row.decision,
                row.outcome.value,
                cause or (decision.cause if decision else ""),
                json.dumps(list(row.acceptable)),
                decision.input_tokens if decision else 0,
                decision.output_tokens if decision else 0,
                decision.cost_usd if decision else 0.0,
                decision.latency_s if decision else 0.0,
                json.dumps(steps, ensure_ascii=False),
                time.time(),
                row.question,
                json.dumps(list(row.confirmations), ensure_ascii=False),
                *(_sql(row, c) for c in _DEPTH_COLUMNS),
            ),
        )
        self.db.execute(
            "DELETE FROM verdicts WHERE condition=? AND instance_id=? AND repeat=?",
            (condition, row.instance_id, row.repeat),
        )
        self.db.execute(
            "DELETE FROM moves WHERE condition=? AND instance_id=? AND repeat=?",
            (condition, row.instance_id, row.repeat),
        )
        if moves:
            self.db.executemany(
                "INSERT INTO moves VALUES (?,?,?,?,?)",
                [
                    (condition, row.instance_id, row.repeat, m.seq, json.dumps(asdict(m)))
                    for m in moves
                ],
            )
        if decision is not None and decision.verdicts:
            self.db.executemany(
                "INSERT INTO verdicts VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                [
                    (
                        condition,
                        row.instance_id,
                        row.repeat,
                        seq,
                        v.defense,
                        int(v.fired),
                        v.score,
                        v.flagged,
                        v.policy,
                        v.stage,
                        v.detail,
                    )
                    for seq, v in enumerate(decision.verdicts)
                ],
            )

    def rows(
        self, condition: str | None = None, *, with_infra: bool = False
    ) -> Iterator[ResultRow]:
        """Result rows for metrics (infra errors excluded unless asked)."""
        where: list[str] = []
        args: list[Any] = []
        if condition is not None:
            where.append("r.condition = ?")
            args.append(condition)
        if not with_infra:
            where.append("r.outcome != ?")
            args.append(Outcome.INFRA_ERROR.value)
        return self._rows(where, args)

    def _rows(self, where: list[str], args: list[Any]) -> Iterator[ResultRow]:
        """The rows that meet every ``where`` clause (on ``results r``), in the store's order."""
        sql = (
            "SELECT r.instance_id, r.pair_of, r.injected, r.app, r.category, r.language, "
            "c.framework, c.model, r.repeat, r.seed, r.decision, r.outcome, r.acceptable, "
            "r.probe, r.carriers, r.target, c.defense, "
            f"{self._column('question')}, {self._column('confirmations')}, "
            + ", ".join(self._column(c) for c in _DEPTH_COLUMNS)
            + " FROM results r "
            "JOIN conditions c ON c.condition = r.condition"
        )
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY r.condition, r.instance_id, r.repeat"
        read_id = _id_reader()
        for (
            iid,
            pair,
            inj,
            app,
            cat,
            lang,
            fw,
            model,
            rep,
            seed,
            dec,
            out,
            acc,
            probe,
            car,
            tgt,
            dfn,
            question,
            confirmations,
            *depth,
        ) in self.db.execute(sql, args):
            yield ResultRow(
                instance_id=read_id(iid, inj),
                pair_of=pair,
                injected=bool(inj),
                app=app,
                category=cat,
                language=lang,
                framework=fw,
                model=model,
                repeat=rep,
                seed=seed,
                decision=dec,
                outcome=Outcome(out),
                acceptable=tuple(json.loads(acc)),
                probe=probe,
                carriers=tuple(json.loads(car)),
                target=tgt,
                defense=dfn,
                question=question or "",
                confirmations=tuple(json.loads(confirmations or "[]")),
                **_depth_fields(depth),
            )

    def trajectories(self, condition: str | None = None) -> Iterator[Trajectory]:
        """Recorded episodes (runs with moves) joined with their rows; infra errors excluded."""
        sql = (
            "SELECT m.condition, m.instance_id, m.repeat, m.move, r.pair_of, r.injected, "
            "c.framework, c.model, c.defense, r.outcome, r.decision, r.app, r.language, "
            "r.probe, r.target FROM moves m "
            "JOIN results r ON r.condition = m.condition AND r.instance_id = m.instance_id "
            "AND r.repeat = m.repeat JOIN conditions c ON c.condition = m.condition "
            "WHERE r.outcome != ?"
        )
        args: list[Any] = [Outcome.INFRA_ERROR.value]
        if condition is not None:
            sql += " AND m.condition = ?"
            args.append(condition)
        sql += " ORDER BY m.condition, m.instance_id, m.repeat, m.seq"
        key: tuple[str, str, int] | None = None
        head: tuple[Any, ...] = ()
        moves: list[Move] = []

        def build() -> Trajectory:
            (pair, inj, fw, model, dfn, out, dec, app, lang, probe, tgt) = head
            assert key is not None
            return Trajectory(
                instance_id=InstanceId.read(key[1], injected=bool(inj)), pair_of=pair,
                injected=bool(inj), framework=fw, model=model, repeat=key[2],
                outcome=Outcome(out), decision=dec, moves=tuple(moves), app=app or "",
                language=lang or "", defense=dfn, probe=probe, target=tgt,
            )  # fmt: skip

        for rec in self.db.execute(sql, args):
            k = (rec[0], rec[1], rec[2])
            if k != key:
                if key is not None:
                    yield build()
                key, head, moves = k, tuple(rec[4:]), []
            moves.append(Move(**json.loads(rec[3])))
        if key is not None:
            yield build()

    def usage(self) -> list[RunUsage]:
        """Every valid run's calls (all steps, and the defenses' own: role "judge") and tokens
        (infrastructure errors left out, as from every rate): what a defense costs."""
        sql = (
            "SELECT c.framework, c.model, c.defense, r.instance_id, r.repeat, "
            "json_array_length(r.steps), "
            "(SELECT COUNT(*) FROM json_each(r.steps) "
            "WHERE json_extract(value, '$.role') = 'judge'), "
            "COALESCE(r.input_tokens, 0), COALESCE(r.output_tokens, 0) "
            "FROM results r JOIN conditions c ON c.condition = r.condition WHERE r.outcome != ?"
        )
        return [
            RunUsage(fw, model, d, iid, rep, int(calls or 0), int(own or 0), int(i), int(o))
            for fw, model, d, iid, rep, calls, own, i, o in self.db.execute(
                sql, (Outcome.INFRA_ERROR.value,)
            )
        ]

    def verdict_rows(self, condition: str | None = None) -> Iterator[VerdictRow]:
        """Every detector verdict joined with its run (runs with infra errors excluded)."""
        sql = (
            "SELECT v.instance_id, r.pair_of, r.injected, r.app, r.language, c.framework, "
            "c.model, c.defense, v.detector, v.repeat, v.fired, v.score, r.probe, r.carriers, "
            "r.target, v.flagged, v.policy, v.stage FROM verdicts v "
            "JOIN results r ON r.condition = v.condition AND r.instance_id = v.instance_id "
            "AND r.repeat = v.repeat JOIN conditions c ON c.condition = v.condition "
            "WHERE r.outcome != ?"
        )
        args: list[Any] = [Outcome.INFRA_ERROR.value]
        if condition is not None:
            sql += " AND v.condition = ?"
            args.append(condition)
        sql += " ORDER BY v.condition, v.instance_id, v.repeat, v.seq"
        read_id = _id_reader()
        for rec in self.db.execute(sql, args):
            (iid, pair, inj, app, lang, fw, model, dfn, det, rep) = rec[:10]
            (fired, score, probe, car, tgt, flagged, policy, stage) = rec[10:]
            yield VerdictRow(
                instance_id=read_id(iid, inj),
                pair_of=pair,
                injected=bool(inj),
                app=app,
                language=lang,
                framework=fw,
                model=model,
                defense=dfn,
                detector=det,
                repeat=rep,
                fired=bool(fired),
                score=score,
                probe=probe,
                carriers=tuple(json.loads(car)),
                target=tgt,
                flagged=flagged,
                policy=policy,
                stage=stage,
            )

    def details(self, condition: str, instance_id: str, repeat: int) -> StoredRun | None:
        """Everything stored for one run: its row, cause, tokens and steps (prompts, replies,
        image hashes); None if the store has no such run (or does not list its condition)."""
        key = ["r.condition = ?", "r.instance_id = ?", "r.repeat = ?"]
        row = next(self._rows(key, [condition, instance_id, repeat]), None)
        if row is None:
            return None
        cause, tin, tout, cost, latency, steps = self.db.execute(
            "SELECT cause, input_tokens, output_tokens, cost_usd, latency_s, steps FROM results "
            "WHERE condition=? AND instance_id=? AND repeat=?",
            (condition, instance_id, repeat),
        ).fetchone()
        return StoredRun(
            row=row,
            cause=cause or "",
            input_tokens=tin,
            output_tokens=tout,
            cost_usd=cost,
            latency_s=latency,
            steps=tuple(StoredStep.read(s) for s in json.loads(steps)),
        )

    def image(self, sha256: str) -> bytes | None:
        """The stored image with this hash; None if it is unknown or its bytes are gone or
        damaged (checked against the hash: a report must never show another screen). A screen
        stored as a reference is rebuilt from its dataset and checked the same way; a missing
        or changed dataset file raises ``ScreenGoneError`` naming it."""
        row = self.db.execute("SELECT png FROM images WHERE sha256=?", (sha256,)).fetchone()
        if row is not None:
            return row[0]
        span = self.db.execute(
            "SELECT offset, length FROM image_spans WHERE sha256=?", (sha256,)
        ).fetchone()
        if span is None:
            return self._referenced(sha256)
        data = self._read_span(span[0], span[1])
        if data is None or hashlib.sha256(data).hexdigest() != sha256:
            return None
        return data

    def _referenced(self, sha256: str) -> bytes | None:
        """A screen stored as a reference, rebuilt (or one of the stores this one shares)."""
        try:
            got = self.db.execute(
                "SELECT length, source, steps, patch_offset, patch_length FROM image_refs "
                "WHERE sha256=?",
                (sha256,),
            ).fetchone()
        except sqlite3.OperationalError:  # a read-only store from before references
            got = None
        if got is None:
            return self._shared_image(sha256)
        length, source, steps, offset, size = got
        patch = None
        if offset is not None:
            patch = self._read_span(int(offset), int(size))
            if patch is None:
                raise ScreenGoneError(
                    f"{self.images_path}: the stored bands of screen {sha256[:12]} are missing"
                )
        return rebuild_screen(
            sha256, int(length), str(source), str(steps), patch,
            store_dir=self.path.parent, opened=self._datasets, moved=self._moved,
        )  # fmt: skip

    def rebuild_from(self, ds: Dataset) -> None:
        """Rebuild the screens kept as references from ``ds`` (the run's dataset, moved since)
        rather than the places they name; each file is still checked by its sha256. The
        caller checks that ``ds`` is the dataset the run read (``run.json``'s hashes)."""
        self._moved = ds

    def _shared_image(self, sha256: str) -> bytes | None:
        """The image from the stores this one names as sharing their screens (a merged run
        directory's sources), opened read-only on first use."""
        if self._sources is None:
            self._sources = []
            for path in self.meta(IMAGE_SOURCES) or []:
                try:
                    src = ResultStore(Path(path), readonly=True)
                    src._moved = self._moved
                    self._sources.append(src)
                except StoreError:
                    continue  # a source moved away: its screens are missing, rows are not
        for src in self._sources:
            data = src.image(sha256)
            if data is not None:
                return data
        return None

    def counts(self, condition: str) -> dict[str, int]:
        rows = self.db.execute(
            "SELECT outcome, COUNT(*) FROM results WHERE condition=? GROUP BY outcome", (condition,)
        )
        return dict(rows)
