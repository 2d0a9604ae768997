"""Patches (docs/PROTOCOL.md, "Patches"): after one whole view, a client that asked for them gets
only what changed for it, and applying every patch gives exactly the view the server would have
sent whole.

The patch path is checked three ways: protocol.patch against an independent RFC 6902 library
(``jsonpatch``), the server's frames over whole recorded games of both variants for every seat
and a spectator after every event, and real servers with real clients (patching and not, a
spectator of each kind, a lost patch).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import jsonpatch
import msgspec
import pytest
import trio
from clienthelpers import wait_until
from hypothesis import given, settings
from hypothesis import strategies as st
from polling import poll_until
from wsclient import open_client, open_table, play_round, start_game, unframe

from conjure.client import wire
from conjure.protocol import messages as m
from conjure.protocol.events import event_from_record
from conjure.protocol.patch import FEATURE, PatchError, apply, diff
from conjure.server import results as results_mod
from conjure.server.logformat import read_log
from conjure.server.patching import Frames, Sent, public_doc
from conjure.server.room import settings_of
from conjure.server.rules import evolve
from conjure.server.views import Table, ViewCache, build_view

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ["sample-standard.jsonl", "sample-dark-magic.jsonl", "sample-review.jsonl"]

# ---------------------------------------------------------------------------- protocol.patch

json_data = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=3),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(["a", "b", "~", "/x", ""]), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(old=json_data, new=json_data)
def test_a_diff_applied_gives_the_new_document_by_any_rfc_6902_library(old, new):
    ops = diff(old, new)
    assert apply(copy.deepcopy(old), copy.deepcopy(ops)) == new
    assert jsonpatch.apply_patch(copy.deepcopy(old), ops) == new
    assert (ops == []) == (old == new)


def test_a_list_that_grew_gets_its_new_elements_added_and_a_field_its_own_replace():
    old = {"feed": [1, 2], "players": [{"seat": 0, "spell": None}, {"seat": 1, "spell": None}]}
    new = {"feed": [1, 2, 3], "players": [{"seat": 0, "spell": None}, {"seat": 1, "spell": "x"}]}
    assert diff(old, new) == [
        {"op": "add", "path": "/feed/-", "value": 3},
        {"op": "replace", "path": "/players/1/spell", "value": "x"},
    ]


@pytest.mark.parametrize(
    "ops",
    [
        [{"op": "replace", "path": "/nope", "value": 1}],
        [{"op": "remove", "path": "/a/5"}],
        [{"op": "add", "path": "/a/-1", "value": 1}],
        [{"op": "add", "path": "/a/01", "value": 1}],
        [{"op": "move", "from": "/a", "path": "/b"}],
        [{"op": "replace", "path": "a", "value": 1}],
        [{"path": "/a"}],
        ["replace"],
        [{"op": "add", "path": "/a/0/x", "value": 1}],
    ],
)
def test_a_patch_that_does_not_apply_is_refused_with_a_patch_error(ops):
    with pytest.raises(PatchError):
        apply({"a": [1, 2]}, ops)


# ---------------------------------------------------------------------------- the server's frames


def _views_of_a_whole_game(name: str):
    """For every event of a recorded game: (table, game) as the room holds them then."""
    records = read_log(ROOT / "replays" / name).records
    state, shown = None, []
    for r in records:
        state = evolve(state, event_from_record(r.type, r.data))
        results_mod.extend_views(state, shown)
        ids = frozenset(p.id for p in state.setup.players if p.seat not in state.away)
        table = Table(
            code=state.setup.room,
            settings=settings_of(state),
            lobby=None,
            connected=ids,
            spectators=r.seq % 3,  # the count changes too
            results=list(shown),
            now=r.ts,
        )
        yield table, state


def _whole(frame: bytes) -> tuple[dict, int]:
    msg = json.loads(frame)
    assert msg["type"] == "update"
    return msg["view"], msg["n"]


@pytest.mark.parametrize("name", SAMPLES)
def test_every_patch_of_a_whole_game_gives_exactly_the_whole_view(name):
    """Each seat and a spectator, after every event of a whole game: the view a client holds
    by applying patches is the view ``build_view`` makes for it (the function every payload
    passes through), and so is every whole update."""
    cache = ViewCache()
    held: dict[int | None, dict] = {}
    sent: dict[int | None, Sent | None] = {}
    sizes: list[int] = []
    for number, (table, game) in enumerate(_views_of_a_whole_game(name), 1):
        frames = Frames(public_doc(table, game, cache), None, number)
        for viewer in [*game.seats, None]:
            data, after = frames.frame(sent.get(viewer), viewer, ["a line"])
            text = unframe(data)
            msg = json.loads(text)
            if msg["type"] == "update":
                held[viewer], n = _whole(text)
                assert n == number == 1
            else:
                assert msg["base"] == sent[viewer].n == number - 1 and msg["n"] == number
                held[viewer] = apply(held[viewer], msg["ops"])
                if viewer == 0:
                    sizes.append(len(text))
            sent[viewer] = after
            want = msgspec.to_builtins(build_view(table, game, viewer), str_keys=True)
            assert held[viewer] == want, (name, viewer)
            assert m.server_decoder.decode(json.dumps({"type": "update", "view": held[viewer]}))
    assert sum(sizes) / len(sizes) < 1024, sum(sizes) / len(sizes)


def test_a_moved_seat_moves_the_you_mark():
    """In a lobby the seating order changes: a patch moves the viewer's ``you`` with its seat."""
    from conjure.server.lobby import Lobby

    lobby = Lobby()
    ids = [lobby.join(name)[0].id for name in ("Ann", "Bob", "Cy")]
    cache = ViewCache()

    def table() -> Table:
        return Table(code="ABCD", settings=lobby.settings, lobby=lobby, connected=frozenset(ids))

    first = Frames(public_doc(table(), None, cache), None, 1)
    data, sent = first.frame(None, 1, [])
    text = unframe(data)
    held, _ = _whole(text)
    lobby.reorder(ids[0], [1, 2, 0])  # Bob moves from seat 1 to seat 0
    data, sent = Frames(public_doc(table(), None, cache), None, 2).frame(sent, 0, [])
    text = unframe(data)
    held = apply(held, json.loads(text)["ops"])
    assert held == msgspec.to_builtins(build_view(table(), None, 0), str_keys=True)


# ---------------------------------------------------------------------------- real servers

SPELLS = {0: "tree", 1: "rock", 2: "cloud"}
SUMMONS = {0: "apple", 1: "apple", 2: "pear"}


async def play_game(table) -> None:
    """A whole three-seat game (three rounds), every round played the same way."""
    await start_game(table)
    for _ in range(3):
        await play_round(table, SUMMONS, SPELLS, [0, 1])
    await table[0].wait_view(lambda v: v.phase == "over")


async def test_the_welcome_names_patches_only_to_a_client_that_asked(server):
    async with wire.connect(server.url, client="new") as link:
        assert link.welcome is not None and link.welcome.features == [FEATURE]
    async with wire.connect(server.url, client="old", patches=False) as link:
        assert link.welcome is not None and link.welcome.features == []


def same(a: m.View, b: m.View | None) -> bool:
    """Equal views but for ``remaining``, the seconds left at the moment each was sent."""
    assert b is not None
    return msgspec.structs.replace(a, remaining=None) == msgspec.structs.replace(b, remaining=None)


async def whole_and_held(client) -> tuple[m.View, m.View]:
    """The whole view the server sends ``client`` when asked (``resync``), and the view the
    client held just before it arrived."""
    start = len(client.frames)
    await client.send(m.Resync())
    with trio.fail_after(5):
        while True:
            whole = [json.loads(raw) for raw in client.frames[start:]]
            answer = next((msg["n"] for msg in whole if msg["type"] == "update"), None)
            updates = [x for x in client.received if isinstance(x, m.Update)]
            at = next((i for i, x in enumerate(updates) if x.n == answer), None)
            if answer is not None and at is not None:
                return updates[at].view, updates[at - 1].view
            await trio.sleep(0.01)


async def test_a_game_played_with_patches_shows_every_client_the_whole_view(start_server):
    """Seats and a spectator that patch, beside a spectator that takes whole views: both
    spectators see the same views all along, and at the end every patching client holds the
    view the server has for it (asked for whole with ``resync``)."""
    server = await start_server(spectator_interval=0.0)  # spectators hear of every change
    async with (
        open_table(server.url, ["Ann", "Bob", "Cy"]) as table,
        open_client(server.url, "New eye") as new_eye,
        open_client(server.url, "Old eye", patches=False) as old_eye,
    ):
        await new_eye.watch(table[0].room)
        await old_eye.watch(table[0].room)
        await play_game(table)
        for eye in (new_eye, old_eye):
            await eye.wait_view(lambda v: v.phase == "over")
        for c in table:
            assert c.link.patched > 0 and c.link.resyncs == 0
        assert new_eye.link.patched > 0 and old_eye.link.patched == 0
        new = [x for x in new_eye.received if isinstance(x, m.Update)]
        old = [x for x in old_eye.received if isinstance(x, m.Update)]
        assert all(x.n is None for x in old)  # whole views, unnumbered
        k = min(len(new), len(old)) - 1  # after both had joined
        assert k > 5 and [x.view for x in new[-k:]] == [x.view for x in old[-k:]]
        for c in [*table, new_eye]:
            assert same(*await whole_and_held(c))


class Lossy:
    """A WebSocket that loses the next patch when told to (as a buggy proxy might)."""

    def __init__(self, ws) -> None:
        self.ws = ws
        self.lose = False
        self.lost = 0

    async def get_message(self):
        while True:
            raw = await self.ws.get_message()
            if self.lose and json.loads(raw)["type"] == "patch":
                self.lose = False
                self.lost += 1
                continue
            return raw

    async def send_message(self, message) -> None:
        await self.ws.send_message(message)


async def test_a_lost_patch_is_recovered_with_a_whole_view(server):
    """A client that misses a patch sees the next one not follow from its view, asks for a
    whole view once, and goes on patching from it."""
    async with open_table(server.url, ["Ann", "Bob", "Cy"]) as table:
        ann = table[0]
        lossy = ann.link.ws = Lossy(ann.link.ws)
        await start_game(table)
        lossy.lose = True
        async with open_client(server.url, "Eye") as eye:  # the counts change: two updates
            await eye.watch(table[0].room)
            await table[1].send(m.Leave())
            await wait_until(lambda: lossy.lost == 1 and ann.link.resyncs == 1)
            patched = ann.link.patched
            await ann.wait_view(lambda v: not v.players[1].connected)
            assert ann.link.resyncs == 1
        async with open_client(server.url, "Bob") as bob:
            await bob.resume(table[0].room, table[1].token)
            await ann.wait_view(lambda v: v.players[1].connected)
        assert ann.link.patched > patched  # patching again after the whole view
        assert same(*await whole_and_held(ann))


async def test_a_client_without_patches_plays_a_whole_game_with_whole_views(server):
    async with open_table(server.url, ["Ann", "Bob", "Cy"], patches=False) as table:
        await play_game(table)
        for c in table:
            assert c.link.patched == 0
            assert all(x.n is None for x in c.received if isinstance(x, m.Update))
        assert table[0].view.phase == "over"


async def test_a_resync_outside_a_room_is_refused(server):
    async with open_client(server.url, "Ann") as ann:
        await ann.send(m.Resync())
        await ann.expect_error("not_in_room")


async def test_a_seat_taken_again_on_the_same_connection_starts_with_a_whole_view(server):
    """PROTOCOL.md: a resumed seat always starts with a whole view, here too."""
    async with open_client(server.url, "Ann") as ann, open_client(server.url, "Bob") as bob:
        code = await ann.create()
        await bob.join(code)
        await ann.wait_view(lambda v: len(v.players) == 2)
        assert ann.token is not None
        start = len(ann.frames)
        await ann.resume(code, ann.token)

        def views() -> list[str]:
            kinds = (json.loads(raw)["type"] for raw in ann.frames[start:])
            return [k for k in kinds if k in ("update", "patch")]

        with trio.fail_after(5):
            await poll_until(views)
        assert views()[0] == "update", views()
