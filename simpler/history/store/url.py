"""Telling a server URL from a file path, and naming a server without its password.

Only ``postgresql://`` and ``postgres://`` select a server: a path with a colon in it
(``C:\\history.db``, ``runs:2024.db``) stays a file. libpq's parameters (``sslmode``,
``connect_timeout``, ``application_name``...) ride in the query string untouched.
"""

from __future__ import annotations

import re
from pathlib import PurePath
from urllib.parse import SplitResult, parse_qsl, unquote, urlsplit

from simpler.usage import UsageError

__all__ = [
    "BadStoreUrl",
    "ServerUrl",
    "is_server",
    "parse_server_url",
    "store_label",
    "store_title",
]

_SCHEMES = ("postgresql", "postgres")
# libpq takes the password in the query string too: masked there as in the user part.
_QUERY_PASSWORD = re.compile(r"([?&]password=)[^&#]*")


class BadStoreUrl(UsageError):
    """A server URL that does not parse: the user's to fix, one line, exit 2."""


def is_server(ref: str) -> bool:
    return ref.partition("://")[0].lower() in _SCHEMES and "://" in ref


class ServerUrl:
    """A parsed server URL: what to say about it (``label``) and what to keep quiet."""

    def __init__(self, ref: str, parts: SplitResult, port: int | None) -> None:
        self.ref = ref
        given = [v for k, v in parse_qsl(parts.query) if k == "password"]
        self.password = unquote(parts.password) if parts.password else "".join(given[-1:])
        self.host = unquote(parts.hostname or "") or "localhost"
        self.port = port or 5432
        self.dbname = unquote(parts.path.lstrip("/")) or unquote(parts.username or "") or "?"
        self.label = f"{self.host}:{self.port}/{self.dbname}"

    def scrub(self, text: str) -> str:
        """``text`` without the password, however a driver quoted it back."""
        if not self.password:
            return text
        for secret in {self.password, self.ref.split("@")[0].rpartition(":")[2]}:
            if secret:
                text = text.replace(secret, "***")
        return text


def parse_server_url(ref: str) -> ServerUrl:
    try:
        parts = urlsplit(ref)
        port = parts.port  # a port that is not a number raises here
    except ValueError as error:
        raise BadStoreUrl(f"history URL {store_label(ref)} does not parse: {error}") from None
    if parts.fragment or not (parts.hostname or parts.path.strip("/")):
        raise BadStoreUrl(
            f"history URL {store_label(ref)} does not parse: expected "
            "postgresql://[user[:password]@]host[:port]/database[?param=value]"
        )
    return ServerUrl(ref, parts, port)


def store_label(ref: str) -> str:
    """What to print for a history: a path as it is, a URL with its password masked."""
    if not is_server(ref):
        return ref
    scheme, _, rest = ref.partition("://")
    userinfo, at, hostpart = rest.rpartition("@")
    if at and ":" in userinfo:
        userinfo = userinfo.split(":", 1)[0] + ":***"
    hostpart = _QUERY_PASSWORD.sub(r"\1***", hostpart)
    return f"{scheme}://{userinfo}{at}{hostpart}"


def store_title(ref: str) -> str:
    """How a page titles a history: a file by its name, a server by its masked URL."""
    return store_label(ref) if is_server(ref) else PurePath(ref).name
