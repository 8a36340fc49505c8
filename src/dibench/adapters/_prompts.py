"""User prompt templates: run an adapter with wording of your choice, one file per role.

Our built-in wording is our own. A user who has an original framework checked out can put its
exact wording in a folder (``--adapter-opt prompts=DIR``) and run with it: ``DIR/<role>.txt``
replaces the user text of that role's call and ``DIR/<role>.system.txt`` its system prompt.
Placeholders are written ``{{name}}`` (double braces, so prompts full of JSON need no
escaping); each adapter documents the names each role offers (``docs/FRAMEWORKS.md``). A
file for a role the adapter does not have, or a placeholder the role does not offer, is an
error that names the file, so a typo never silently falls back to the built-in wording.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from dibench._errors import DIBenchError

__all__ = ["PLACEHOLDER", "PromptTemplates", "TemplateError", "folder_digest"]

PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


class TemplateError(DIBenchError, ValueError):
    """A template folder or file that cannot be used (the message names the file)."""


class PromptTemplates:
    """The templates found in ``folder`` for one adapter's roles (none: built-in wording).

    ``roles`` maps each role to the placeholder names it offers. Files are read once, at
    construction, and checked then.
    """

    def __init__(
        self, folder: str | Path | None, roles: Mapping[str, Sequence[str]], framework: str
    ) -> None:
        self.folder = None if folder in (None, "") else Path(str(folder))
        self.roles = {r: tuple(names) for r, names in roles.items()}
        self.framework = framework
        self._texts: dict[str, str] = {}
        if self.folder is not None:
            self._load(self.folder)

    def _load(self, folder: Path) -> None:
        if not folder.is_dir():
            raise TemplateError(f"prompts={folder}: not a directory")
        known = sorted(self.roles)
        for path in sorted(folder.glob("*.txt")):
            key = path.name[: -len(".txt")]
            role = key[: -len(".system")] if key.endswith(".system") else key
            if role not in self.roles:
                raise TemplateError(
                    f"{path}: {self.framework} has no role {role!r} "
                    f"(its roles: {', '.join(known)}; name files ROLE.txt or ROLE.system.txt)"
                )
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as err:
                raise TemplateError(f"{path}: cannot read as UTF-8 text ({err})") from err
            offered = self.roles[role]
            for m in PLACEHOLDER.finditer(text):
                if m.group(1) not in offered:
                    names = ", ".join(offered) or "none"
                    raise TemplateError(
                        f"{path}: unknown placeholder {{{{{m.group(1)}}}}} "
                        f"(role {role!r} offers: {names})"
                    )
            self._texts[key] = text
        if not self._texts:
            raise TemplateError(
                f"prompts={folder}: no ROLE.txt files (roles of {self.framework}: "
                f"{', '.join(known)})"
            )

    def __bool__(self) -> bool:
        return bool(self._texts)

    def has(self, role: str, *, system: bool = False) -> bool:
        return (f"{role}.system" if system else role) in self._texts

    def render(
        self,
        role: str,
        default: str | Callable[[], str],
        values: Mapping[str, object],
        *,
        system: bool = False,
    ) -> str:
        """The role's template filled with ``values``, or ``default`` when it has none."""
        key = f"{role}.system" if system else role
        text = self._texts.get(key)
        if text is None:
            return default() if callable(default) else default
        return PLACEHOLDER.sub(lambda m: str(values.get(m.group(1), "")), text)

    def fingerprint(self) -> str:
        """A hash of every template's name and text ("" when none): recorded with the run."""
        if not self._texts:
            return ""
        h = hashlib.blake2b(digest_size=8)
        for key in sorted(self._texts):
            h.update(key.encode() + b"\0" + self._texts[key].encode() + b"\0")
        return h.hexdigest()


def folder_digest(folder: str | Path | None) -> str:
    """A hash of every ``*.txt`` file's name and bytes in ``folder`` ("" for none or a folder
    that cannot be read): what a resumed run compares, so editing a template is noticed."""
    if folder in (None, ""):
        return ""
    path = Path(str(folder))
    h = hashlib.blake2b(digest_size=8)
    try:
        for f in sorted(path.glob("*.txt")):
            h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    except OSError:
        return ""
    return h.hexdigest()
