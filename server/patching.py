"""Updates as patches, for the clients that asked for them in ``hello`` (docs/PROTOCOL.md,
"Patches"; protocol.patch makes and applies them).

Secrecy stays where it was: every view a client can hold is :func:`server.views.build_view`
of its seat, and a patch is only the difference between two such views of the same viewer, so
it carries nothing the full view would not. The views are made from the public view (every
seat's view is the public one with ``you`` set, ``views.for_viewer``), so one diff of the
public view serves every viewer of a room; per viewer only the ``you`` marks are added.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import msgspec

from conjure.protocol.messages import NO_EARLIER, Earlier, Receipt, RoomSettings, encoder
from conjure.protocol.patch import Op, diff
from conjure.server.rules.state import Game
from conjure.server.views import Table, ViewCache, lasting_parts, public_view
from conjure.server.wsframes import text_frame

Doc = dict[str, Any]


class Sent(msgspec.Struct, frozen=True, gc=False):
    """What a patching viewer holds: view number ``n``, made from ``doc`` (the public view as
    JSON data) for ``seat``. (A struct the collector does not track: it refers to no object
    that could refer back to it, and one is kept per viewer and seat.)"""

    n: int
    doc: Doc
    seat: int | None


def _builtins(obj: object) -> Any:
    return msgspec.to_builtins(obj, str_keys=True)


#: Stands in for the settings while the rest of a view is turned into data: the settings come
#: from the cache (``lasting_parts``), already data.
_NO_SETTINGS = RoomSettings()


def public_doc(table: Table, game: Game | None, cache: ViewCache) -> Doc:
    """The public view as the JSON data a client decodes from it (exactly
    ``msgspec.to_builtins(view, str_keys=True)``).

    The parts that rarely change (the settings, the dealt cards, the past results), each
    player's entry and the card are the very objects of the last view until they change, so
    they cost nothing to make, and ``diff`` passes over them at once (equal by identity).
    """
    view = public_view(table, game, cache, lists=False)
    players, card, settings = view.players, view.card, view.settings
    doc: Doc = _builtins(
        msgspec.structs.replace(view, players=[], card=None, settings=_NO_SETTINGS)
    )
    doc.update(lasting_parts(table, game, settings, cache, "doc", _builtins))
    doc["players"] = [
        cache.get(f"player {i} doc", p, partial(_builtins, p)) for i, p in enumerate(players)
    ]
    if card is not None:
        doc["card"] = cache.get("card doc", card, partial(_builtins, card))
    return doc


def viewer_doc(public: Doc, seat: int | None) -> Doc:
    """``views.for_viewer`` on JSON data: the view of ``seat`` (None: a spectator's)."""
    if seat is None:
        return public
    players = [dict(p, you=True) if p["seat"] == seat else p for p in public["players"]]
    return {**public, "you": seat, "players": players}


def _seat_indexes(doc: Doc) -> dict[int, int]:
    """Where each seat's entry is in a view's players list."""
    return {p["seat"]: i for i, p in enumerate(doc["players"])}


def _for_viewer(
    ops: list[Op],
    old: Doc,
    old_seat: int | None,
    seat: int | None,
    was: int | None,
    now: int | None,
) -> list[Op]:
    """The public diff ``ops`` (old -> new) as seat ``seat`` must apply it to its own view of
    ``old`` (made for ``old_seat``): player entries it adds carry the viewer's ``you`` mark, and
    the mark moves when the viewer's seat did (a lobby's new seating order). ``was`` and ``now``
    are where the viewer's entry is in the old and the new players list (None: not there)."""
    if seat is None and old_seat is None:
        return ops
    out: list[Op] = []
    whole = False  # the players list was replaced as a whole
    for op in ops:
        path = op["path"]
        if path == "/players":
            whole = True
            op = {**op, "value": viewer_doc({"players": op["value"]}, seat)["players"]}
        elif path == "/players/-" and seat is not None and op["value"]["seat"] == seat:
            op = {**op, "value": dict(op["value"], you=True)}
        out.append(op)
    if old_seat != seat:
        out.append({"op": "replace", "path": "/you", "value": seat})
    if not whole:
        if was is not None and was != now:
            out.append({"op": "replace", "path": f"/players/{was}/you", "value": False})
        if now is not None and now != was and now < len(old["players"]):
            out.append({"op": "replace", "path": f"/players/{now}/you", "value": True})
    # Nothing of the viewer's own: the very list given, so that every such viewer shares a frame.
    return ops if out == ops else out


#: Paths of a public diff that concern a viewer's own ``you`` mark (``_for_viewer``).
_PLAYERS = ("/players", "/players/-")


class Frames:
    """One update's frames for patching viewers, view number ``n`` of the room.

    Views are numbered per room, so every viewer that holds the same view (the players, after
    the last update; the spectators, after theirs) gets the same patch: the public view's diff
    is made once per view held, and each frame is encoded once per (view held, seat then, seat
    now, feed), not once per viewer. A frame is a whole WebSocket text frame, ready to write.
    """

    def __init__(self, doc: Doc, receipt: Receipt | None, n: int) -> None:
        self.doc = doc
        self.receipt = receipt
        self.n = n
        #: id(doc held) -> (its diff to ``doc``, whether that diff is every viewer's as it is:
        #: no player entry added or replaced whole, and the seats in the same order).
        self._diffs: dict[int, tuple[list[Op], bool]] = {}
        self._frames: dict[tuple[int, int | None, int | None, int], bytes] = {}
        self._seats: dict[int, dict[int, int]] = {}  # id(doc) -> _seat_indexes(doc)
        self._sent: dict[int | None, Sent] = {}

    def _indexes(self, doc: Doc) -> dict[int, int]:
        found = self._seats.get(id(doc))
        if found is None:
            found = self._seats[id(doc)] = _seat_indexes(doc)
        return found

    def _holding(self, seat: int | None) -> Sent:
        """What a viewer of ``seat`` holds once it has this update (one object per seat)."""
        held = self._sent.get(seat)
        if held is None:
            held = self._sent[seat] = Sent(self.n, self.doc, seat)
        return held

    def full(
        self, seat: int | None, feed: list[str], earlier: Earlier = NO_EARLIER
    ) -> tuple[bytes, Sent]:
        """A whole ``update`` (the first one, or the answer to ``resync``), numbered; the
        first one a connection gets from a room carries ``earlier`` (``Update.earlier`` and
        ``Update.earlier_chat``)."""
        lines, chat = earlier
        msg = {
            "type": "update",
            "view": viewer_doc(self.doc, seat),
            "receipt": self.receipt,
            "feed": feed,
            "earlier": lines,
            "earlier_chat": chat,
            "n": self.n,
        }
        return text_frame(encoder.encode(msg)), self._holding(seat)

    def frame(self, sent: Sent | None, seat: int | None, feed: list[str]) -> tuple[bytes, Sent]:
        """The viewer's next frame: a ``patch`` from the view it holds, or (holding none) a
        whole ``update``; and what it holds then."""
        if sent is None:
            return self.full(seat, feed)
        old = sent.doc
        known = self._diffs.get(id(old))
        if known is None:
            ops = diff(old, self.doc)
            plain = not any(op["path"] in _PLAYERS for op in ops) and self._indexes(
                old
            ) == self._indexes(self.doc)
            known = self._diffs[id(old)] = (ops, plain)
        ops, plain = known
        if plain and sent.seat == seat:
            mine = ops  # the usual case: nothing of the viewer's own
        else:
            was = None if sent.seat is None else self._indexes(old).get(sent.seat)
            now = None if seat is None else self._indexes(self.doc).get(seat)
            mine = _for_viewer(ops, old, sent.seat, seat, was, now)
        # Viewers whose patch is the shared one share its frame; the others get their own.
        key = (
            (id(old), None, None, id(feed)) if mine is ops else (id(old), sent.seat, seat, id(feed))
        )
        data = self._frames.get(key)
        if data is None:
            msg = {
                "type": "patch",
                "base": sent.n,
                "n": self.n,
                "ops": mine,
                "receipt": self.receipt,
                "feed": feed,
            }
            data = self._frames[key] = text_frame(encoder.encode(msg))
        return data, self._holding(seat)
