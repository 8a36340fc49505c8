"""``classifier-detector``: a local Hugging Face text-classification model scores screen text.

Any folder ``save_pretrained`` wrote (config.json, weights, tokenizer) -- a prompt-guard model
the user has, or one fine-tuned on their own data -- scores every UI text the keyword detector
reads (each node's text and content description) and, with ``ocr=true``, the text drawn on
cover images that the UI tree lacks. A text's score is the probability of the injection
label(s); the screen's is its worst text's, and threshold and policy act as for every
detector. The model loads with ``transformers`` on the CPU from local files only (nothing is
downloaded), once per process; texts are scored in batches, each distinct text once (a benign
screen and its injected variants share most of theirs). ``torch`` and ``transformers`` are
the optional extra ``dibench[classifier]``; nothing imports them before the first screen.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dibench._cache import LruCache
from dibench._extras import missing_modules
from dibench._fs import sha256_file
from dibench._values import Box
from dibench.adapters import excerpt

from ._base import DEFENSES, DefenseContext, DefenseError, View
from ._detect import Detector, Finding, node_text
from ._keywords import OcrText, ocr_lines

if TYPE_CHECKING:
    from dibench.providers import OcrCache

__all__ = [
    "INSTALL_HINT",
    "ClassifierDetector",
    "ClassifierError",
    "TextClassifier",
    "injection_labels",
    "load_classifier",
]

INSTALL_HINT = 'pip install "dibench[classifier]"'

# Label names (lower case, matched as substrings) that mean "this text is an attack", and the
# names of a benign class; ``injection_labels`` says how a model's labels are read with them.
INJECTION_WORDS = ("injection", "malicious", "jailbreak", "unsafe", "attack", "harmful")
BENIGN_WORDS = ("benign", "safe", "legit", "clean", "normal", "harmless")

WEIGHT_FILES = (
    "model.safetensors",
    "model.safetensors.index.json",
    "pytorch_model.bin",
    "pytorch_model.bin.index.json",
)
TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "vocab.txt",
    "vocab.json",
    "tokenizer.model",
    "spm.model",
)


class ClassifierError(DefenseError):
    """The extra is missing, or the model folder, its labels or its weights are unusable."""


def _require_extra() -> None:
    """Refuse, naming every missing package, when the extra is not installed (looked up, not
    imported: torch alone takes seconds to import)."""
    missing = missing_modules("classifier")
    if missing:
        raise ClassifierError(f"classifier-detector needs {' and '.join(missing)}: {INSTALL_HINT}")


def _read_config(folder: Path) -> dict[str, Any]:
    """The model folder's config.json, after checking it holds weights and a tokenizer
    (``ValueError`` naming the folder or file otherwise)."""
    where = f"model={folder}"
    if not folder.is_dir():
        raise ValueError(f"{where}: no such folder (a saved Hugging Face model folder)")
    config_file = folder / "config.json"
    if not config_file.is_file():
        raise ValueError(
            f"{where}: not a Hugging Face model folder (no config.json; save one with "
            "save_pretrained)"
        )
    if not any((folder / f).is_file() for f in WEIGHT_FILES):
        raise ValueError(f"{where}: no weights ({' or '.join(WEIGHT_FILES[::2])})")
    if not any((folder / f).is_file() for f in TOKENIZER_FILES):
        raise ValueError(f"{where}: no tokenizer (tokenizer.json, vocab.txt, ...)")
    try:
        config = json.loads(config_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ValueError(f"{config_file}: not readable JSON ({exc})") from None
    if not isinstance(config, dict):
        raise ValueError(f"{config_file}: not a JSON object")
    return config


def model_labels(config: dict[str, Any]) -> dict[int, str]:
    """Class index -> label name, as transformers reads config.json (``LABEL_i`` by default)."""
    raw = config.get("id2label")
    if isinstance(raw, dict) and raw:
        try:
            return {int(k): str(v) for k, v in sorted(raw.items(), key=lambda kv: int(kv[0]))}
        except (TypeError, ValueError):
            pass
    n = config.get("num_labels", 2)
    return {i: f"LABEL_{i}" for i in range(n if isinstance(n, int) and n > 0 else 2)}


def injection_labels(labels: dict[int, str], label: str = "auto") -> tuple[int, ...]:
    """The class indices whose probability is the injection score.

    ``label``: names or indices joined by ``+`` or ``,`` (``INJECTION+JAILBREAK``, ``1``), or
    ``auto``: every label whose name contains one of ``INJECTION_WORDS`` (INJECTION,
    MALICIOUS, JAILBREAK, UNSAFE, ...); failing that, of two labels the one that is not named
    like a benign class (BENIGN, SAFE, ...), or ``LABEL_1`` of an unnamed pair. Raises
    ``ValueError`` naming the model's labels when none fits.
    """
    listed = ", ".join(labels.values())
    if label.strip().lower() not in ("", "auto"):
        by_name = {v.lower(): k for k, v in labels.items()}
        chosen: list[int] = []
        for part in label.replace("+", ",").split(","):
            name = part.strip()
            if not name:
                continue
            if name.lower() in by_name:
                chosen.append(by_name[name.lower()])
            elif name.isdigit() and int(name) in labels:
                chosen.append(int(name))
            else:
                raise ValueError(f"label {name!r} is not one of the model's labels ({listed})")
        if not chosen:
            raise ValueError(f"label is empty (the model's labels: {listed})")
        if len(set(chosen)) == len(labels):
            raise ValueError(f"label names every class ({listed}): the score would always be 1")
        return tuple(sorted(set(chosen)))
    low = {k: v.lower() for k, v in labels.items()}
    hits = tuple(k for k, v in low.items() if any(w in v for w in INJECTION_WORDS))
    if hits and len(hits) < len(labels):
        return hits
    if len(labels) == 2:
        benign = [k for k, v in low.items() if any(w in v for w in BENIGN_WORDS)]
        if len(benign) == 1:
            return tuple(k for k in labels if k != benign[0])
        if [v for _, v in sorted(low.items())] == ["label_0", "label_1"]:
            return (1,)
    raise ValueError(
        f"cannot tell which of the model's labels means injection ({listed}); "
        "name it with label=NAME"
    )


class TextClassifier:
    """A loaded model and tokenizer with a memo of the class probabilities of each text.

    Thread-safe: screens scored from several threads take turns on the model (each batch
    runs on the detector's ``threads`` cores), and a text scored once is not scored again.
    """

    def __init__(self, folder: Path) -> None:
        t0 = time.perf_counter()
        _require_extra()
        try:
            config = _read_config(folder)
        except ValueError as exc:
            raise ClassifierError(f"classifier-detector: {exc}") from None
        try:
            import torch
            from transformers import AutoModelForSequenceClassification, AutoTokenizer
            from transformers.utils import logging as hf_logging

            # A run prints its own progress, and what a load report would say is checked
            # below and said in one line.
            bar, verbosity = hf_logging.is_progress_bar_enabled(), hf_logging.get_verbosity()
            hf_logging.disable_progress_bar()
            hf_logging.set_verbosity_error()
            try:
                tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
                model, info = AutoModelForSequenceClassification.from_pretrained(
                    folder, local_files_only=True, output_loading_info=True
                )
            finally:
                hf_logging.set_verbosity(verbosity)
                if bar:
                    hf_logging.enable_progress_bar()
        except Exception as exc:  # whatever the loaders raise (a SafetensorError, ...)
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ClassifierError(
                f"classifier-detector: model={folder}: cannot load it ({first})"
            ) from None
        untrained = [k for k in info.get("missing_keys", ()) if "classifier" in k or "score" in k]
        if untrained:
            raise ClassifierError(
                f"classifier-detector: model={folder}: its weights have no classification "
                f"head ({untrained[0]} is missing): a base model, not a fine-tuned classifier"
            )
        self.torch = torch
        self.tokenizer = tokenizer
        self.model = model.to("cpu").eval()
        self.labels = model_labels(config)
        self.multi_label = config.get("problem_type") == "multi_label_classification"
        limit = getattr(tokenizer, "model_max_length", 512)
        positions = config.get("max_position_embeddings", 512)
        self.max_length = min(
            512,
            limit if isinstance(limit, int) and limit > 0 else 512,
            positions if isinstance(positions, int) and positions > 2 else 512,
        )
        self._memo: LruCache[str, tuple[float, ...]] = LruCache(maxsize=16384)
        self._lock = threading.Lock()
        self.load_s = time.perf_counter() - t0
        self.scored = 0  # texts run through the model (memo misses)
        self.score_s = 0.0  # seconds spent in the model

    def probabilities(
        self, texts: Sequence[str], batch_size: int = 32, threads: int = 1
    ) -> list[tuple[float, ...]]:
        """Each text's class probabilities (softmax; sigmoid for a multi-label model), the
        model running on ``threads`` CPU threads."""
        todo = list(dict.fromkeys(t for t in texts if self._memo.peek(t) is None))
        if todo:
            with self._lock:
                # similar lengths batched together: less padding to compute
                todo = sorted((t for t in todo if self._memo.peek(t) is None), key=len)
                for i in range(0, len(todo), max(1, batch_size)):
                    chunk = todo[i : i + max(1, batch_size)]
                    for text, probs in zip(chunk, self._run(chunk, threads), strict=True):
                        self._memo.put(text, probs)
        out = []
        for t in texts:
            probs = self._memo.peek(t)
            if probs is None:  # pushed out by a flood of new texts: score it alone
                with self._lock:
                    probs = self._run([t], threads)[0]
            out.append(probs)
        return out

    def _run(self, texts: list[str], threads: int) -> list[tuple[float, ...]]:
        t0 = time.perf_counter()
        torch = self.torch
        if torch.get_num_threads() != threads:  # torch's setting is the process's
            torch.set_num_threads(threads)
        enc = self.tokenizer(
            texts, padding=True, truncation=True, max_length=self.max_length, return_tensors="pt"
        )
        with torch.inference_mode():
            logits = self.model(**enc).logits.float()
        probs = torch.sigmoid(logits) if self.multi_label else torch.softmax(logits, dim=-1)
        self.scored += len(texts)
        self.score_s += time.perf_counter() - t0
        return [tuple(float(p) for p in row) for row in probs.tolist()]

    def score(
        self, texts: Sequence[str], label: Sequence[int], batch_size: int = 32, threads: int = 1
    ) -> list[float]:
        """Each text's injection score: the summed probability of the ``label`` classes (for a
        multi-label model, the highest of them)."""
        combine = max if self.multi_label else sum
        return [
            round(min(1.0, combine(probs[i] for i in label)), 6)
            for probs in self.probabilities(texts, batch_size, threads)
        ]


# One loaded model per folder and process (every condition and defense instance shares it).
_MODELS: LruCache[str, TextClassifier] = LruCache(maxsize=2)
_DIGESTS: LruCache[str, str] = LruCache(maxsize=8)


def load_classifier(folder: Path | str) -> TextClassifier:
    """The model in ``folder``, loaded on the first call of this process and kept."""
    path = Path(folder).expanduser().resolve()
    return _MODELS.get(str(path), lambda: TextClassifier(path))


def _weights_digest(folder: Path) -> str:
    """sha256 of the weight files' digests, so a run records which model scored it."""
    import hashlib

    def compute() -> str:
        h = hashlib.sha256()
        for f in sorted(folder.glob("*.safetensors")) + sorted(folder.glob("*.bin")):
            h.update(f"{f.name}:{sha256_file(f)}\n".encode())
        return h.hexdigest()

    return _DIGESTS.get(str(folder), compute)


@DEFENSES.register("classifier-detector")
class ClassifierDetector(Detector):
    """A local Hugging Face text-classification model scores each UI text (dibench[classifier]).

    ``classifier-detector:model=PATH,threshold=0.5,policy=block,label=auto,ocr=false,
    batch_size=32,threads=1``; see the module docstring.
    """

    main = "model"

    def __init__(
        self,
        model: str = "",
        threshold: float = 0.5,
        policy: str = "block",
        label: str = "auto",
        ocr: bool = False,
        batch_size: int = 32,
        threads: int = 1,
    ) -> None:
        if not model:
            raise ValueError("needs model=PATH (a saved Hugging Face model folder)")
        self.model = model
        self.threshold = float(threshold)
        self.policy = policy
        self.label = label.strip() or "auto"
        self.ocr = bool(ocr)
        self.batch_size = int(batch_size)
        self.threads = int(threads)
        self._check()
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {self.batch_size}")
        if self.threads < 1:
            raise ValueError(f"threads must be at least 1, got {self.threads}")
        _require_extra()
        self.folder = Path(model).expanduser().resolve()
        config = _read_config(self.folder)
        self.labels = model_labels(config)
        self.classes = injection_labels(self.labels, self.label)
        self._ocr_cache: object | None = None

    def classifier(self) -> TextClassifier:
        return load_classifier(self.folder)

    def load(self) -> None:
        """Load the model (``ClassifierError`` when its weights or tokenizer do not load)."""
        self.classifier()

    def warm(self) -> None:
        """Load the model (and with ``ocr=true`` the OCR engine) before the first screen."""
        self.load()
        if self.ocr:
            self._cache().engine  # noqa: B018 - loads the engine

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            "injection_labels": [self.labels[i] for i in self.classes],
            "weights_sha256": _weights_digest(self.folder),
        }

    def _cache(self) -> OcrCache:
        from dibench.providers import OcrCache

        if self._ocr_cache is None:
            self._ocr_cache = OcrCache(maxsize=512)
        return self._ocr_cache  # type: ignore[return-value]

    async def scan(self, view: View, ctx: DefenseContext) -> Finding:
        return await asyncio.to_thread(self._scan, view)

    def _scan(self, view: View) -> Finding:
        read = ocr_lines(view, self._cache().read) if self.ocr else []
        return self.judge(view, read)

    def judge(self, view: View, read: Sequence[OcrText] = ()) -> Finding:
        """The finding on ``view``'s UI texts and the cover text ``read`` (``ocr_lines``)."""
        items: list[tuple[str, str, tuple[int, ...], tuple[Box, ...]]] = []
        for e in view.ui:
            text = node_text(e)
            if text:
                items.append((e.candidate or "", text, (e.index,), ()))
        for owner, text, box in read:
            items.append((owner or "", text, (), (Box(*box),)))
        if not items:
            return Finding(score=0.0, detail="no text")
        texts = [t for _, t, _, _ in items]
        scores = self.classifier().score(texts, self.classes, self.batch_size, self.threads)
        ranked = sorted(zip(scores, items, strict=True), key=lambda s: -s[0])
        top, (owner, text, _, _) = ranked[0]
        fired = [item for score, item in ranked if score >= self.threshold]
        names = "+".join(self.labels[i] for i in self.classes)
        return Finding(
            score=top,
            flagged=owner or excerpt(text, 60),
            elements=tuple(i for item in fired for i in item[2]),
            boxes=tuple(b for item in fired for b in item[3]),
            detail=f"P({names})={top:.3f} in {excerpt(text, 60)!r}",
        )
