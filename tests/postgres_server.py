"""A PostgreSQL server of the tests' own: initdb and pg_ctl in a temporary folder, on a free
local port, stopped when the session ends. No mock and no shared server: what the history
does on a server is checked against a real one.

initdb refuses to run as root (CI runs the tests as root), so there the folder is handed to
``nobody`` and the server runs as that user. Password authentication is on, over TCP, so
that a wrong password is refused as a real server refuses it.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PASSWORD", "USER", "PostgresServer", "find_server_bin", "start_server"]

USER = "simpler"
# Easy to grep for: no output, log line or exception text may ever hold it.
PASSWORD = "pw-SECRET-42"
_UNPRIVILEGED = "nobody"


def find_server_bin() -> Path | None:
    """The folder holding initdb and pg_ctl: on PATH, else Debian's versioned folders."""
    on_path = shutil.which("initdb")
    candidates = [Path(on_path).parent] if on_path else []
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=_version, reverse=True)
    candidates += [Path(folder) for folder in versions]
    for folder in candidates:
        if (folder / "initdb").is_file() and (folder / "pg_ctl").is_file():
            return folder
    return None


def _version(folder: str) -> int:
    number = Path(folder).parent.name
    return int(number) if number.isdigit() else 0


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class PostgresServer:
    bin: Path
    folder: Path
    port: int
    user: str | None  # the user the server runs as, None for the tests' own

    def url(self, database: str = "postgres", *, password: str = PASSWORD) -> str:
        return f"postgresql://{USER}:{password}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        self.halt()
        shutil.rmtree(self.folder, ignore_errors=True)

    def start(self) -> None:
        """pg_ctl start on the data folder and port: the first start, or a restart after
        :meth:`halt` (after an ``immediate`` halt the server recovers from its log first)."""
        options = (
            f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        )
        data, log = str(self.folder / "data"), str(self.folder / "log")
        self._pg("pg_ctl", "start", "-D", data, "-w", "-l", log, "-o", options)

    def halt(self, mode: str = "fast") -> None:
        """pg_ctl stop, the data kept: ``fast`` rolls back open transactions and shuts down
        cleanly, ``immediate`` ends every process at once, as a crash of the server would."""
        self._pg("pg_ctl", "stop", "-D", str(self.folder / "data"), "-m", mode, "-w")

    def _pg(self, tool: str, *args: str) -> None:
        subprocess.run(
            [str(self.bin / tool), *args],
            check=True,
            capture_output=True,
            user=self.user,
            group=self.user and "nogroup",
            cwd=self.folder,
        )


def start_server(bin_folder: Path) -> PostgresServer:
    folder = Path(tempfile.mkdtemp(prefix="simpler-pg-"))
    user = _UNPRIVILEGED if os.geteuid() == 0 else None
    if user is not None:
        shutil.chown(folder, user, "nogroup")
    server = PostgresServer(bin_folder, folder, _free_port(), user)
    pwfile = folder / "pw"
    pwfile.write_text(PASSWORD + "\n")
    if user is not None:
        shutil.chown(pwfile, user, "nogroup")
    data = str(folder / "data")
    try:
        server._pg(
            "initdb", "-D", data, "-U", USER, f"--pwfile={pwfile}", "--auth=scram-sha-256",
            "--encoding=UTF8", "--no-sync",
        )  # fmt: skip
        server.start()
    except subprocess.CalledProcessError as error:
        shutil.rmtree(folder, ignore_errors=True)
        raise RuntimeError(f"cannot start PostgreSQL: {error.stderr.decode()[-2000:]}") from None
    return server
