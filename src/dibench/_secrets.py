"""Keep secrets that ride along in URLs and replies off disk and out of messages.

A key can reach DIBench outside its environment variable: as the userinfo of ``--base-url``
(``http://user:sk-...@host/v1``), as a query parameter (``?key=...``), or echoed back by a
server inside a reply. Everything that is stored or printed goes through ``redact_url`` (for
URLs) or ``scrub`` (for free text). This module is the ground floor: it imports nothing from
dibench, so any layer may use it.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import unquote

__all__ = [
    "MASK",
    "MIN_SECRET_LEN",
    "basic_credentials",
    "mask_secret_keys",
    "redact_option",
    "redact_url",
    "scrub",
    "secret_option",
    "split_userinfo",
    "url_secrets",
]

MASK = "***"
# Shorter strings are left alone by ``scrub``: replacing "ab" everywhere would mangle replies
# and prompts while hiding nothing worth hiding.
MIN_SECRET_LEN = 4

# Query or fragment parameter names whose values are credentials. Deliberately broad (a plain
# substring test): masking a harmless value costs nothing, leaking a key costs a rotation.
_SECRET_NAME = re.compile(r"key|token|secret|passw|pwd|sig|auth|credential", re.IGNORECASE)
# Inside a dict-valued setting: a credential's name ends so (``api_key``, ``x-api-key``,
# ``access_token``, ``Authorization``), a setting's does not (``max_tokens``, ``key_path``).
_SECRET_KEY = re.compile(
    r"(^|[_-])(key|token|secret|password|passwd)$|authori[sz]ation|credentials?$", re.IGNORECASE
)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def _split_authority(url: str) -> tuple[str, str, str]:
    """``url`` as (text before the authority, the authority, the rest).

    Parsed by hand rather than with urllib so a URL that urllib rejects (a bad port, a stray
    ``[``) is still redacted. As in RFC 3986 only ``//`` starts an authority: a string without
    it (a model name like ``claude@2024``, any other option value) has no userinfo to hide.
    """
    m = _SCHEME.match(url)
    if m:
        start = m.end()
    elif url.startswith("//"):
        start = 2
    else:
        return "", "", url
    end = len(url)
    for sep in "/?#":
        i = url.find(sep, start)
        if i != -1:
            end = min(end, i)
    return url[:start], url[start:end], url[end:]


def _userinfo(url: str) -> str | None:
    """The userinfo of ``url`` as written (still percent-encoded), or None if it has none."""
    _, authority, _ = _split_authority(url)
    userinfo, at, _ = authority.rpartition("@")
    return userinfo if at else None


def _params(rest: str) -> list[tuple[int, int, str]]:
    """(start, end, name) of every secret-looking parameter value in a query and fragment."""
    found: list[tuple[int, int, str]] = []
    for m in re.finditer(r"([?&#;])([^=&#;]*)=([^&#;]*)", rest):
        name = unquote(m.group(2))
        if m.group(3) and _SECRET_NAME.search(name):
            found.append((m.start(3), m.end(3), name))
    return found


def redact_url(url: str) -> str:
    """``url`` safe to store or print: userinfo becomes ``***@``, secret parameters ``***``.

    ``http://user:sk-1@host:8000/v1?api_key=sk-2&x=1`` ->
    ``http://***@host:8000/v1?api_key=***&x=1``. Anything else is returned as given.
    """
    if not url:
        return url
    head, authority, rest = _split_authority(url)
    _, at, hostport = authority.rpartition("@")
    if at:
        authority = f"{MASK}@{hostport}"
    pieces: list[str] = []
    last = 0
    for start, end, _ in _params(rest):
        pieces += [rest[last:start], MASK]
        last = end
    pieces.append(rest[last:])
    return head + authority + "".join(pieces)


def basic_credentials(userinfo: str) -> str:
    """The token of an HTTP ``Authorization: Basic`` header for decoded ``user:password``."""
    return base64.b64encode(userinfo.encode()).decode("ascii")


def split_userinfo(url: str) -> tuple[str, str | None]:
    """``url`` without its userinfo, and the userinfo percent-decoded (None if it has none).

    ``http://alice:p%40ss@h/v1`` -> (``http://h/v1``, ``alice:p@ss``), so a caller can send the
    credentials in a header instead of a URL that libraries log and put in messages.
    """
    head, authority, rest = _split_authority(url)
    userinfo, at, hostport = authority.rpartition("@")
    if not at:
        return url, None
    user, _, password = userinfo.partition(":")
    return head + hostport + rest, f"{unquote(user)}:{unquote(password)}"


def url_secrets(url: str | None) -> tuple[str, ...]:
    """The secrets ``url`` carries, in every form they may be echoed in, to ``scrub`` with.

    The userinfo's password (or the whole userinfo when it is a bare token, as in
    ``https://TOKEN@host``), the HTTP Basic credentials an HTTP client derives from the userinfo
    (base64 of ``user:password``, the form a server sees and may echo), and the values of
    secret-looking query parameters; each both as written and percent-decoded.
    """
    if not url:
        return ()
    found: list[str] = []
    userinfo = _userinfo(url)
    if userinfo:
        user, colon, password = userinfo.partition(":")
        found += [password, unquote(password)] if colon else [user, unquote(user)]
        found.append(basic_credentials(split_userinfo(url)[1] or ""))
    _, _, rest = _split_authority(url)
    for start, end, _ in _params(rest):
        found += [rest[start:end], unquote(rest[start:end])]
    return tuple(dict.fromkeys(s for s in found if s))


def scrub(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every occurrence of every secret replaced by ``***``.

    Secrets shorter than ``MIN_SECRET_LEN`` are skipped; longer ones are replaced first, so a
    secret that contains another is masked whole.
    """
    for secret in sorted({s for s in secrets if len(s) >= MIN_SECRET_LEN}, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, MASK)
    return text


def mask_secret_keys(value: Any) -> Any:
    """``value`` with the value of every credential-named key of a dict masked, at any depth
    (``extra_body={"api_key": ...}``, headers): what a provider sends, stored without its
    keys. A ``..._env`` key names a variable, not a secret, and is kept."""
    if isinstance(value, dict):
        return {
            k: MASK if _is_secret_key(k) and v not in (None, "") else mask_secret_keys(v)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [mask_secret_keys(v) for v in value]
    return value


# An option (``--provider-opt NAME=...``) whose value would be a credential: it must name an
# environment variable instead (``NAME_env=VAR``).
_SECRET_OPTION = re.compile(r"(^|_)(key|token|secret|password)$", re.IGNORECASE)


def secret_option(name: str) -> bool:
    """Whether an option called ``name`` would carry a secret as its value (``api_key``; not
    ``api_key_env``, which names the variable that holds it)."""
    return bool(_SECRET_OPTION.search(name)) and not name.endswith("_env")


def redact_option(value: Any) -> Any:
    """An option's value as it may be stored: URL credentials hidden (each URL of a list of
    them), and inside a dict-valued option (``extra_body``) every credential-named key's value
    masked at any depth: the provider still sends it, the run directory never holds it."""
    if isinstance(value, str):
        return redact_url(value)
    if isinstance(value, list | tuple):
        return [redact_url(v) if isinstance(v, str) else redact_option(v) for v in value]
    if isinstance(value, dict):
        return {k: redact_option(v) for k, v in mask_secret_keys(value).items()}
    return value


def _is_secret_key(name: Any) -> bool:
    text = str(name)
    return not text.endswith("_env") and bool(_SECRET_KEY.search(text))
