"""``RunRequest``: everything one ``dibench run`` of a condition over a dataset needs; and what
a request's settings become in run.json (``condition_entry``): its options as they may be
stored (``stored_options``: never a secret).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dibench._records import ConditionRecord
from dibench._secrets import redact_option, secret_option
from dibench._values import Condition, framework_label
from dibench.adapters import folder_digest

from ._errors import RunError
from ._run import RunConfig
from ._types import ConditionSpec

__all__ = ["RunRequest", "condition_entry", "stored_options"]


def stored_options(options: dict[str, Any], flag: str = "--provider-opt") -> dict[str, Any]:
    """``options`` as they may be stored: a key passed as a value is refused (a ``RunError``
    naming ``flag``), URL credentials redacted (``_secrets.redact_option``)."""
    for k in options:
        if secret_option(k):
            raise RunError(
                f"{flag} {k}: looks like a secret; pass the name of an environment variable "
                f"instead (e.g. {flag} {k}_env=MY_KEY)"
            )
    return {k: redact_option(v) for k, v in options.items()}


def condition_entry(req: ConditionSpec) -> ConditionRecord:
    """``req``'s entry in run.json's ``conditions`` (options as ``stored_options`` keeps them,
    the prompt templates' digest when a ``prompts=`` folder is given)."""
    return ConditionRecord(
        key=req.condition.key,
        framework=req.framework,
        model=req.model,
        defense=req.defense,
        defenses=list(req.defenses),
        run=req.config.describe(),
        provider_options=stored_options(req.provider_options),
        adapter_options=stored_options(req.adapter_options, "--adapter-opt"),
        prompt_templates=folder_digest(req.adapter_options.get("prompts")) or None,
    )


@dataclass(frozen=True)
class RunRequest:
    """Everything one ``dibench run`` needs."""

    dataset: Path
    out: Path
    framework: str
    model: str
    config: RunConfig = field(default_factory=RunConfig)
    provider_options: dict[str, Any] = field(default_factory=dict)
    adapter_options: dict[str, Any] = field(default_factory=dict)
    defense: str = "none"  # the condition's label; derived from ``defenses`` when given
    record: bool = True
    # defense specs in order, e.g. ("jpeg:75", "prompt-warning"): a ``DefenseSpecs`` once made
    defenses: tuple[str, ...] = ()
    # run record files that differ from the sha256 their manifest records (else refused);
    # not a setting of the condition: run.json records the hashes of what was read either way
    allow_modified_data: bool = False

    def __post_init__(self) -> None:
        """Canonicalise the paths and defenses: specs given as ``DefenseSpecs`` (read where
        the run was asked for) are kept, strings are read here (DefenseError on an unknown
        defense or a bad parameter).

        A bare ``defense`` label (``"jpeg:75+prompt-warning"``) is read as its '+'-joined specs,
        so ``jpeg`` and ``jpeg:75`` are one condition and resume into the same rows.
        """
        from dibench.defenses import DefenseSpecs

        object.__setattr__(self, "dataset", Path(self.dataset))  # a str is taken as a path
        object.__setattr__(self, "out", Path(self.out))
        specs: tuple[str, ...] = self.defenses
        if not specs and self.defense not in ("", "none"):
            specs = tuple(self.defense.split("+"))
        parsed = DefenseSpecs.of(specs)
        object.__setattr__(self, "defenses", parsed)
        object.__setattr__(self, "defense", parsed.spec)

    @property
    def condition(self) -> Condition:
        """The condition this request runs (``framework_label`` names its framework)."""
        framework = framework_label(self.framework, self.adapter_options)
        return Condition(framework, self.model, self.defense)
