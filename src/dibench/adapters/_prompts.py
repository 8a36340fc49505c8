"""Prompt templates: every word an adapter sends comes from a folder of ``{{placeholder}}`` files.

Each framework ships its own wording as such a folder (``<framework>/prompts/``), and a user
who has an original framework checked out can put its exact wording in a folder of the same
shape (``--adapter-opt prompts=DIR``) and run with it: ``DIR/<role>.txt`` replaces the user
text of that role's call and ``DIR/<role>.system.txt`` its system prompt; a role without a file
keeps the packaged wording. Both folders are read by one loader, so a copy of the packaged
folder passed as ``prompts=`` sends byte-identical requests. Placeholders are written
``{{name}}`` (double braces, so prompts full of JSON need no escaping); each adapter documents
the names each role offers (``dibench docs frameworks``). A file for a role the adapter does not
have, or a placeholder the role does not offer, is an error that names the file, so a typo
never silently falls back to the packaged wording.

Sections that the packaged wording shows only when they have content (a hint, the history, a
stuck warning) are ``parts/NAME.txt`` files of the packaged folder: the adapter fills one into
a role's placeholder (``{{hint_section}}``) or leaves that placeholder empty. A user's folder
has no parts: its templates use the placeholders as they like.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType

from dibench._cache import LruCache
from dibench._errors import DIBenchError

__all__ = ["PLACEHOLDER", "PromptTemplates", "TemplateError", "folder_digest"]

PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


# The packaged wording by (folder, roles, framework): an adapter is made per run, and a test or
# a sweep makes thousands; reading and checking its folder each time cost ~0.6 ms of the
# 0.65 ms of making one. Installed files, read-only views: every adapter shares them.
_PACKAGED: LruCache[
    tuple[str, tuple[tuple[str, tuple[str, ...]], ...], str],
    tuple[Mapping[str, str], Mapping[str, str]],
] = LruCache(maxsize=256)


class TemplateError(DIBenchError, ValueError):
    """A template folder or file that cannot be used (the message names the file)."""


class PromptTemplates:
    """An adapter's templates: the user's ``folder`` (if any) over the ``packaged`` wording.

    ``roles`` maps each role to the placeholder names it offers. Files are read once, at
    construction, and checked then (the packaged folder as strictly as the user's).
    """

    def __init__(
        self,
        folder: str | Path | None,
        roles: Mapping[str, Sequence[str]],
        framework: str,
        packaged: Path | None = None,
    ) -> None:
        self.folder = None if folder in (None, "") else Path(str(folder))
        self.roles = {r: tuple(names) for r, names in roles.items()}
        self.framework = framework
        self._packaged: Mapping[str, str] = {}
        self._parts: Mapping[str, str] = {}
        if packaged is not None:
            key = (str(packaged), tuple(sorted(self.roles.items())), framework)
            self._packaged, self._parts = _PACKAGED.get(key, lambda: self._read_packaged(packaged))
        self._texts: dict[str, str] = {}
        if self.folder is not None:
            self._texts = self._load(self.folder)

    def _read_packaged(self, packaged: Path) -> tuple[Mapping[str, str], Mapping[str, str]]:
        """The packaged folder's role templates (checked) and its parts."""
        texts = self._load(packaged)
        parts = packaged / "parts"
        found = {}
        if parts.is_dir():
            found = {p.stem: p.read_text(encoding="utf-8") for p in parts.glob("*.txt")}
        return MappingProxyType(texts), MappingProxyType(found)

    def _load(self, folder: Path) -> dict[str, str]:
        """The role templates of ``folder``, checked against the roles' placeholders."""
        texts: dict[str, str] = {}
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
            texts[key] = text
        if not texts:
            raise TemplateError(
                f"prompts={folder}: no ROLE.txt files (roles of {self.framework}: "
                f"{', '.join(known)})"
            )
        return texts

    def __bool__(self) -> bool:
        """The user gave templates of their own."""
        return bool(self._texts)

    def has(self, role: str, *, system: bool = False) -> bool:
        """The role has this template, the user's or the packaged one."""
        key = f"{role}.system" if system else role
        return key in self._texts or key in self._packaged

    def render(self, role: str, values: Mapping[str, object], *, system: bool = False) -> str:
        """The role's template (the user's, else the packaged one) filled with ``values``;
        "" when the role has neither (a system prompt the framework does not send)."""
        key = f"{role}.system" if system else role
        text = self._texts.get(key, self._packaged.get(key))
        if text is None:
            return ""
        return PLACEHOLDER.sub(lambda m: str(values.get(m.group(1), "")), text)

    def part(self, name: str, values: Mapping[str, object] | None = None) -> str:
        """The packaged section ``parts/NAME.txt`` filled with ``values`` (every placeholder
        it holds must have one: a part is ours, so a missing value is a bug)."""
        text = self._parts[name]
        given = values or {}
        return PLACEHOLDER.sub(lambda m: str(given[m.group(1)]), text)

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
