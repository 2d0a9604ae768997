"""The checks behind ``conjure replay``: verify a game log, then re-derive every round from it.

:func:`audit` reads one log and returns an :class:`Audit`: what was checked, every problem found
(each a sentence naming the line, sequence number, round and player concerned) and, per round,
the state the round closed on, the engine's own score of it and what the log recorded. Rendering
(text and JSON) lives in ``server.audit``; docs/LOG.md ("Auditing a game") describes the checks.

Order of the checks:

1. **Chain** (``server.logformat.read_log``): every record's hash, ``seq``, ``prev`` link and batch
   count. The first bad record is named by line and seq; a torn tail (what a crash in the middle
   of an append leaves) is reported as such. After corruption only the verified prefix is used.
2. **Receipts**: each ``(seq, hash)`` a client kept must lie on the chain. One that does not
   means the log was rewritten after it was sent, and one beyond the end that the log was cut
   short, unless the receipt is not genuine. A receipt the server signed (protocol.receiptsig)
   settles that: its signature is checked first, and one that verifies was written by the
   holder of the key it names, which ``--server-key`` ties to the server.
3. **Replay**: every event is folded through the rules engine at the rules version the log names.
   Along the way: each reveal must open the seat's latest commitment (and come only after the
   summon closed), the published words must be the revealed ones, each ``round_scored`` must equal
   the engine's own score of the state just before it (case and every player's points), and
   ``game_ended`` must hold the totals and winners the rounds add up to. A game may instead end as
   ``game_abandoned`` (docs/RULES.md A7): its totals must add up too, it names no winner, and no
   player may have acted after the time it says the last connection went.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import re
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from conjure.protocol import events as ev
from conjure.protocol.commitment import check_reveal
from conjure.protocol.deck import DeckError, default_deck
from conjure.protocol.events import DECIDED_RULES
from conjure.protocol.names import BadName, enforce_name, name_keys, same_name_key
from conjure.protocol.receiptsig import verify as verify_signature
from conjure.protocol.statedir import RECEIPTS_DIR, SECRETS_FILE, receipt_file_name
from conjure.protocol.structs import struct_tag
from conjure.protocol.text import escape_unshown, is_hex64
from conjure.protocol.wording import counted, signed
from conjure.protocol.words import word_fingerprint
from conjure.server.config import ServerConfig
from conjure.server.keyfiles import NotKeptFile, read_kept
from conjure.server.logformat import (
    LOG_FORMAT,
    RECORD_START,
    LogCorrupt,
    LogRecord,
    converted,
    read_log,
    verify_receipt,
)
from conjure.server.redecide import redecide
from conjure.server.rules import commands as cmd
from conjure.server.rules.evolve import evolve
from conjure.server.rules.legacy import upgrade
from conjure.server.rules.legality import first_illegal
from conjure.server.rules.scoring import RoundResult, RoundSheet, score_round
from conjure.server.rules.sheet import scored_sheet
from conjure.server.rules.state import Game

#: Rules versions this program can score. A log naming another one is refused (exit 2).
KNOWN_RULES_VERSIONS: frozenset[int] = frozenset(ev.AUDITABLE_RULES)


class Unusable(Exception):
    """Input that cannot be audited at all (exit status 2); the message is a whole sentence."""


def one_line(text: str) -> str:
    """A logged string as it goes into one line of the report: every unshown character, the
    newline and the line and paragraph separators included, written ``\\uXXXX``. Why: a log is
    someone else's evidence, and a player named ``"x\\n=> VERIFIED: ..."`` must not print a
    verdict of its own; the report's own newlines are only those between its lines."""
    return escape_unshown(text)


def path_text(path: object) -> str:
    """A file's path as the report shows it: escaped as logged text is, since the path of a log
    is chosen by whoever keeps it (a name with a newline printed a verdict of its own)."""
    return one_line(str(path))


# ---------------------------------------------------------------------------------------------
# Receipts


@dataclass
class Receipt:
    """A ``(seq, hash)`` a client kept, where it came from, and what the log says about it."""

    seq: int
    hash: str
    source: str
    #: "on-chain", "not-on-chain", "beyond-end", or "unchecked" (the log is damaged before it)
    status: str = "unchecked"
    detail: str = ""
    #: The server's key and signature (protocol.receiptsig), for a receipt the server signed.
    key: str | None = None
    sig: str | None = None
    #: The same position kept signed in the same file: this one then counts only if that
    #: one's signature does not verify (a game's last receipt is kept twice, signed and not).
    twin: Receipt | None = None
    #: The file it was read from ("" for a --receipt SEQ:HASH).
    file: str = ""
    #: "" (unsigned), "valid" (by ``key``, which no --server-key named), "server" (by a key
    #: --server-key named), "other-key" (valid, but with --server-key given and not its key: it
    #: counts as unsigned), "invalid" (not ``key``'s signature), "unchecked" (no game known)
    signature: str = ""

    def label(self) -> str:
        kind = "signed receipt" if self.sig is not None else "receipt"
        return f"{kind} seq {self.seq} hash {self.hash[:12]}… ({self.source})"

    def to_json(self) -> dict[str, Any]:
        doc = {
            "seq": self.seq,
            "hash": self.hash,
            "source": self.source,
            "status": self.status,
            "detail": self.detail,
        }
        if self.sig is not None:
            doc.update(key=self.key, sig=self.sig, signature=self.signature)
        return doc


def parse_receipt_arg(text: str) -> Receipt:
    """``SEQ:HASH`` from the command line; raises Unusable with a sentence otherwise."""
    seq_text, sep, hash_text = text.strip().partition(":")
    if (
        not sep
        or not (seq_text.isascii() and seq_text.isdigit())
        or not is_hex64(hash_text.lower())
    ):
        raise Unusable(
            f"--receipt {text!r}: expected SEQ:HASH (a sequence number, a colon and the record's "
            "64 hex digit hash) or a receipt file"
        )
    return Receipt(int(seq_text), hash_text.lower(), "--receipt")


def _receipt_items(doc: Any) -> list[Any]:
    if isinstance(doc, list):
        return doc
    if isinstance(doc, dict) and isinstance(doc.get("receipts"), list):
        return doc["receipts"]
    return [doc]


#: The most bytes a client's state file (receipts, kept secrets) is read to: a client keeps
#: a few kilobytes a game, so this holds thousands of games.
STATE_FILE_MOST = 64 << 20


class ReceiptReads:
    """Receipt files and folders as first read in one run. ``conjure replay`` over many logs
    looks through every file of a state directory for each log: each is read and listed once."""

    def __init__(self) -> None:
        self._docs: dict[Path, tuple[Any, str | None]] = {}
        self._listings: dict[Path, list[Path] | str] = {}

    def doc(self, path: Path) -> tuple[Any, str | None]:
        """A file's JSON, or None and why not."""
        found = self._docs.get(path)
        if found is None:
            try:
                found = json.loads(read_kept(path, STATE_FILE_MOST)[0]), None
            except NotKeptFile as exc:  # a FIFO would hang the audit, /dev/zero fill the memory
                why = "too big for" if exc.too_big else "not a regular file, so not"
                found = None, f"ignored {path_text(path)}: {why} a client's state file"
            except RecursionError:
                found = None, f"ignored {path_text(path)}: JSON nested too deep"
            except OSError as exc:
                found = None, f"ignored {path_text(path)}: cannot read it ({exc.strerror or exc})"
            except ValueError:
                found = None, f"ignored {path_text(path)}: not JSON"
            self._docs[path] = found
        return found

    def listing(self, folder: Path) -> list[Path] | str:
        """A folder's ``.json`` files in order, or why it cannot be listed."""
        found = self._listings.get(folder)
        if found is None:
            try:
                found = sorted(p for p in folder.iterdir() if p.suffix == ".json" and p.is_file())
            except OSError as exc:
                found = f"ignored {path_text(folder)}: cannot list it ({exc.strerror or exc})"
            self._listings[folder] = found
        return found


def receipts_from_file(
    path: Path,
    game_id: str | None,
    *,
    named_for_game: bool = False,
    reads: ReceiptReads | None = None,
) -> tuple[list[Receipt], list[str]]:
    """Receipts in one JSON file (an object, a list of them, or ``{"receipts": [...]}``).

    Read defensively: entries for another game, or without a usable ``seq`` and ``hash``, are
    skipped with a note (a file the organizer gave is never ignored in silence; the caller drops
    the notes of a state directory's other files, which hold other games as a matter of course).
    An entry without ``game_id`` counts only if the file is named for the game.
    """
    notes: list[str] = []
    doc, unread = (reads or ReceiptReads()).doc(path)
    if unread is not None:
        return [], [unread]
    found: list[Receipt] = []
    for i, item in enumerate(_receipt_items(doc)):
        where = f"{path_text(path)}" if not isinstance(doc, list) else f"{path_text(path)} [{i}]"
        if not isinstance(item, dict):
            notes.append(f"ignored {where}: not a receipt object")
            continue
        gid = item.get("game_id")
        if game_id is not None and gid is not None and gid != game_id:
            notes.append(
                f"ignored {where}: the receipt is for game {gid!r}, not this log's game "
                f"{game_id!r}, so it proves nothing here"
            )
            continue
        if gid is None and not named_for_game:
            notes.append(f"ignored {where}: no game_id, so it is for no one of several logs")
            continue
        got = [_receipt_entry(item, where)]
        if "signed" in item:  # a client's file: the newest receipt, and the newest signed one
            signed_one = _receipt_entry(item["signed"], f"{where}, signed")
            newest = got[0]
            if (
                isinstance(newest, Receipt)
                and isinstance(signed_one, Receipt)
                and (newest.seq, newest.hash) == (signed_one.seq, signed_one.hash)
            ):  # one position kept twice (a game's last receipt is signed): see _check_receipts
                newest.twin = signed_one
            got.append(signed_one)
        for r in got:
            if isinstance(r, str):
                notes.append(r)
            else:
                r.file = str(path)
                found.append(r)
    return found, notes


def _receipt_entry(item: object, where: str) -> Receipt | str:
    """One receipt object of a file, or the note why it is ignored."""
    if not isinstance(item, dict):
        return f"ignored {where}: not a receipt object"
    seq, hash_ = item.get("seq"), item.get("hash")
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 0:
        return f"ignored {where}: no usable seq"
    if not isinstance(hash_, str) or not is_hex64(hash_.lower()):
        return f"ignored {where}: no usable hash"
    key, sig = item.get("key"), item.get("sig")
    if key is None and sig is None:
        return Receipt(seq, hash_.lower(), where)
    if not isinstance(key, str) or not isinstance(sig, str):
        return f"ignored {where}: a signature needs both a key and a sig, as text"
    return Receipt(seq, hash_.lower(), where, key=key, sig=sig)


def receipts_from_state_dir(
    state_dir: Path, game_id: str, reads: ReceiptReads | None = None
) -> tuple[list[Receipt], list[str]]:
    """Every receipt for ``game_id`` under ``<state_dir>/receipts/`` (its own file, and any other
    JSON file there that names the game)."""
    folder = state_dir / RECEIPTS_DIR
    if not folder.is_dir():
        return [], []
    own = folder / receipt_file_name(game_id)
    found: list[Receipt] = []
    notes: list[str] = []
    reads = reads or ReceiptReads()
    files = reads.listing(folder)
    if isinstance(files, str):
        return [], [files]
    for path in files:
        got, why = receipts_from_file(path, game_id, named_for_game=path == own, reads=reads)
        found.extend(got)
        if path == own:
            notes.extend(why)  # other files may hold other games: no noise about them
    return found, notes


def _odd_deck(start: ev.GameStarted) -> str | None:
    """Why the deal's deck may not be the one the settings name, or None.

    A note, not a failure: the default deck is this program's, and a server of another version
    may have had another. But a server could shuffle a deck of its choosing (five cards, say)
    and the deal would check: the deck is the server's word unless it is the one named.
    """
    if start.deal is None or start.deck not in ("default", "default+custom"):
        return None
    try:
        ours = default_deck()
    except (OSError, DeckError):
        return None
    deck = tuple(start.deal.deck)
    if deck == ours or (start.deck == "default+custom" and deck[: len(ours)] == ours):
        return None
    return (
        f"the deal's deck ({len(deck)} cards) is not this program's default deck "
        f"({len(ours)} cards), though the settings name it: a server of another version, or a "
        "deck of the server's choosing; the cards are that deck's seeded deal"
    )


#: How long before a game's first record a deal its players' clients kept still counts as this
#: game's (client and server clocks may differ a little; the deal closes within seconds).
DEAL_WINDOW = 600.0
#: How long after a game's first record a deal its players' clients kept still counts (clocks).
DEAL_LAG = 60.0
#: How long after a record a client may save the receipt for it: it saves it as the update
#: reaches it, milliseconds later on a good link (``_nothing_of_this_game``).
RECEIPT_LAG = 60.0


def check_kept_deals(a: Audit, state_dir: Path, reads: ReceiptReads) -> None:
    """What a player's client kept of this game's deal (``client/statefile.py``, ``deals``):
    the commitment it was shown, the share it sent, its seat and name then, and the game id the
    server named after the deal, against the logged deal.

    Why: the log alone is the server's word for all of them; a server that showed one
    commitment and logged another (it dealt again), left a share out, or gave a share to another
    seat (the order of the shares is the server's, so with n seats it could choose among n!
    deals) could choose the cards; one that logged the game under another id, room or time
    made its players' receipts and deals seem another game's (found by review).
    """
    start = a.start
    if start is None:
        return
    doc, unread = reads.doc(state_dir / SECRETS_FILE)
    if unread is not None:
        if (state_dir / SECRETS_FILE).exists():
            a.notes.append(unread)
        return
    deals = doc.get("deals") if isinstance(doc, dict) else None
    if not isinstance(deals, dict):
        return
    d = start.deal
    began = a.records[0].ts
    ours: list[dict[str, Any]] = []
    for kept in deals.values():
        if not isinstance(kept, dict):
            continue
        if d is not None and kept.get("commitment") == d.commitment:
            ours.append(kept)  # this deal, whatever the room or time the log gives it
            continue
        if kept.get("room") != start.room:
            continue
        at = kept.get("saved_at")
        if not isinstance(at, (int, float)) or not began - DEAL_WINDOW <= at <= began + DEAL_LAG:
            continue
        ours.append(kept)
    if not ours:
        return
    where = f"the deal kept in {path_text(state_dir)}"
    if d is None:
        # A log with no deal (rules version 1, or version 2 with the deal taken out) where a
        # player's client was shown one for this room as the game began: this server deals
        # every game it starts, so the log is not as it wrote it (found by an auditor's review:
        # a game rewritten under a new id, its deal dropped or its version said to be 1, passed
        # with every player's state directory given).
        shown = one_line(str(ours[0].get("commitment")))[:16]
        a.fail(
            "deal",
            f"{where}: this player's client was shown a deal (commitment {shown}…) for room "
            f"{one_line(start.room)} as this game began, and the log records none: the log is "
            "not as the server that dealt wrote it, or the file is not this game's",
        )
        return
    # The client was shown the logged deal too: it saw the server deal again, which an honest
    # server does when it cannot write the game's log (its disk was full: "try again later").
    also_logged = any(k.get("commitment") == d.commitment for k in ours)
    for kept in ours:
        if kept.get("commitment") != d.commitment:
            other = one_line(str(kept.get("commitment")))[:16]
            if also_logged:
                a.notes.append(
                    f"{where}: this player's client was also shown an earlier deal for room "
                    f"{one_line(start.room)} (commitment {other}…) that the server did not use: "
                    "it dealt again, in sight of this client. A server that could not write "
                    "the game's log deals again (its disk was full, say); one that disliked "
                    "the cards could too: the players saw two deals"
                )
                continue
            a.fail(
                "deal",
                f"{where}: this player's client was shown the commitment {other}… for room "
                f"{one_line(start.room)} as this game was dealt, not the logged one: the server "
                "opened a deal it did not use (it dealt again), or the file is not this game's",
            )
            continue
        problems = _kept_deal_problems(a, kept)
        for problem in problems:
            a.fail("deal", f"{where}: {problem}")
        if not problems:
            a.deal_confirmed.update(s for s, v in d.contributions.items() if v == kept.get("share"))
            seat = kept.get("seat")
            whose = f" for its seat ({a.name(seat)})" if isinstance(seat, int) else ""
            a.deal_kept.append(
                f"{where}: the commitment this player's client was shown is the logged one, "
                f"and the share it sent is in the deal{whose}"
            )


def _unconfirmed_shares(a: Audit) -> None:
    """Note the seats whose logged share no player's kept deal confirms. Why: the log's shares
    are the server's word; a server that logged shares of its own choosing, after it had
    committed to its seed, chose the cards, and the players' receipts, given for that very log,
    cannot tell (found by review: the deal's line said every seat "added a share")."""
    start = a.start
    if start is None or start.deal is None:
        return
    seats = sorted(set(start.deal.contributions) - a.deal_confirmed)
    if not seats:
        return
    if len(seats) == len(start.deal.contributions):
        which = "every seat's share in the log is"
    elif len(seats) == 1:
        which = f"{a.name(seats[0])}'s share in the log is"
    else:
        names = [a.name(s) for s in seats]
        which = f"the shares of {', '.join(names[:-1])} and {names[-1]} in the log are"
    a.notes.append(
        f"the deal: {which} the server's word, which no kept deal given confirms (a player's "
        "client keeps its own in its state directory: --state-dir). A server that logged "
        "shares of its own choosing could have chosen the cards"
    )


def _same_seated(kept: str, logged: str) -> bool:
    """Whether a name a client kept is the one the server seated: as the server tidies names
    (width, spaces) before it seats them, then the rules' key (case). An honest "Ａnn" or
    "山田　太郎" failed the audit (found by review)."""
    try:
        kept = enforce_name(kept)
    except BadName:
        return False
    return same_name_key(kept) == same_name_key(logged)


def _kept_deal_problems(a: Audit, kept: dict[str, Any]) -> list[str]:
    """What a kept deal of the log's own commitment says against the log (none: it agrees)."""
    start = a.start
    assert start is not None and start.deal is not None
    d = start.deal
    out: list[str] = []
    room, game_id = kept.get("room"), kept.get("game_id")
    if room != start.room:
        out.append(
            f"this player's client was shown this deal in room {one_line(str(room))}, not in "
            f"room {one_line(start.room)} as the log says: the log's room was changed"
        )
    if isinstance(game_id, str) and game_id != start.game_id:
        out.append(
            f"the server named this deal's game {one_line(game_id)!r} to this player's "
            f"client, not {one_line(start.game_id)!r} as the log does: the log's game id was "
            "changed (its players' receipts are kept under the id they were told)"
        )
    share, seat, name = kept.get("share"), kept.get("seat"), kept.get("name")
    seats = {p.seat: p for p in start.players}
    shown = f"({one_line(str(share))[:16]}…)"
    if isinstance(seat, int) and not isinstance(seat, bool):
        logged_at = [k for k, v in d.contributions.items() if v == share]
        if logged_at and seat not in logged_at:
            out.append(
                f"the share this player's client sent as seat {seat + 1} {shown} is logged as "
                f"seat {logged_at[0] + 1}'s: the server moved shares between seats, which lets "
                "it choose the cards"
            )
        elif not logged_at and seat in d.contributions:
            out.append(
                f"the share this player's client sent as seat {seat + 1} {shown} is not in the "
                "logged deal, which holds another share for that seat: the server replaced it"
            )
        elif not logged_at:  # (it came after the deal closed, or went with the connection)
            out.append(
                f"the share this player's client sent as seat {seat + 1} {shown} is not in the "
                "logged deal: the server left it out, or it came after the deal closed"
            )
        player = seats.get(seat)
        if (
            isinstance(name, str)
            and player is not None
            and seat in logged_at
            and not _same_seated(name, player.name)
        ):
            out.append(
                f"this player's client was seat {seat + 1} as {one_line(name)!r} when it was "
                f"dealt, but the log seats {one_line(player.name)!r} there"
            )
    elif share not in d.contributions.values():
        out.append(
            f"the share this player's client sent {shown} is not in the logged deal: the "
            "server left it out, or it came after the deal closed"
        )
    return out


# ---------------------------------------------------------------------------------------------
# What an audit finds


class Step(msgspec.Struct, gc=False):
    """One logged event and where it is: line = seq + 1. A struct the cyclic collector does not
    track (an audit holds one per record, and a step refers to nothing that refers back to it)."""

    record: LogRecord
    event: ev.Event | None
    error: str = ""

    @property
    def line(self) -> int:
        return self.record.seq + 1

    @property
    def where(self) -> str:
        return f"line {self.line} (seq {self.record.seq})"


@dataclass
class CommitLog:
    """When one player committed (and replaced) and revealed, and whether the reveal opened it."""

    committed: list[float] = field(default_factory=list)
    revealed: float | None = None
    opens: bool | None = None


@dataclass
class RoundAudit:
    number: int
    conjurer: int
    started: float
    steps: list[Step] = field(default_factory=list)
    commits: dict[int, CommitLog] = field(default_factory=dict)
    #: the state the round closed on (just before round_scored/round_voided), or the last state
    before: Game | None = None
    sheet: RoundSheet[int] | None = None
    result: RoundResult[int] | None = None  #: the engine's own score of ``before``
    #: the official reading, for a game played under house rules (None otherwise)
    official: RoundResult[int] | None = None
    recorded: ev.RoundScored | ev.RoundVoided | None = None
    void_reason: str | None = None
    running: dict[int, int] = field(default_factory=dict)  #: recomputed totals after the round
    problems: list[str] = field(default_factory=list)

    @property
    def case(self) -> str | None:
        """The case the engine finds (``void`` for a void round; None if the log ends first)."""
        if self.void_reason is not None:
            return "void"
        return self.result.case if self.result is not None else None

    @property
    def finished(self) -> bool:
        return self.recorded is not None


@dataclass
class Audit:
    path: Path
    size: int = 0
    records: list[LogRecord] = field(default_factory=list)  #: verified records
    corrupt: LogCorrupt | None = None
    torn: dict[str, Any] | None = None
    start: ev.GameStarted | None = None
    steps: list[Step] = field(default_factory=list)  #: the replayed events
    state: Game | None = None  #: after the last replayed event
    rounds: list[RoundAudit] = field(default_factory=list)
    receipts: list[Receipt] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    #: the same problems by check: chain, receipts, deal, names, rules, replay, reveals, scores,
    #: totals, end
    kinds: dict[str, list[str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    reveals_checked: int = 0
    replay_stopped: str | None = None
    totals: dict[int, int] = field(default_factory=dict)  #: recomputed by the engine
    ended: ev.GameEnded | None = None
    abandoned: ev.GameAbandoned | None = None
    #: batches whose recorded command the rules decided again into exactly the logged events
    redecided: int = 0
    #: what players' clients kept of the deal and agrees with the log (``check_kept_deals``)
    deal_kept: list[str] = field(default_factory=list)
    #: the seats whose logged share a player's kept deal confirms (``check_kept_deals``)
    deal_confirmed: set[int] = field(default_factory=set)

    @property
    def verified(self) -> bool:
        return not self.problems

    def fail(self, kind: str, text: str) -> None:
        self.problems.append(text)
        self.kinds.setdefault(kind, []).append(text)

    @property
    def finished(self) -> bool:
        return self.state is not None and self.state.over

    @property
    def first_bad(self) -> dict[str, Any] | None:
        c = self.corrupt
        if c is None:
            return None
        return {"line": c.line, "seq": c.expected_seq, "offset": c.offset, "reason": c.reason}

    def name(self, seat: int) -> str:
        """The seat's name as a report sentence shows it (:func:`one_line`)."""
        return one_line(self.logged_name(seat))

    def logged_name(self, seat: int) -> str:
        """The seat's name exactly as logged (JSON keys and values carry the exact text)."""
        if self.start is not None and 0 <= seat < len(self.start.players):
            return self.start.players[seat].name
        return f"seat {seat}"

    def winners(self) -> tuple[int, ...]:
        """T6 on the recomputed totals: the highest total wins, players who left cannot win.

        An abandoned game has no winner (A7).
        """
        if not self.finished or self.state is None or self.state.abandoned:
            return ()
        standing = {s: t for s, t in self.totals.items() if s not in self.state.kicked}
        if not standing:
            return ()
        best = max(standing.values())
        return tuple(s for s, t in sorted(standing.items()) if t == best)

    def round(self, number: int) -> RoundAudit | None:
        return next((r for r in self.rounds if r.number == number), None)


# ---------------------------------------------------------------------------------------------
# 1. The chain


#: How much of a file is read to tell whether it is a game log at all.
_HEAD_BYTES = 64 * 1024


def _verified_prefix(path: Path, end: int) -> list[LogRecord]:
    """The records before byte ``end``, which ``read_log`` verified; read line by line."""
    decoder = msgspec.json.Decoder(LogRecord)
    records: list[LogRecord] = []
    with path.open("rb") as f:
        while f.tell() < end:
            line = f.readline()
            if not line.endswith(b"\n"):
                break
            records.append(decoder.decode(line[:-1]))
    return records


def _read(path: Path, audit: Audit) -> None:
    """Fill ``records``, ``corrupt`` and ``torn``; raise Unusable for what is not a log at all."""
    try:
        st = path.stat()
    except FileNotFoundError:
        raise Unusable(f"{path_text(path)}: no such file") from None
    except OSError as exc:
        raise Unusable(f"{path_text(path)}: cannot read it: {exc.strerror or exc}") from None
    if stat.S_ISDIR(st.st_mode):
        raise Unusable(
            f"{path_text(path)}: is a directory, not a game log "
            f"(give its logs: conjure replay {path_text(path)}/*.jsonl)"
        )
    if not stat.S_ISREG(st.st_mode):
        raise Unusable(
            f"{path_text(path)}: is not a regular file (a pipe or a device), so not a game log"
        )
    try:  # only the start is needed to tell a log from something else: never read a file whole
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        try:
            buf = os.pread(fd, _HEAD_BYTES, 0)
        finally:
            os.close(fd)
    except OSError as exc:
        raise Unusable(f"{path_text(path)}: cannot read it: {exc.strerror or exc}") from None
    audit.size = st.st_size
    if not buf:
        raise Unusable(
            f"{path_text(path)}: is empty: it holds no records, so there is no game to audit"
        )
    if (conversion := converted(buf)) is not None:
        # Its records may well be whole, but its bytes are not the ones hashed: said as a crash
        # in the first write (CRLF) or an edit (a byte-order mark) before (found by review).
        raise Unusable(
            f"{path_text(path)}: {conversion}: a log is written without either, and its hashes "
            "are of its lines as written; undone, the log can be audited again"
        )
    try:
        result = read_log(path)
    except LogCorrupt as exc:
        audit.corrupt = exc
        # Every line before the first bad one was verified by read_log.
        audit.records = _verified_prefix(path, exc.offset)
        audit.fail(
            "chain",
            f"hash chain broken at line {exc.line} (seq {exc.expected_seq} expected there): "
            f"{exc.reason}. The log was changed after it was written (an edit, a deleted, "
            f"inserted or reordered record, or damage); records from line {exc.line} on cannot "
            "be trusted and were not replayed.",
        )
        return
    except OSError as exc:
        raise Unusable(f"{path_text(path)}: cannot read it: {exc.strerror or exc}") from None
    audit.records = list(result.records)
    if result.torn:
        looks_like_a_log = buf.startswith(RECORD_START) or RECORD_START.startswith(buf)
        if not result.records and not looks_like_a_log:
            first = buf.split(b"\n", 1)[0]
            why = "not JSON" if not first.lstrip().startswith((b"{", b"[")) else "not a log record"
            raise Unusable(
                f"{path_text(path)}: not a game log: line 1 is {why} (a log line is the canonical JSON of "
                'a record and starts with {"batch":)'
            )
        seq = len(result.records)
        audit.torn = {
            "line": seq + 1,
            "seq": seq,
            "offset": result.valid_end,
            "bytes": result.size - result.valid_end,
            "reason": result.torn_reason,
        }
        audit.fail(
            "chain",
            f"the log ends in a torn tail from line {seq + 1} (seq {seq}) on, "
            f"{result.size - result.valid_end} bytes: {result.torn_reason}. This is what a crash "
            "in the middle of an append leaves, or what a read meets while the server is still "
            "appending to the log of a game under way (audit it again), and it cannot be told "
            "apart from damage to the last line, or from a log cut short: if a crash left it, "
            "the game's last action was cut and never acknowledged to anyone, and a receipt for "
            "a later record proves that "
            f"something else did. Records up to seq {seq - 1} verify."
            if seq
            else f"the log ends in a torn tail from line 1 (seq 0) on: {result.torn_reason}. "
            "If a crash left it, the game's last action was cut, and it was its very first "
            "append: no complete record remains.",
        )


# ---------------------------------------------------------------------------------------------
# 2. Receipts


def _check_signature(audit: Audit, r: Receipt, server_keys: Sequence[str]) -> None:
    """Set ``r.signature``: whether the key it names signed it for this game, and whether that
    key is one the organizer named as the server's."""
    if audit.start is None:
        r.signature = "unchecked"
        return
    assert r.key is not None and r.sig is not None
    if not verify_signature(r.key, r.sig, audit.start.game_id, r.seq, r.hash):
        r.signature = "invalid"
        audit.fail(
            "receipts",
            f"{r.label()}: its signature does not verify: the key it names "
            f"({short_key(r.key)}) did not sign this game's record seq {r.seq} with this hash. "
            "The receipt was altered or made up, and proves nothing either way.",
        )
    elif not server_keys:
        r.signature = "valid"
    elif r.key in server_keys:
        r.signature = "server"
    else:
        r.signature = "other-key"
        audit.notes.append(
            f"{r.label()} is signed with {short_key(r.key)}, not with the server's key "
            "(--server-key): its signature proves nothing, so it is checked as an unsigned "
            "receipt"
        )


def short_key(key: str) -> str:
    """A key as a report names it: its kind and first 16 hex digits."""
    return f"{key[:24]}…" if len(key) > 24 else key


def _signed_reading(r: Receipt, happened: str) -> str:
    """What a signed receipt the log disagrees with shows (``happened``), said as surely as
    the key allows: for certain if the organizer named its key as the server's, else on the
    condition that it is (anyone can make a key and sign with it)."""
    assert r.key is not None
    if r.signature == "server":
        return f" The server signed this receipt (with the key given as --server-key): {happened}."
    return (
        f" It is signed with {short_key(r.key)}: if that is the server's key (the one `conjure "
        f"serve` printed; --server-key checks it), {happened}; if not, it proves nothing."
    )


def _check_receipts(audit: Audit, server_keys: Sequence[str] = ()) -> None:
    records = audit.records
    last = len(records) - 1
    for r in audit.receipts:
        if r.sig is not None:
            _check_signature(audit, r, server_keys)
    # One position a file kept twice counts once, as its signed copy, unless that copy's
    # signature fails: then the plain one still speaks (a bad signature hid it: found by review).
    audit.receipts = [
        r
        for r in audit.receipts
        if r.twin is None or r.twin.signature not in ("valid", "server", "other-key")
    ]
    for r in audit.receipts:
        if r.signature == "invalid":
            r.status = "unchecked"
            r.detail = "its signature does not verify"
            continue
        by_server = r.signature in ("valid", "server")
        if r.seq < len(records):
            if verify_receipt(records, r.seq, r.hash):
                r.status = "on-chain"
                r.detail = f"the log's record seq {r.seq} has this hash"
                continue
            r.status = "not-on-chain"
            r.detail = (
                f"the log's record seq {r.seq} has hash {records[r.seq].hash[:12]}…, not "
                f"{r.hash[:12]}…"
            )
            why = (
                _signed_reading(
                    r,
                    "the log was rewritten after the server sent it (the history up to that "
                    "record is not what the server told its players)",
                )
                if by_server
                else " The receipt disagrees with the log: either the log was rewritten after "
                "this receipt was sent (the history up to that record is not what the client "
                "saw), or the receipt is not genuine (this one is not signed: anyone can write "
                "one)."
            )
            audit.fail("receipts", f"{r.label()} does not lie on the chain: {r.detail}.{why}")
        elif audit.corrupt is not None:
            r.status = "unchecked"
            r.detail = (
                f"the log is damaged before seq {r.seq} (at line {audit.corrupt.line}), so this "
                "receipt cannot be checked"
            )
        else:
            r.status = "beyond-end"
            end = f"ends at seq {last}" if last >= 0 else "holds no complete record"
            r.detail = f"the log's verified part {end}"
            extra = ""
            if audit.torn is not None:  # as fact only on the server's word (found by review)
                sure = "" if by_server else "if the receipt is genuine, "
                extra = (
                    " The log ends in a torn tail, which a crash leaves, but a receipt is only "
                    f"sent once its record is on disk: {sure}records up to seq {r.seq} were "
                    "written whole, so the end was cut or damaged afterwards, not by a crash."
                )
            why = (
                _signed_reading(
                    r,
                    f"the log was truncated after the server sent it (it held seq {r.seq})",
                )
                if by_server
                else " Either the log was truncated after this receipt was sent (it held seq "
                f"{r.seq}), or the receipt is not genuine (this one is not signed)."
            )
            audit.fail(
                "receipts", f"{r.label()} lies beyond the end of the log: {r.detail}.{why}{extra}"
            )
    # Receipts kept by several players that agree on a key nobody named: the organizer was
    # given the key by the server's operator, whose log is what is in question.
    others: dict[str, set[str]] = {}
    for r in audit.receipts:
        if r.signature == "other-key" and r.key:
            others.setdefault(r.key, set()).add(r.file or r.source)
    for key, files in sorted(others.items()):
        if len(files) > 1:
            audit.notes.append(
                f"{len(files)} receipt files carry signatures that verify with {short_key(key)}, "
                "which --server-key did not name: receipts kept by different players agreeing "
                "on one key suggest the server signed with it; ask why it is not the key given"
            )
    keys = sorted({r.key for r in audit.receipts if r.signature == "valid" and r.key})
    if len(keys) > 1:
        audit.notes.append(
            f"the signed receipts name {len(keys)} keys ({', '.join(map(short_key, keys))}): a "
            "server's key changes only if its key file was replaced, so at most one can be "
            "this game's server's; compare them with the key `conjure serve` printed"
        )


# ---------------------------------------------------------------------------------------------
# 3. Replay


def _names(a: Audit, points: dict[int, int]) -> str:
    return ", ".join(f"{a.name(s)} {signed(p)}" for s, p in points.items())


class _Replay:
    def __init__(self, audit: Audit) -> None:
        self.a = audit
        self.state: Game | None = None
        self.current: RoundAudit | None = None
        self.last_act: Step | None = None  #: the latest action a seat took (someone was there)
        #: each seat's presence records: (its index in ``audit.steps``, the step, its round)
        self.presence: dict[int, list[tuple[int, Step, int]]] = {}
        #: records the server's budgets count, by (seat, round, "actions" or "presence")
        self.counts: dict[tuple[int, int, str], int] = {}
        self.last_ts: float | None = None  #: the time of the batch before
        self.stopped = False

    def problem(self, kind: str, text: str, rnd: RoundAudit | None = None) -> None:
        self.a.fail(kind, text)
        if rnd is not None:
            rnd.problems.append(text)

    def run(self, records: Sequence[LogRecord]) -> None:
        """Check and fold ``records`` (after those :meth:`step` was given), then close."""
        for record in records:
            if not self.step(record):
                return
        if not self.stopped:
            self.close_open_round()

    def step(
        self, record: LogRecord, event: ev.Event | None = None, after: Game | None = None
    ) -> bool:
        """Check one record and fold it; False once the replay stopped. A record whose batch the
        rules decided again into exactly its events comes with its ``event`` and the state
        ``after`` it from that, so it is not folded twice."""
        if self.stopped:
            return False
        a = self.a
        if event is None:
            try:
                event = ev.event_from_record(record.type, record.data)
            except msgspec.ValidationError as exc:
                step = Step(record, None, str(exc))
                a.steps.append(step)
                self.stop(step, f"a {record.type!r} record the rules engine cannot read ({exc})")
                return False
        step = Step(record, event)
        a.steps.append(step)
        if self.current is not None and type(event) is not ev.RoundStarted:
            self.current.steps.append(step)
        try:
            self.check(step)
            if after is None:
                if self.a.start is not None and self.a.start.rules_version == 1:
                    # Version 1 events leave consequences to work out: as v1 worked them out.
                    event = step.event = upgrade(self.state, event)
                after = evolve(self.state, event)
            self.state = after
        except Exception as exc:  # a record the engine cannot apply: say where, stop there
            self.stop(step, f"the rules engine cannot apply this {record.type} event ({exc!r})")
            return False
        return True

    def stop(self, step: Step, why: str) -> None:
        self.stopped = True
        self.a.replay_stopped = f"{step.where}: {why}"
        self.problem("replay", f"{step.where}: {why}; the replay stops there.", self.current)
        self.close_open_round()

    def close_open_round(self) -> None:
        if self.current is not None and self.current.recorded is None:
            self.current.before = self.state
        self.a.state = self.state

    # -- per event

    def check(self, step: Step) -> None:
        e = step.event
        g = self.state
        r = self.current
        rec = step.record
        if self.last_ts is not None and rec.ts < self.last_ts:
            # A note, not a failure: the server's clock (ServerConfig.clock) is time.time, the
            # wall clock, which NTP or an operator can set back, during a game or across a
            # restart; a batch dated before the one before it is what that leaves.
            self.a.notes.append(
                f"{step.where} is dated {self.last_ts - rec.ts:.3f} s before the batch before it: "
                "the server's clock is the wall clock, which can be set back, so this is no proof "
                "of tampering, but the times around it are only as good as that clock"
            )
        self.last_ts = rec.ts
        kind = type(e)
        if kind is ev.GameStarted:
            if g is not None:
                raise ValueError("a second game_started")
            return
        assert g is not None
        if rec.cmd is not None and rec.cmd.get("kind") in _PLAYER_MOVES:
            self.in_time(step, rec.cmd, g, r)
        number = getattr(e, "round", None)
        if kind is ev.RoundStarted:
            assert isinstance(e, ev.RoundStarted)
            expected = (g.round.number if g.round is not None else 0) + 1
            if e.round != expected:
                self.problem(
                    "replay", f"{step.where}: round {e.round} starts where round {expected} should"
                )
            self.current = RoundAudit(e.round, e.conjurer, rec.ts, steps=[step])
            self.a.rounds.append(self.current)
            return
        if number is not None and (g.round is None or g.round.number != number):
            now = g.round.number if g.round is not None else "none"
            self.problem(
                "replay",
                f"{step.where}: a {rec.type} event for round {number} while round {now} is on",
                r,
            )
        if kind not in _CHECKED:
            pass  # the common case (votes, phases, done ...): nothing more to check here
        elif isinstance(e, ev.Committed):
            self.committed(step, e, g, r)
        elif isinstance(e, ev.Revealed):
            self.revealed(step, e, g, r)
        elif isinstance(e, ev.SummonsPublished):
            self.published(step, e, g, r)
        elif isinstance(e, ev.RoundScored):
            self.scored(step, e, g, r)
        elif isinstance(e, ev.RoundVoided):
            assert r is not None
            r.before, r.recorded, r.void_reason = g, e, e.reason
            r.running = dict(self.a.totals)
        elif isinstance(e, ev.GameEnded):
            self.ended(step, e, g)
        elif isinstance(e, ev.GameAbandoned):
            self.abandoned(step, e, g)
        if kind in _SEAT_ACTS and getattr(e, "by", 0) is not None:
            self.last_act = step
        now = g.round.number if g.round is not None else 0
        logged = rec.cmd
        if (
            logged is not None
            and isinstance(logged.get("seat"), int)
            and logged.get("kind") != "presence"
        ):
            key = (logged["seat"], now, "actions")
            self.counts[key] = self.counts.get(key, 0) + 1
        if isinstance(e, ev.PresenceChanged):
            self.presence.setdefault(e.seat, []).append((len(self.a.steps) - 1, step, now))
            key = (e.seat, now, "presence")
            self.counts[key] = self.counts.get(key, 0) + 1
        elif isinstance(e, ev.HostChanged) and e.reason == ev.HOST_LEFT:
            # The server counts a host's leaving that passed the role at once in their budget
            # of comings and goings (server/room.py): so does the estimate of that budget.
            key = (g.host, now, "presence")
            self.counts[key] = self.counts.get(key, 0) + 1

    def in_time(self, step: Step, command: dict[str, Any], g: Game, r: RoundAudit | None) -> None:
        """A3: a move made once its phase's time had run out. The server's clock closes a phase
        before it takes the next request (the rules of version 2 leave the order to it), so such
        a move was let in: by a server that let a friend commit after the summon closed, say."""
        now = command.get("now")
        deadline = g.clock_deadline
        if deadline is None or not isinstance(now, int | float):
            return
        if now >= deadline:
            seat = command.get("seat")
            who = self.a.name(seat) if isinstance(seat, int) and seat in g.seats else "a player"
            self.problem(
                "rules",
                f"{step.where}: {who}'s {one_line(str(command.get('kind')))} is dated "
                f"{now - deadline:.3f} s after the {g.phase} phase's deadline: when time runs "
                "out the phase closes first (A3), so this move came too late to be taken",
                r,
            )

    def committed(self, step: Step, e: ev.Committed, g: Game, r: RoundAudit | None) -> None:
        assert r is not None and g.round is not None
        who = self.a.name(e.seat)
        if g.phase not in ("commit", "dark-commit"):
            self.problem(
                "reveals",
                f"round {e.round}: {who} committed at {step.where} while the game was in the "
                f"{g.phase} phase, not while the summon was open",
                r,
            )
        if e.replaced != (e.seat in g.round.commits):
            self.problem(
                "reveals",
                f"round {e.round}: {who}'s commitment at {step.where} is "
                + (
                    "marked as a replacement but there was none before"
                    if e.replaced
                    else "not marked as a replacement but replaces an earlier one"
                ),
                r,
            )
        r.commits.setdefault(e.seat, CommitLog()).committed.append(step.record.ts)

    def revealed(self, step: Step, e: ev.Revealed, g: Game, r: RoundAudit | None) -> None:
        assert r is not None and g.round is not None
        who = self.a.name(e.seat)
        log = r.commits.setdefault(e.seat, CommitLog())
        log.revealed = step.record.ts
        self.a.reveals_checked += 1
        if g.phase != "reveal":
            self.problem(
                "reveals",
                f"round {e.round}: {who} revealed {e.word!r} at {step.where} during the "
                f"{g.phase} phase: a word was out before the summon closed",
                r,
            )
        expected = g.round.commits.get(e.seat)
        if expected is None:
            log.opens = False
            self.problem(
                "reveals",
                f"round {e.round}: {who} revealed {e.word!r} at {step.where} without a "
                "commitment to open",
                r,
            )
            return
        log.opens = check_reveal(expected, g.setup.game_id, e.round, e.seat, e.nonce, e.word)
        if not log.opens:
            self.problem(
                "reveals",
                f"round {e.round}: {who}'s reveal of {e.word!r} at {step.where} does not open "
                f"their commitment {expected[:12]}… (game {g.setup.game_id!r}, round {e.round}, seat "
                f"{e.seat}): the word is not the one committed to",
                r,
            )

    def published(self, step: Step, e: ev.SummonsPublished, g: Game, r: RoundAudit | None) -> None:
        assert g.round is not None
        revealed = {s: w for s, (w, _) in g.round.reveals.items()}
        for seat in sorted(set(e.words) | set(revealed)):
            got, want = e.words.get(seat), revealed.get(seat)
            if got != want:
                self.problem(
                    "reveals",
                    f"round {e.round}: {step.where} publishes "
                    f"{'no word' if got is None else repr(got)} for {self.a.name(seat)}, who "
                    f"revealed {'nothing' if want is None else repr(want)}",
                    r,
                )
        unrevealed = sorted(s for s in g.round.commits if s not in g.round.reveals)
        if sorted(e.unrevealed) != unrevealed:
            names = ", ".join(self.a.name(s) for s in unrevealed) or "nobody"
            listed = ", ".join(self.a.name(s) for s in e.unrevealed) or "nobody"
            self.problem(
                "reveals",
                f"round {e.round}: {step.where} lists {listed} as never revealing; the "
                f"commitments say {names}",
                r,
            )

    def scored(self, step: Step, e: ev.RoundScored, g: Game, r: RoundAudit | None) -> None:
        assert r is not None
        r.before, r.recorded = g, e
        try:
            # Scored as the game was played: by the house rules its host chose, if any.
            r.sheet, r.result = scored_sheet(g, g.setup.house_rules)
            if g.setup.house_rules:
                r.official = score_round(r.sheet)
        except Exception as exc:
            self.problem(
                "scores",
                f"round {e.round}: the rules engine cannot score the round from the log "
                f"({exc!r}); the log recorded case {e.case!r}, points {_names(self.a, e.points)}",
                r,
            )
            return
        res = r.result
        if res.case != e.case:
            self.problem(
                "scores",
                f"round {e.round}: the log records case {e.case!r} at {step.where}; the rules "
                f"engine finds {res.case!r}",
                r,
            )
        for seat in sorted(set(res.scores) | set(e.points)):
            want, got = res.scores.get(seat), e.points.get(seat)
            if want != got:
                self.problem(
                    "scores",
                    f"round {e.round}: {self.a.name(seat)}: the log records "
                    f"{'no points' if got is None else f'{got:+d}'} at {step.where}; the rules "
                    f"engine computes {'no points' if want is None else f'{want:+d}'}",
                    r,
                )
        invalid = {s: i.reason for s, i in res.invalid.items()}
        for seat in sorted(set(invalid) ^ set(e.invalid)):
            self.problem(
                "scores",
                f"round {e.round}: {self.a.name(seat)}'s word: the log records it as "
                + (f"invalid ({e.invalid[seat]})" if seat in e.invalid else "valid")
                + "; the rules engine finds it "
                + (f"invalid ({invalid[seat]})" if seat in invalid else "valid"),
                r,
            )
        for seat, pts in res.scores.items():
            self.a.totals[seat] = self.a.totals.get(seat, 0) + pts
        r.running = dict(self.a.totals)

    def ended(self, step: Step, e: ev.GameEnded, g: Game) -> None:
        a = self.a
        a.ended = e
        self.final_totals(step, e.totals, g)
        standing = {s: t for s, t in a.totals.items() if s not in g.kicked}
        best = max(standing.values(), default=0)
        winners = tuple(s for s, t in sorted(standing.items()) if t == best)
        if tuple(e.winners) != winners:
            names = ", ".join(a.name(s) for s in e.winners) or "nobody"
            want = ", ".join(a.name(s) for s in winners) or "nobody"
            self.problem(
                "totals",
                f"winners: the log names {names} at {step.where}; the rules engine finds {want}",
            )

    def abandoned(self, step: Step, e: ev.GameAbandoned, g: Game) -> None:
        """A7: the totals stand as the rounds add up; nobody acted after the last connection went.

        That nobody was connected is the server's word; a player's action after ``idle_since``,
        or a seat the log's presence has connected then (:meth:`away_at`), would prove it wrong.
        """
        self.a.abandoned = e
        self.final_totals(step, e.totals, g)
        if e.phase != g.phase:
            self.problem(
                "end",
                f"{step.where}: game_abandoned says the game stood in the {e.phase} phase; the "
                f"log has it in the {g.phase} phase",
                self.current,
            )
        if e.idle_since > e.at:
            self.problem(
                "end",
                f"{step.where}: game_abandoned says nobody was connected from "
                f"{e.idle_since:.3f}, which is after it was abandoned ({e.at:.3f})",
            )
        act = self.last_act
        if act is not None and act.record.ts > e.idle_since:
            self.problem(
                "end",
                f"{step.where}: game_abandoned says nobody was connected from {e.idle_since:.3f}, "
                f"but {act.record.type} at {act.where} ({act.record.ts:.3f}) is a player acting "
                "after that",
            )
        self.away_at(step, e, g)

    def away_at(self, step: Step, e: ev.GameAbandoned, g: Game) -> None:
        """At ``idle_since`` every seat's last logged presence must say away (a seat the log
        records no presence for is the server's word). Two honest ways for a going to be logged
        late or not at all (docs/LOG.md, ``presence_changed``), so neither fails:

        * a restarted server's clock of idleness starts when it reopens the log, and the first
          thing it logs is everyone away: a going logged after ``idle_since`` counts when only
          goings were logged between ``idle_since`` and it;
        * a seat over its budget of comings and goings in a round is not logged until a later
          round. The budget is the server's setting, not in the log, but it is at least the most
          records of one kind any seat had logged in one round (actions and comings and goings
          have budgets of one size): a seat that had that many may be over it (a note says so).
        """
        idle = e.idle_since
        steps = self.a.steps
        start = len(steps) - 1  # the first step logged after idle_since
        while start > 0 and steps[start - 1].record.ts > idle:
            start -= 1
        budget = max(self.counts.values(), default=0)  # the least the server's budget can be
        for seat, logged in sorted(self.presence.items()):
            if seat in g.kicked:
                continue
            before = [x for x in logged if x[1].record.ts <= idle]
            last = before[-1][1] if before else None
            if last is not None and _away(last):
                continue
            later = logged[len(before) :]
            if later:
                index, going, _ = later[0]
                if _away(going) and all(_away(s) for s in steps[start:index]):
                    continue  # a restart's "everyone away", first thing after idle_since
            name = self.a.name(seat)
            there = (
                f"presence_changed at {last.where} ({last.record.ts:.3f}) has {name} connected"
                if last is not None
                else f"{name} is connected from the start, no going of theirs logged before it"
            )
            if before and self.counts[(seat, before[-1][2], "presence")] >= budget:
                self.a.notes.append(
                    f"abandonment: {there} at {idle:.3f}, when the log says nobody was; "
                    f"{name} had {budget} comings and goings logged in round {before[-1][2]}, "
                    "as many as any seat had of anything in a round: the server's budget may "
                    "have stopped logging their going"
                )
                continue
            self.problem(
                "end",
                f"{step.where}: game_abandoned says nobody was connected from {idle:.3f}, but "
                f"{there} then, and "
                + (
                    f"their going is logged only at {later[0][1].where} "
                    f"({later[0][1].record.ts:.3f})"
                    if later
                    else "no going of theirs is logged after it"
                ),
            )

    def final_totals(self, step: Step, totals: dict[int, int], g: Game) -> None:
        """A game's last word on the totals: as the engine's rounds and the log's own add up."""
        a = self.a
        for seat in sorted(set(a.totals) | set(totals)):
            want, got = a.totals.get(seat), totals.get(seat)
            if want != got:
                self.problem(
                    "totals",
                    f"final totals: {a.name(seat)}: the log records {got} at {step.where}; the "
                    f"rules engine's rounds add up to {want}",
                )
            elif g.totals.get(seat) != got:
                self.problem(
                    "totals",
                    f"final totals: {a.name(seat)}: {step.record.type} at {step.where} records "
                    f"{got}, but the log's own round scores add up to {g.totals.get(seat)}",
                )


def _away(step: Step) -> bool:
    """A presence record of a going."""
    return isinstance(step.event, ev.PresenceChanged) and not step.event.connected


#: Events that :meth:`_Replay.check` looks into beyond their round number.
_CHECKED: frozenset[type] = frozenset(
    {
        ev.Committed,
        ev.Revealed,
        ev.SummonsPublished,
        ev.RoundScored,
        ev.RoundVoided,
        ev.GameEnded,
        ev.GameAbandoned,
    }
)

#: Events that are a seat's own action: someone was connected when they were logged (a
#: ``player_skipped`` with no ``by`` is the table's, not a seat's).
#: The logged commands a player's message makes (the others are the server's: its clock, the
#: comings and goings it saw, the host role passed on, an abandoned game).
_PLAYER_MOVES: frozenset[str] = frozenset(
    struct_tag(kind)
    for kind in (
        cmd.ChooseCard,
        cmd.WriteSpell,
        cmd.MarkBoards,
        cmd.Commit,
        cmd.Reveal,
        cmd.Challenge,
        cmd.ProposeSame,
        cmd.Vote,
        cmd.Done,
        cmd.Pause,
        cmd.Resume,
        cmd.Skip,
        cmd.Kick,
    )
)

_SEAT_ACTS: frozenset[type] = frozenset(
    {
        ev.CardChosen,
        ev.SpellWritten,
        ev.BoardsMarked,
        ev.Committed,
        ev.Revealed,
        ev.ProposalMade,
        ev.VoteCast,
        ev.PlayerDone,
        ev.PlayerSkipped,
        ev.PlayerKicked,
        ev.GamePaused,
        ev.GameResumed,
    }
)


def whole_batches(records: Sequence[LogRecord]) -> int:
    """How many of ``records`` the replay takes: whole batches only, since the states between
    the records of one decision never existed (a log cut or damaged inside a decision ends
    before it)."""
    end = len(records)
    while end and records[end - 1].batch:
        end -= 1
    return end


def _replay(audit: Audit) -> None:
    records = audit.records
    if not records:
        return
    first = records[0]
    if first.type != "game_started":
        raise Unusable(
            f"{path_text(audit.path)}: not a Conjure game log: line 1 (seq 0) is a {first.type!r} record, "
            "not game_started"
        )
    try:
        start = ev.event_from_record(first.type, first.data)
    except msgspec.ValidationError as exc:
        raise Unusable(
            f"{path_text(audit.path)}: line 1 (seq 0): its game_started record cannot be read ({exc})"
        ) from None
    assert isinstance(start, ev.GameStarted)
    if start.rules_version not in KNOWN_RULES_VERSIONS:
        known = ", ".join(str(v) for v in sorted(KNOWN_RULES_VERSIONS))
        raise Unusable(
            f"{path_text(audit.path)}: the game was played under rules version {start.rules_version}, which "
            f"this program does not know (it scores rules version {known}); audit it with the "
            "version of conjure that recorded it"
        )
    if start.log_format > LOG_FORMAT:
        raise Unusable(
            f"{path_text(audit.path)}: the log is in record format {start.log_format}, which this program "
            f"does not know (it reads formats 1 to {LOG_FORMAT}); audit it with the version of "
            "conjure that recorded it"
        )
    audit.start = start
    audit.totals = {p.seat: 0 for p in start.players}
    _check_names(audit, start)
    if start.words and start.words != word_fingerprint():
        audit.notes.append(
            f"word data: the game compared words with {start.words}, this program has "
            f"{word_fingerprint()} (other noun forms or another lemmatizer): where a score "
            "differs, the word data may be why"
        )
    end = whole_batches(records)
    decided_all = False
    if start.rules_version in DECIDED_RULES:
        # Every batch decided again from the command recorded with it: the moves themselves,
        # not only their events, must be what the rules allow and produce. The replay checks
        # each batch that matches as it matches, on the states deciding it led to (no second
        # fold, and no state kept longer than the replay needs it); it folds only the rest.
        replay = _Replay(audit)
        decided = redecide(records[:end], each=replay.step)
        replay.run(records[len(audit.steps) : end])  # from the first batch that did not match
        _over_budget(audit, replay.counts)
        audit.redecided = decided.batches
        if decided.mismatch is not None:
            audit.fail("rules", f"not what the rules decide at {decided.mismatch.sentence()}")
        decided_all = decided.mismatch is None
        if start.deal is None:
            audit.notes.append(
                "the cards were not dealt from a seeded shuffle (no deal recorded): nothing in "
                "the log proves the deal was fair"
            )
        elif (odd := _odd_deck(start)) is not None:
            audit.notes.append(odd)
    else:
        _not_version_1(audit, records)
        _Replay(audit).run(records[:end])
        # Version 1 logs record no commands: the events are checked against the rules' limits.
        audit.notes.append(
            f"rules version {start.rules_version}: the log records no commands, so these checks "
            "did not run: no move was decided again (each event was checked for its shape, its "
            "seat, phase and turn only, not for whether the rules produce it), no clock (that no "
            "deadline passed early or was ignored), and not the deal (version 1 recorded none)"
        )
    if decided_all:
        # Every event is what the rules decide from its command, so the legality fold (which
        # deciding again replaces) would find nothing: as in recovery, it explains a refused log.
        return
    steps = [(s, s.event) for s in audit.steps if s.event is not None]
    illegal = first_illegal([e for _, e in steps])
    if illegal is not None:
        audit.fail(
            "replay",
            f"{steps[illegal[0]][0].where} is not legal under rules version "
            f"{start.rules_version}: {illegal[1]}",
        )


#: What a rules version 1 server never wrote: each came with version 2 (docs/LOG.md), so a log
#: that names version 1 and holds one was rewritten to be checked by the weaker version 1 audit.
_V2_START_KEYS = ("log_format", "words", "house_rules", "deal")
_V2_FIELDS: dict[str, tuple[str, ...]] = {
    "proposal_made": ("voters", "reopened"),
    "round_scored": ("reasons",),
    "player_skipped": ("dropped",),
    "player_kicked": ("dropped",),
}
_V2_TYPES = frozenset({"presence_changed"})


def _over_budget(audit: Audit, counts: dict[tuple[int, int, str], int]) -> None:
    """A note for a seat with more records of one kind in a round than a server of this program
    logs by default (``max_actions_per_round``): 200,000 comings and goings in one round
    verified without a word (found by review). The budget is the server's setting, not in the
    log, so this is a question, not a failure."""
    most = ServerConfig.max_actions_per_round
    for (seat, number, kind), n in sorted(counts.items()):
        if n > most:
            what = "comings and goings" if kind == "presence" else "game actions"
            audit.notes.append(
                f"{audit.name(seat)} has {n:,} {what} logged in round {number}, more than the "
                f"{most} a server of this program logs by default (--max-actions-per-round): "
                "a server set so, or records no server of ours wrote"
            )


def _not_version_1(audit: Audit, records: Sequence[LogRecord]) -> None:
    """FAIL a log that says rules version 1 but holds what only version 2 writes: a downgrade
    (strip the commands, say version 1) must not buy the forger an audit without re-deciding."""
    found: dict[str, str] = {}  #: what -> where it first is
    first = records[0]
    for key in _V2_START_KEYS:
        if key in first.data:
            found.setdefault(f"a {key!r} in game_started", "line 1 (seq 0)")
    for r in records:
        where = f"line {r.seq + 1} (seq {r.seq})"
        if r.cmd is not None:
            found.setdefault("a recorded command (cmd)", where)
        if r.type in _V2_TYPES:
            found.setdefault(f"a {r.type} record", where)
        for key in _V2_FIELDS.get(r.type, ()):
            if key in r.data:
                found.setdefault(f"a {r.type} with {key!r}", where)
    for what, where in found.items():
        audit.fail(
            "rules",
            f"the log says rules version 1, but {where} holds {what}, which only rules version 2 "
            "writes: the log was rewritten to claim the older version, whose audit decides no "
            "move again",
        )


def _check_names(audit: Audit, start: ev.GameStarted) -> None:
    """Every name is one the server seats (``server.lobby``: ``enforce_name``, stored in its
    enforced form, and no look-alike of a player already seated). Why: a log holding a name the
    server refuses was not written by it as it stands, and such a name (an unshown character,
    "Аnn" beside "Ann") is what a forger uses to pass one player's moves off as another's."""
    #: each seated name by its keys (protocol.names.name_keys: as look_alike compares), the first
    seated: dict[tuple[str, str], str] = {}
    for p in start.players:
        name = repr(p.name)
        try:
            enforced = enforce_name(p.name)
        except BadName as exc:
            audit.fail(
                "names",
                f"line 1 (seq 0): seat {p.seat}'s name {name} is one the server refuses: {exc}",
            )
        else:
            if enforced != p.name:
                audit.fail(
                    "names",
                    f"line 1 (seq 0): seat {p.seat}'s name {name} is not as the server stores "
                    f"names: it stores {enforced!r}",
                )
        keys = name_keys(p.name)
        other = next((seated[k] for k in keys if k in seated), None)
        if other is None:
            seated.update(dict.fromkeys(keys, p.name))
        else:
            audit.fail(
                "names",
                f"line 1 (seq 0): seat {p.seat}'s name {name} can be mistaken for {other!r}, "
                "seated before it: the server seats no one under a look-alike of another "
                "player's name",
            )


# ---------------------------------------------------------------------------------------------


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """No cyclic garbage collection while a log is read and replayed.

    Why: an audit keeps every record, event and step it reads (its report needs them), so what it
    makes survives and brings on the collector's passes, the full ones walking the word data and
    the lemmatizer's tables too (~20 ms each), and they find nothing: an audit makes no cyclic
    garbage (checked with ``gc.collect()`` after audits run with the collector off). In
    ``bench/audit.py`` that was a tenth of the audit's time. Reference counting still frees
    everything; the collector is left as it was found.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def audit(
    path: str | os.PathLike[str],
    receipts: Sequence[Receipt] = (),
    state_dirs: Sequence[Path] = (),
    receipt_files: Sequence[Path] = (),
    *,
    files_named_for_game: bool = True,
    reads: ReceiptReads | None = None,
    server_keys: Sequence[str] = (),
) -> Audit:
    """Verify and re-derive one log. Raises Unusable for input that is not an auditable log.
    ``files_named_for_game``: the receipt files were given for this log, so their entries
    without a ``game_id`` are its own (see :func:`receipts_from_file`). ``reads``: receipt
    files already read in this run (several logs). ``server_keys``: the keys the server signs
    receipts with, as the organizer knows them (a receipt signed with another key counts as
    unsigned)."""
    a = Audit(Path(path))
    with _collector_paused():
        _read(a.path, a)
        _replay(a)
    a.receipts = list(receipts)
    game_id = a.start.game_id if a.start is not None else None
    for f in receipt_files:
        got, notes = receipts_from_file(
            f, game_id, named_for_game=files_named_for_game, reads=reads
        )
        a.receipts.extend(got)
        a.notes.extend(notes)
    if game_id is None and state_dirs:
        a.notes.append(
            "the receipts in the state directory were not checked: the log's first record is "
            "damaged, so the game it belongs to is unknown"
        )
    if game_id is not None:
        for d in state_dirs:
            got, notes = receipts_from_state_dir(d, game_id, reads)
            a.receipts.extend(got)
            a.notes.extend(notes)
            kept = len(a.deal_kept) + len(a.kinds.get("deal", []))
            check_kept_deals(a, d, reads or ReceiptReads())
            if not got and kept == len(a.deal_kept) + len(a.kinds.get("deal", [])):
                _nothing_of_this_game(a, d, reads or ReceiptReads())
    _check_receipts(a, server_keys)
    _unanchored(a)
    _unconfirmed_shares(a)
    damaged = a.corrupt is not None or a.torn is not None
    if a.start is not None and not a.finished and a.replay_stopped is None and not damaged:
        g = a.state
        where = f"round {g.round.number}, {g.phase} phase" if g is not None and g.round else "start"
        a.notes.append(
            f"the game is unfinished: the log ends at seq {len(a.records) - 1} ({where}), "
            "with no game_ended record. A game still running, or a log cut at the end of a "
            "decision: only a receipt can tell these apart."
        )
    if a.abandoned is not None and "end" not in a.kinds:
        a.notes.append(
            "the game was abandoned (A7): the log does not record connections, only the "
            "comings and goings the server logged (within a budget), so that nobody was connected "
            "is the server's word; what the log can show agrees: no player acted after the time "
            "it names, and no seat's logged presence has them connected then"
        )
    if not a.receipts:
        a.notes.append(
            "no receipt of this game was given or found"
            + (" in the state directories given" if state_dirs else "")
            + ": a receipt is what proves the log was not cut short or rewritten from scratch "
            "after a client saw it, so the whole log is the server's word"
        )
    if a.start is not None and not GAME_ID.fullmatch(a.start.game_id):
        a.fail(
            "ids",
            f"the game id {one_line(a.start.game_id)!r} is none a server of this program makes "
            "(letters, digits, '-' and '_' only): a look-alike of another game's id would make "
            "that game's receipts and kept deals seem to be another game's",
        )
    return a


#: What a game id is (``server.lobby.new_game_id``: "g" and 16 hex digits; tests use others).
GAME_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def _nothing_of_this_game(a: Audit, state_dir: Path, reads: ReceiptReads) -> None:
    """A state directory given that holds no receipt and no kept deal of this game: said, with
    the games it does hold, and a warning if one of them was played in this room while this
    game was (a log given a new game id: its players' receipts, filed under the id they were
    told, counted for nothing, and the report said none were found; found by review). A note,
    not a failure: the clocks of a client and a server may disagree."""
    start = a.start
    assert start is not None
    folder = state_dir / RECEIPTS_DIR
    files = reads.listing(folder) if folder.is_dir() else []
    if isinstance(files, str):
        return
    began, ended = a.records[0].ts, a.records[-1].ts
    others: list[tuple[str, str]] = []
    during: list[str] = []
    for path in files:
        doc, unread = reads.doc(path)
        if unread is not None or not isinstance(doc, dict):
            continue
        gid, room, at = doc.get("game_id"), doc.get("room"), doc.get("saved_at")
        if not isinstance(gid, str) or gid == start.game_id:
            continue
        others.append((gid, room if isinstance(room, str) else "?"))
        # (A client saves a receipt as the update reaches it: a player who saw this game's
        # end saved its last one just after the last record; found by an auditor's review.)
        if room == start.room and isinstance(at, int | float) and began < at <= ended + RECEIPT_LAG:
            during.append(gid)
    if others:
        held = ", ".join(f"{one_line(g)} (room {one_line(r)})" for g, r in others[-3:])
        more = f" and {len(others) - 3} more" if len(others) > 3 else ""
        same = (
            f"; its client saved its last receipt of game {one_line(during[0])!r}, in this "
            "room, while this log says this game was played there: as a room has one game at "
            "a time, if the two clocks agree the log's game id is not the one its players "
            "were told"
            if during
            else ""
        )
        a.notes.append(
            f"{path_text(state_dir)} holds no receipt and no kept deal of this game, only of "
            f"{counted(len(others), 'other game')}: {held}{more}. If it is a player's of this "
            f"game, its client was never told of this game id, room or deal{same}"
        )
    else:
        a.notes.append(f"{path_text(state_dir)} holds no receipt and no kept deal of any game")


def _unanchored(a: Audit) -> None:
    """What of the log no receipt covers: the records after the newest receipt on the chain
    are the server's word alone, however well they check (a round rewritten after the last
    receipt verified, and nothing said so; found by review)."""
    on = [r.seq for r in a.receipts if r.status == "on-chain"]
    last = len(a.records) - 1
    if not on or max(on) >= last:
        return
    newest = max(on)
    later = next((r.number for r in a.rounds if any(s.record.seq > newest for s in r.steps)), None)
    where = f", round {later} on" if later is not None else ""
    a.notes.append(
        f"records after seq {newest} ({counted(last - newest, 'record')}{where}) are covered "
        "by no receipt given: a receipt proves the log up to its record, so these are the "
        "server's word alone (a receipt of a player who stayed to the end covers them)"
    )
