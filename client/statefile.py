"""The client's state directory: seat tokens, summoning secrets, receipts and the error log.

Where: ``$CONJURE_STATE_DIR`` if set, else ``platformdirs.user_state_dir("conjure")``
(``~/.local/state/conjure`` on Linux). The directory is created with mode 0700; every file in it
is created with mode 0600 and replaced atomically (write a temporary file in the same directory,
fsync, ``os.replace``), so a crash leaves either the old or the new content, never half of it.
Read-modify-write cycles of ``secrets.json`` hold an exclusive ``flock`` on ``secrets.lock``, so
two clients sharing a state directory do not lose each other's entries.

Files (all UTF-8 JSON, one object, ``"version": 1``):

``secrets.json``
    Everything needed to come back after a crash::

        {
          "version": 1,
          "seats": {
            "<server url>|<ROOM>": {
              "server": "ws://host:8765", "room": "ABCD", "seat": 2,
              "player_id": "...", "token": "...", "name": "Ann", "saved_at": 1767225600.0
            }
          },
          "summons": {
            "<game_id>|<round>|<seat>": {
              "game_id": "...", "round": 3, "seat": 2,
              "attempts": [
                {"word": "spaceship", "nonce": "<64 hex>", "commitment": "<64 hex>",
                 "saved_at": 1767225600.0}
              ]
            }
          }
        }

    ``seats`` holds the secret token of each seat this user holds, per (server URL, room code);
    ``conjure play URL --room CODE`` resumes that seat instead of joining anew. ``summons`` holds
    every summoning word committed for a (game, round, seat), newest last, each saved *before*
    its commitment was sent: the word is revealed with the newest attempt, and an older one is
    tried if the server says it does not match (a replacement commitment lost in transit).
    Entries older than 30 days are dropped when the file is next written.

``receipts/<game_id>.json``
    The latest receipt the server sent for that game (for ``conjure replay``)::

        {"version": 1, "game_id": "...", "seq": 41, "hash": "<64 hex>",
         "server": "ws://host:8765", "room": "ABCD", "saved_at": 1767225600.0}

    ``seq`` is the log position of the newest record this client saw and ``hash`` that record's
    chain hash (docs/LOG.md, "Receipts"): the log must hold a record with that seq and hash. The
    newest receipt the server signed is kept beside it, once there is one (its signature checked
    before it is kept)::

        "signed": {"seq": 38, "hash": "<64 hex>", "key": "ed25519:<64 hex>", "sig": "<128 hex>"}

    The file only ever moves forward (a receipt with a lower seq never replaces a higher one). A
    game id that is not made only of ``[A-Za-z0-9_.-]`` is stored under ``sha256(game_id)``
    as the file name (the ``game_id`` field inside still holds the real id).

``seen.json``
    What this user has already been shown once (``{"version": 1, "howto": 1767225600.0}``):
    the short "how to play" appears in the lobby until a first game starts.

``profile.json``
    The name this user gave ``make play`` when it asked (``{"version": 1, "name": "Ann"}``), so
    it asks only once.

``client.log``
    Unexpected exceptions (with tracebacks), so the screen never shows one.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from conjure.protocol.durablefile import write_whole
from conjure.protocol.statedir import (
    RECEIPTS_DIR,
    SECRET_SECTIONS,
    SECRETS_FILE,
    default_state_dir,
    receipt_file_name,
)

VERSION = 1
#: What ``make play`` (client.local) tells the client it starts, as environment variables: the
#: server is this machine's own (quitting stops it), and the join URL.
ENV_LOCAL_SERVER = "CONJURE_LOCAL_SERVER"
ENV_SHARE_URL = "CONJURE_SHARE_URL"
MAX_AGE = 30 * 24 * 3600
__all__ = ["StateDir", "default_state_dir", "write_private"]


def write_private(path: Path, data: bytes) -> None:
    """Atomically replace ``path`` with ``data``; the file is mode 0600."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    write_whole(path, data, 0o600, overwrite=True)


def _seq(receipt: dict[str, Any]) -> int:
    """A kept receipt's ``seq``, or -1 if it has none that is usable."""
    seq = receipt.get("seq")
    return seq if isinstance(seq, int) else -1


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def home_short(path: Path) -> str:
    """``path`` with the home directory written ``~``, as a person would type it."""
    try:
        return str(Path("~") / path.relative_to(Path.home()))
    except (ValueError, RuntimeError):
        return str(path)


#: Said above a receipt's path when a player leaves a finished game (its own line: copied whole).
RECEIPT_LINE = "  Your receipt, for an audit of that log:"


def seat_key(server: str, room: str) -> str:
    return f"{server.rstrip('/')}|{room.upper()}"


def summon_key(game_id: str, round_: int, seat: int) -> str:
    return f"{game_id}|{round_}|{seat}"


class StateDir:
    """One user's client state (see the module docstring for the formats)."""

    def __init__(self, path: Path | str | None = None) -> None:
        self.path = Path(path) if path is not None else default_state_dir()

    # ---------------------------------------------------------------- plumbing

    def ensure(self) -> None:
        self.path.mkdir(parents=True, exist_ok=True, mode=0o700)
        with contextlib.suppress(OSError):
            os.chmod(self.path, 0o700)

    @property
    def secrets_path(self) -> Path:
        return self.path / SECRETS_FILE

    @property
    def log_path(self) -> Path:
        return self.path / "client.log"

    def receipt_path(self, game_id: str) -> Path:
        return self.path / RECEIPTS_DIR / receipt_file_name(game_id)

    @contextlib.contextmanager
    def _locked(self):
        self.ensure()
        fd = os.open(self.path / "secrets.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def read_secrets(self) -> dict[str, Any]:
        data = _read_json(self.secrets_path) or {}
        sections = {name: data.get(name) for name in SECRET_SECTIONS}
        return {
            "version": VERSION,
            **{name: v if isinstance(v, dict) else {} for name, v in sections.items()},
        }

    def _update_secrets(self, change) -> None:
        with self._locked():
            data = self.read_secrets()
            change(data)
            cutoff = time.time() - MAX_AGE
            for section in SECRET_SECTIONS:
                data[section] = {
                    k: v
                    for k, v in data[section].items()
                    if isinstance(v, dict) and _newest(v) >= cutoff
                }
            write_private(
                self.secrets_path, json.dumps(data, indent=1, sort_keys=True).encode() + b"\n"
            )

    # ---------------------------------------------------------------- seats

    def save_seat(
        self, server: str, room: str, *, seat: int, player_id: str, token: str, name: str
    ) -> None:
        entry = {
            "server": server,
            "room": room.upper(),
            "seat": seat,
            "player_id": player_id,
            "token": token,
            "name": name,
            "saved_at": time.time(),
        }

        def change(data: dict) -> None:
            data["seats"][seat_key(server, room)] = entry

        self._update_secrets(change)

    def load_seat(self, server: str, room: str) -> dict[str, Any] | None:
        entry = self.read_secrets()["seats"].get(seat_key(server, room))
        if isinstance(entry, dict) and isinstance(entry.get("token"), str):
            return entry
        return None

    def load_seat_moved(self, server: str, room: str) -> dict[str, Any] | None:
        """The newest seat saved for ``room`` on the same host as ``server`` at another port.

        Why: a server started again on a port of its own (its old one taken, or ``--port 0``)
        brings its rooms back under their codes, and the players who came back to it by its
        new address were told the game "has started without you" (found by a newcomer). Only
        the same scheme and host are looked at: a token is never offered to another machine.
        """
        here = urlsplit(server)
        found: dict[str, Any] | None = None
        for entry in self.read_secrets()["seats"].values():
            if not isinstance(entry, dict) or not isinstance(entry.get("token"), str):
                continue
            if entry.get("room") != room.upper() or not isinstance(entry.get("server"), str):
                continue
            try:
                there = urlsplit(entry["server"])
                # (the fragment names a computer player's seat: client.bots.player)
                same = (there.scheme, there.hostname, there.fragment) == (
                    here.scheme,
                    here.hostname,
                    here.fragment,
                )
                moved = same and there.port != here.port
            except ValueError:  # (a port out of range, in a file edited by hand)
                continue
            if moved and (found is None or entry.get("saved_at", 0) > found.get("saved_at", 0)):
                found = entry
        return found

    def note_paused_on_quit(self, server: str, room: str) -> None:
        """The seat's client paused its game as it quit ``make play`` (whose server stops with
        it): the next run resumes the game for it, as for a pause the launcher made."""

        def change(data: dict) -> None:
            seat = data["seats"].get(seat_key(server, room))
            if isinstance(seat, dict):
                seat["paused_on_quit"] = True

        self._update_secrets(change)

    def forget_seat(self, server: str, room: str) -> None:
        def change(data: dict) -> None:
            data["seats"].pop(seat_key(server, room), None)

        self._update_secrets(change)

    # ---------------------------------------------------------------- summoning secrets

    def save_summon(
        self, game_id: str, round_: int, seat: int, *, word: str, nonce: str, commitment: str
    ) -> None:
        """Add one committed word; call this BEFORE the commitment is sent."""
        attempt = {"word": word, "nonce": nonce, "commitment": commitment, "saved_at": time.time()}

        def change(data: dict) -> None:
            key = summon_key(game_id, round_, seat)
            entry = data["summons"].get(key)
            if not isinstance(entry, dict) or not isinstance(entry.get("attempts"), list):
                entry = {"game_id": game_id, "round": round_, "seat": seat, "attempts": []}
            entry["attempts"] = [
                a for a in entry["attempts"] if a.get("commitment") != commitment
            ] + [attempt]
            data["summons"][key] = entry

        self._update_secrets(change)

    def save_deal(
        self,
        server: str,
        room: str,
        *,
        commitment: str,
        share: str,
        seat: int | None = None,
        name: str | None = None,
    ) -> None:
        """Keep a deal's commitment as shown, this client's share of it, and its seat and name
        as it was dealt (``conjure replay`` checks them against the log: a server that gave a
        share to another seat could choose among the deals); call this BEFORE the share is
        sent."""

        def change(data: dict) -> None:
            kept: dict[str, Any] = {
                "server": server,
                "room": room,
                "commitment": commitment,
                "share": share,
                "saved_at": time.time(),
            }
            if seat is not None:
                kept["seat"] = seat
            if name is not None:
                kept["name"] = name
            data["deals"][_deal_key(server, room, commitment)] = kept

        self._update_secrets(change)

    def name_deal(self, room: str, commitment: str, game_id: str, server: str = "") -> None:
        """Keep the game id the server named once this deal was dealt: the audit fails a log
        that gives the deal's game another id (its receipts are kept under the id told).
        ``server``: as given to :meth:`save_deal` (it tells computer players' deals apart)."""

        def change(data: dict) -> None:
            kept = data["deals"].get(_deal_key(server, room, commitment))
            if isinstance(kept, dict) and "game_id" not in kept:
                kept["game_id"] = game_id

        self._update_secrets(change)

    def load_deals(self) -> list[dict[str, Any]]:  # (the keys are this file's: _deal_key)
        """Every deal kept (``save_deal``), oldest first."""
        deals = [d for d in self.read_secrets()["deals"].values() if isinstance(d, dict)]
        return sorted(deals, key=_newest)

    def load_summons(self, game_id: str, round_: int, seat: int) -> list[dict[str, Any]]:
        """The committed words of that round, newest first."""
        entry = self.read_secrets()["summons"].get(summon_key(game_id, round_, seat))
        if not isinstance(entry, dict):
            return []
        attempts = [
            a
            for a in entry.get("attempts", [])
            if isinstance(a, dict)
            and isinstance(a.get("word"), str)
            and isinstance(a.get("nonce"), str)
        ]
        return list(reversed(attempts))

    # ---------------------------------------------------------------- receipts

    def save_receipt(
        self,
        game_id: str,
        seq: int,
        hash_: str,
        *,
        server: str,
        room: str,
        signed: dict[str, Any] | None = None,
    ) -> bool:
        """Keep the receipt if it is newer than the one on file, and ``signed`` (the receipt
        with the server's ``key`` and ``sig``, checked by the caller) if it is newer than the
        signed one on file; True if written."""
        path = self.receipt_path(game_id)
        old = _read_json(path) or {}
        old_seq = _seq(old)
        kept = old.get("signed") if isinstance(old.get("signed"), dict) else None
        kept_seq = -1 if kept is None else _seq(kept)
        if signed is not None and signed["seq"] > kept_seq:
            kept = signed
        elif seq <= old_seq:
            return False
        data = {
            "version": VERSION,
            "game_id": game_id,
            "seq": max(seq, old_seq),
            "hash": hash_ if seq >= old_seq else old.get("hash"),
            "server": server,
            "room": room,
            "saved_at": time.time(),
        }
        if kept is not None:
            data["signed"] = kept
        self.ensure()
        write_private(path, json.dumps(data, sort_keys=True).encode() + b"\n")
        return True

    def load_receipt(self, game_id: str) -> dict[str, Any] | None:
        return _read_json(self.receipt_path(game_id))

    # ---------------------------------------------------------------- seen once

    @property
    def seen_path(self) -> Path:
        return self.path / "seen.json"

    def seen(self, topic: str) -> bool:
        """Whether ``topic`` (e.g. "howto") was already shown to this user."""
        data = _read_json(self.seen_path) or {}
        return topic in data

    def mark_seen(self, topic: str) -> None:
        """Remember that ``topic`` was shown; never raises (at worst it shows again)."""
        data = _read_json(self.seen_path) or {"version": VERSION}
        if topic in data:
            return
        data[topic] = time.time()
        with contextlib.suppress(OSError):
            self.ensure()
            write_private(self.seen_path, json.dumps(data, sort_keys=True).encode() + b"\n")

    # ---------------------------------------------------------------- the person's name

    @property
    def profile_path(self) -> Path:
        return self.path / "profile.json"

    def saved_name(self) -> str | None:
        """The name this user gave when asked, if any."""
        data = _read_json(self.profile_path) or {}
        name = data.get("name")
        return name if isinstance(name, str) and name else None

    def save_name(self, name: str) -> None:
        """Remember ``name``; never raises (at worst it is asked again)."""
        with contextlib.suppress(OSError):
            self.ensure()
            data = {"version": VERSION, "name": name}
            write_private(self.profile_path, json.dumps(data, sort_keys=True).encode() + b"\n")

    # ---------------------------------------------------------------- log

    def log(self, text: str) -> None:
        """Append a line (or a traceback) to client.log; never raises."""
        with contextlib.suppress(OSError):
            self.ensure()
            fd = os.open(self.log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            try:
                stamp = time.strftime("%Y-%m-%d %H:%M:%S")
                os.write(fd, f"{stamp} {text.rstrip()}\n".encode())
            finally:
                os.close(fd)


def _deal_key(server: str, room: str, commitment: str) -> str:
    """Where a kept deal goes in ``deals``: by room and commitment, and for a computer player
    its name too (the URL's fragment, ``client.bots.player.bot_seat_server``): the bots that
    share a state directory were dealt the same deal, and each kept over the other's."""
    fragment = urlsplit(server).fragment if "#" in server else ""
    return f"{room}|{commitment}" + (f"|{fragment}" if fragment else "")


def _newest(entry: dict[str, Any]) -> float:
    stamps = [entry.get("saved_at", 0)]
    for a in entry.get("attempts", []) or []:
        if isinstance(a, dict):
            stamps.append(a.get("saved_at", 0))
    return max((s for s in stamps if isinstance(s, (int, float))), default=0)
