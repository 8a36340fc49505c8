"""Defenses: components at named points of an agent's step, composable and user-extensible.

A ``Defense`` may add to the system prompt (``system_prefix``), inspect or transform what the
model sees (``before``: screenshot, UI text, candidate boxes; attach a verdict or block) and
check the proposed action (``after``). ``DefendedAdapter`` runs any adapter behind a
``DefenseChain``. Built-ins, registered in ``DEFENSES`` by name: ``noise``, ``jpeg``,
``downscale``, ``prompt-warning``, ``spotlight`` (third-party text in the prompt marked as
data), ``sandwich`` (the instruction repeated after the screen content), ``keyword-detector``
(offline), ``classifier-detector`` (a local Hugging Face text classifier, extra
``dibench[classifier]``), ``llm-judge`` and ``evidence-check`` (claims checked against the
app's own fields before a commit). A defense may also rewrite the requests a framework sends
(``rewrite``). Users register their own with ``@DEFENSES.register("name")`` in a module given
to ``--load`` or through the ``dibench.defenses`` entry point.
"""

from dibench.adapters import Verdict

from ._adapter import DefendedAdapter, map_back
from ._base import (
    DEFENSES,
    NO_DEFENSE,
    Defense,
    DefenseChain,
    DefenseContext,
    DefenseError,
    DefenseSpecs,
    View,
    canonical_spec,
    chain_label,
    make_chain,
    make_defense,
    parse_spec,
)
from ._classifier import ClassifierDetector, injection_labels, load_classifier
from ._detect import POLICIES, Detector, Finding, mask_regions
from ._evidence import (
    Claim,
    Evidence,
    EvidenceCheck,
    Field,
    card_fields,
    check_claims,
    extract_claims,
    field_values,
)
from ._judge import LlmJudge, parse_judgement
from ._keywords import KeywordDetector, score_text
from ._preprocess import (
    DownscaleDefense,
    JpegDefense,
    NoiseDefense,
    add_noise,
    downscale,
    jpeg_encode,
    jpeg_roundtrip,
)
from ._prompt import DEFAULT_WARNINGS, PromptWarning
from ._spotlight import SANDWICH_TEXT, SPOTLIGHT_NOTES, Sandwich, Spotlight

__all__ = [
    "DEFAULT_WARNINGS",
    "DEFENSES",
    "NO_DEFENSE",
    "POLICIES",
    "SANDWICH_TEXT",
    "SPOTLIGHT_NOTES",
    "Claim",
    "ClassifierDetector",
    "DefendedAdapter",
    "Defense",
    "DefenseChain",
    "DefenseContext",
    "DefenseError",
    "DefenseSpecs",
    "Detector",
    "DownscaleDefense",
    "Evidence",
    "EvidenceCheck",
    "Field",
    "Finding",
    "JpegDefense",
    "KeywordDetector",
    "LlmJudge",
    "NoiseDefense",
    "PromptWarning",
    "Sandwich",
    "Spotlight",
    "Verdict",
    "View",
    "add_noise",
    "canonical_spec",
    "card_fields",
    "chain_label",
    "check_claims",
    "downscale",
    "extract_claims",
    "field_values",
    "injection_labels",
    "jpeg_encode",
    "jpeg_roundtrip",
    "load_classifier",
    "make_chain",
    "make_defense",
    "map_back",
    "mask_regions",
    "parse_judgement",
    "parse_spec",
    "score_text",
]
