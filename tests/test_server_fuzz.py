"""Hypothesis fuzzing of inbound frames against a real in-process server with games in progress.

One server (rate limit raised so the fuzzers are not cut off for speed) holds four 4-player rooms
mid-game, each in another phase: ``spell`` (Bob's turn), ``reveal`` (Cy has revealed), Dark Magic
``dark-commit`` (Ann, conjurer and host, must commit) and ``review`` (a challenge open, Cy voted
and done). Nine connections send the fuzz: Cy in every room (neither host nor whose turn it is),
Bob on his turn, Ann as conjurer and host, a spectator, a greeted connection in no room and one
that never said hello. Hypothesis draws a sender and a frame: random bytes (binary frames),
random text, random JSON values, objects with a real ``type`` tag and random or mistyped fields,
messages of the right shape with out-of-range values and over-long text, and well-formed messages
of every type (out of phase, not the sender's turn, naming other seats, other rooms...).

For every frame: the sender gets exactly one ``error`` with a documented ``code`` (never
``internal``) and a message, and its connection stays open and usable; the code is the one the
rules engine or the protocol prescribes; every other connection receives nothing; no room's state,
receipt, members or log changes, and no room appears or goes. Frames that are legitimate moves for
their sender (the oracle asks the engine, on the room's real state) are not sent: they would
rightly change the game.

Oversized frames and floods close only the sender's connection (with a reason); the seat resumes
with its token and the game goes on. A hand-picked list of nasty frames runs too; deeply nested
JSON is a known bug (see ``test_deeply_nested_json_is_invalid_message``).
"""

from __future__ import annotations

import contextlib
import copy
import json
import re
import string
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import pytest
import trio
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from polling import poll_until
from wsclient import Client, open_client

from conjure.protocol import messages as m
from conjure.protocol.deck import Card
from conjure.protocol.messages import MAX_FRAME_BYTES, InLimits, RoomSettings, client_decoder
from conjure.server.logformat import read_log
from conjure.server.room import to_command
from conjure.server.rules import Refusal, decide

NAMES = ["Ann", "Bob", "Cy", "Dee"]
NO_CLOCKS = InLimits(choose=None, spell=None, mark=None, commit=None, reveal=None, review=None)
#: Examples of the main fuzz; each costs a round trip on every connection (~20).
EXAMPLES = 600
DOCS = Path(__file__).resolve().parent.parent / "docs" / "PROTOCOL.md"


def documented_codes() -> set[str]:
    """Every error code in the tables of PROTOCOL.md's "Errors" section."""
    text = DOCS.read_text()
    errors = text[text.index("\n## Errors") :]
    return {
        c for row in re.findall(r"^\| (`.+?) \|", errors, re.M) for c in re.findall(r"`(\w+)`", row)
    }


CODES = documented_codes()


def room_settings(variant: str = "standard") -> RoomSettings:
    return RoomSettings(
        variant=variant,  # type: ignore[arg-type]
        deck="custom",
        custom_cards=[Card(text=f"Category {c}", stars=2) for c in "ABCD"],
        limits=NO_CLOCKS,
    )


# ---------------------------------------------------------------------------- the arena


@dataclass
class Sender:
    key: str
    client: Client
    kind: str  # "seat" | "spectator" | "stranger" | "ungreeted"
    room: str | None = None  # room code
    seat: int | None = None


PROBE = '{"type": "hello", "protocol": 1}'  # greeted: already_greeted, no room involved
PROBE_UNGREETED = '{"type": "start_game"}'  # not greeted: hello_required


class Arena:
    """The server, its rooms and every connection; ``one`` runs a single fuzz example."""

    def __init__(self, server: Any) -> None:
        self.server = server
        self.tables: dict[str, list[Client]] = {}  # phase name -> Ann, Bob, Cy, Dee
        self.codes: dict[str, str] = {}  # phase name -> room code
        self.senders: dict[str, Sender] = {}
        self.everyone: list[Client] = []
        self.greeted: dict[Client, bool] = {}
        self.baseline: dict[str, Any] = {}
        self.sent = 0
        self.stats: Counter[tuple[str, str]] = Counter()  # (sender, error code) -> frames

    async def setup(self, stack: contextlib.AsyncExitStack) -> None:
        url = self.server.url

        async def table(phase: str, variant: str = "standard") -> list[Client]:
            clients = [await stack.enter_async_context(open_client(url, n)) for n in NAMES]
            code = await clients[0].create(room_settings(variant))
            for c in clients[1:]:
                await c.join(code)
            for c in clients:
                await c.wait_view(lambda v: len(v.players) == 4)
            await clients[0].send(m.StartGame())
            for c in clients:
                await c.wait_view(lambda v: v.phase == "choose")
            self.tables[phase], self.codes[phase] = clients, code
            return clients

        async def spells(t: list[Client], words: list[str]) -> None:
            for seat, word in enumerate(words):
                await t[seat].wait_view(lambda v, s=seat: v.phase == "spell" and v.turn == s)
                await t[seat].spell(word)

        async def to_reveal(t: list[Client]) -> None:
            await t[0].choose(0)
            await spells(t, ["lava", "mountain", "smoke", "island"])
            await t[0].wait_view(lambda v: v.phase == "mark")
            await t[0].mark([1, 2])
            for c, w in zip(t, ["volcano", "volcano", "volcano", "glacier"], strict=True):
                await c.wait_view(lambda v: v.phase == "commit")
                await c.commit(w)
            for c in t:
                await c.wait_view(lambda v: v.phase == "reveal")

        # spell: Ann wrote, Bob's turn.
        t = await table("spell")
        await t[0].choose(0)
        await spells(t, ["lava"])
        await t[1].wait_view(lambda v: v.phase == "spell" and v.turn == 1)
        # reveal: Cy has revealed, the others not yet.
        t = await table("reveal")
        await to_reveal(t)
        await t[2].reveal()
        await t[0].wait_view(lambda v: v.players[2].revealed)
        # dark-commit: Ann (conjurer, host) must write her word first.
        t = await table("dark", "dark-magic")
        await t[0].choose(0)
        await t[0].wait_view(lambda v: v.phase == "dark-commit")
        # review: Ann challenges Dee's word; Cy votes yes and is done.
        t = await table("review")
        await to_reveal(t)
        for c in t:
            await c.reveal()
        for c in t:
            await c.wait_view(lambda v: v.phase == "review")
        await t[0].send(m.ChallengeWord(seat=3, rule="noun"))
        await t[2].wait_view(lambda v: len(v.proposals) == 1)
        await t[2].send(m.CastVote(proposal=0, yes=True))
        await t[2].wait_view(lambda v: 2 in v.proposals[0].votes)
        await t[2].done()
        await t[2].wait_view(lambda v: v.players[2].done)

        for phase, clients in self.tables.items():
            self.senders[f"Cy@{phase}"] = Sender(
                f"Cy@{phase}", clients[2], "seat", self.codes[phase], 2
            )
        self.senders["Bob@spell(turn)"] = Sender(
            "Bob@spell(turn)", self.tables["spell"][1], "seat", self.codes["spell"], 1
        )
        self.senders["Ann@dark(host)"] = Sender(
            "Ann@dark(host)", self.tables["dark"][0], "seat", self.codes["dark"], 0
        )
        watcher = await stack.enter_async_context(open_client(url, "Eve"))
        await watcher.watch(self.codes["spell"])
        self.senders["spectator"] = Sender("spectator", watcher, "spectator", self.codes["spell"])
        stranger = await stack.enter_async_context(open_client(url, "Zed"))
        self.senders["stranger"] = Sender("stranger", stranger, "stranger")
        rude = await stack.enter_async_context(open_client(url, "Rude", hello=False))
        self.senders["ungreeted"] = Sender("ungreeted", rude, "ungreeted")

        self.everyone = [c for t in self.tables.values() for c in t] + [watcher, stranger, rude]
        self.greeted = {c: c is not rude for c in self.everyone}
        for c in self.everyone:  # everything so far is history: sync on a probe
            await self.probe(c)
        self.baseline = self.snapshot()

    def snapshot(self) -> dict[str, Any]:
        """Everything a fuzz frame must not change."""
        rooms = {}
        for code, room in self.server.rooms.items():
            path = room.writer.path
            rooms[code] = (
                id(room.game),
                copy.deepcopy(room.game),
                room.receipt,
                room.writer.last_seq,
                path.stat().st_size,
                frozenset(room.conns),
                len(room.watchers),
                room.settings,
            )
        return {"rooms": rooms, "connections": len(self.server.connections)}

    async def probe(self, c: Client) -> list[m.ServerMsg]:
        """Round trip a harmless frame; returns what arrived before its answer."""
        greeted = self.greeted[c]
        c.skip_all()
        await c.send(PROBE if greeted else PROBE_UNGREETED)
        want = "already_greeted" if greeted else "hello_required"
        got = []
        while True:
            msg = await c.recv()
            if isinstance(msg, m.Error) and msg.code == want:
                return got
            got.append(msg)

    # -------------------------------------------------------------- the oracle

    def expected(self, key: str, frame: str | bytes) -> str | None:
        """The error ``frame`` must get from ``key``; None for a legitimate move (not sent)."""
        if isinstance(frame, bytes):
            return "binary_frame"
        try:
            msg = client_decoder.decode(frame)
        except msgspec.ValidationError:
            return "invalid_message"
        except msgspec.DecodeError:
            return "malformed"
        except RecursionError:  # too deeply nested: documented as invalid_message
            return "invalid_message"
        s = self.senders[key]
        rooms = self.server.rooms
        if s.kind == "ungreeted":
            return None if isinstance(msg, m.Hello) else "hello_required"
        if isinstance(msg, m.Hello):
            return "already_greeted"
        if s.kind == "stranger":
            match msg:
                case m.CreateRoom():
                    return None
                case m.JoinRoom() | m.ResumeSeat() | m.Watch():
                    room = rooms.get(msg.room.upper())
                    if room is None:
                        return "unknown_room"
                    if isinstance(msg, m.JoinRoom):
                        return "already_started"
                    if isinstance(msg, m.ResumeSeat):
                        return "bad_token"
                    return None  # watching a room that allows it
            return "not_in_room"
        match msg:
            case m.CreateRoom():
                return "already_in_room"
            case m.JoinRoom() | m.Watch() | m.ResumeSeat():
                if msg.room.upper() != s.room:
                    return "already_in_room"
                if isinstance(msg, m.ResumeSeat):
                    return "bad_token"
                return "already_in_room"
            case m.Leave() | m.Resync():  # accepted: a goodbye, or a whole view
                return None
        if s.kind == "spectator":
            return "spectator"
        match msg:
            case m.SendChat():
                return None
            case m.ChangeSettings() | m.SeatOrder() | m.StartGame():
                return "already_started"
            case m.DealSeed():  # the arena's games are dealt already
                return "not_dealing"
        room = rooms[s.room]
        try:  # the door's own check first (a reveal's word published as it is: trimmed)
            command = to_command(msg, s.seat, time.time())  # type: ignore[arg-type]
        except Refusal as refused:
            return refused.code
        assert command is not None, msg
        verdict = decide(room.game, command)
        return verdict.code if isinstance(verdict, Refusal) else None

    # -------------------------------------------------------------- one example

    async def one(self, key: str, frame: str | bytes, code: str) -> None:
        s = self.senders[key]
        self.sent += 1
        c = s.client
        c.skip_all()
        await c.send(frame)
        reply = await c.recv()
        assert isinstance(reply, m.Error), (key, frame, reply)
        assert reply.code == code, (key, frame, reply)
        assert reply.code in CODES and reply.code != "internal", reply
        assert isinstance(reply.message, str) and reply.message, reply
        self.stats[key, code] += 1
        # Still open and usable; nothing else came for the sender, or for anybody else.
        assert await self.probe(c) == [], (key, frame)
        assert c.closed is None
        others = [x for x in self.everyone if x is not c]
        stray: dict[str, list] = {}

        async def check(x: Client) -> None:
            got = await self.probe(x)
            if got:
                stray[x.name] = got

        async with trio.open_nursery() as nursery:
            for x in others:
                nursery.start_soon(check, x)
        assert not stray, (key, frame, stray)
        assert self.snapshot() == self.baseline, (key, frame)


# ---------------------------------------------------------------------------- strategies

TAGS = [t.__struct_config__.tag for t in m.AnyClientMsg.__args__]  # type: ignore[attr-defined]
FIELDS = {t.__struct_config__.tag: t.__struct_fields__ for t in m.AnyClientMsg.__args__}  # type: ignore[attr-defined]

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30)
)
json_values = st.recursive(
    json_scalars,
    lambda kids: (
        st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=10), kids, max_size=4)
    ),
    max_leaves=12,
)

LONG = st.sampled_from([25, 65, 81, 129, 201, 301, 2000])
letters = st.text(alphabet=string.ascii_letters, min_size=4, max_size=4)
room_codes = letters | st.sampled_from(["ABCD", "abcd"])  # real codes are added per arena below
seat_nums = st.integers(min_value=0, max_value=3) | st.integers(min_value=0, max_value=7)
edge_ints = st.sampled_from([-1, 8, 9, 1000, -(2**63), 2**63, 2**64]) | st.integers()
hex64 = st.text(alphabet="0123456789abcdef", min_size=64, max_size=64)
bad_hex = (
    st.text(alphabet="0123456789abcdefABCDEFg", min_size=63, max_size=65)
    | hex64.map(str.upper)
    | st.just("")
)
tokens = st.text(alphabet=string.ascii_letters + string.digits + "_-", min_size=16, max_size=64)
words = (
    st.text(max_size=60)
    | st.text(alphabet=string.ascii_lowercase + " ", max_size=12)
    | st.sampled_from(["", " ", "a\nb", "\u202edog", "dog\x00", "x" * 41, "lava", "volcano"])
)
names = st.text(min_size=1, max_size=24).filter(
    lambda n: not any(ord(ch) < 32 or ord(ch) == 127 for ch in n)
)


@st.composite
def long_text(draw: st.DrawFn) -> str:
    n = draw(LONG)
    return draw(st.sampled_from(["x", "é", "🜁", " "])) * n


settings_dicts = st.fixed_dictionaries(
    {},
    optional={
        "variant": st.sampled_from(["standard", "dark-magic", "dark magic", ""]),
        "deck": st.sampled_from(["default", "custom", "default+custom", "mine"]),
        "custom_cards": st.lists(
            st.fixed_dictionaries({"text": st.text(max_size=70), "stars": st.integers(-1, 4)}),
            max_size=3,
        ),
        "limits": st.dictionaries(
            st.sampled_from(["choose", "spell", "mark", "commit", "reveal", "review", "x"]),
            st.none() | st.floats(allow_nan=False, allow_infinity=False) | st.integers(0, 5000),
            max_size=3,
        ),
        "spectators": st.booleans(),
    },
)

#: A valid value for every field of every inbound message.
VALID: dict[str, st.SearchStrategy] = {
    "protocol": st.just(1),
    "client": st.text(max_size=80),
    "features": st.lists(st.sampled_from(["patches", "later"]), max_size=3),
    "name": names,
    "password": st.none() | st.text(max_size=64),
    "settings": settings_dicts,
    "room": room_codes,
    "token": tokens,
    "order": st.lists(seat_nums, max_size=8),
    "card": seat_nums,
    "word": words,
    "boards": st.lists(seat_nums, max_size=8),
    "commitment": hex64,
    "nonce": hex64,
    "seed": hex64,
    "seat": seat_nums,
    "rule": st.sampled_from(["noun", "no-adjectives", "category", "written-word"]),
    "a": seat_nums,
    "b": seat_nums,
    "proposal": st.integers(min_value=0, max_value=2) | st.integers(min_value=0, max_value=999),
    "yes": st.booleans(),
    "reason": st.text(max_size=200),
    "text": st.text(min_size=1, max_size=300),
    "player_id": st.none() | st.text(min_size=1, max_size=40),
}
#: Values of the right JSON shape that break a limit (or the wrong shape altogether).
EDGY: dict[str, st.SearchStrategy] = {
    "protocol": edge_ints | st.floats(allow_nan=False),
    "client": long_text(),
    "features": st.lists(long_text(), max_size=3)
    | st.lists(st.just("x"), max_size=20)
    | json_values,
    "name": long_text() | st.sampled_from(["", "a\tb", "\x7f", "   "]),
    "password": long_text(),
    "settings": settings_dicts | json_values,
    "room": st.text(max_size=6) | st.sampled_from(["ABC", "ABCDE", "AB1D", "ÄBCD"]),
    "token": st.text(max_size=20) | long_text() | st.just("a" * 15) | st.just("a" * 129),
    "order": st.lists(edge_ints, max_size=10),
    "card": edge_ints,
    "word": long_text(),
    "boards": st.lists(edge_ints, max_size=10),
    "commitment": bad_hex,
    "nonce": bad_hex,
    "seed": bad_hex,
    "seat": edge_ints,
    "rule": st.text(max_size=15),
    "a": edge_ints,
    "b": edge_ints,
    "proposal": edge_ints,
    "yes": st.integers(0, 1) | st.just("yes"),
    "reason": long_text(),
    "text": long_text() | st.just(""),
    "player_id": long_text() | st.just("") | json_values,
}


@st.composite
def shaped(draw: st.DrawFn, mode: str) -> str:
    """A message of a real type. ``valid``: every field within its limits; ``edgy``: some
    fields break their limits; ``partial``: some fields left out (required ones too)."""
    tag = draw(st.sampled_from(TAGS))
    obj: dict[str, Any] = {"type": tag}
    for name in FIELDS[tag]:
        if mode == "edgy" and draw(st.booleans()):
            obj[name] = draw(EDGY[name])
        elif mode != "partial" or draw(st.booleans()):
            obj[name] = draw(VALID[name])
    return json.dumps(obj, ensure_ascii=draw(st.booleans()))


@st.composite
def tagged_junk(draw: st.DrawFn) -> str:
    """A real ``type`` tag (or a near miss) with random, missing, mistyped or unknown fields."""
    tag = draw(st.sampled_from(TAGS) | st.sampled_from(["HELLO", "hello ", "", "Choose_Card"]))
    obj: dict[str, Any] = {"type": tag}
    for name in FIELDS.get(tag, ()):
        if draw(st.booleans()):
            obj[name] = draw(json_values)
    obj.update(draw(st.dictionaries(st.text(max_size=8), json_values, max_size=2)))
    if draw(st.integers(0, 9)) == 0:
        obj["type"] = draw(json_values)
    return json.dumps(obj)


KINDS = [  # (share in %, frames): mostly well-formed messages, which reach rooms and the engine
    (50, shaped("valid")),
    (12, shaped("edgy")),
    (8, tagged_junk()),
    (6, shaped("partial")),
    (8, json_values.map(json.dumps)),
    (8, st.text(max_size=300)),
    (8, st.binary(max_size=300)),
]


@st.composite
def frames(draw: st.DrawFn) -> str | bytes:
    roll = draw(st.integers(0, 99))
    for share, strategy in KINDS:
        if roll < share:
            return draw(strategy)
        roll -= share
    raise AssertionError(roll)


SENDERS = [
    "Cy@spell",
    "Cy@reveal",
    "Cy@dark",
    "Cy@review",
    "Bob@spell(turn)",
    "Ann@dark(host)",
    "spectator",
    "stranger",
    "ungreeted",
]


@contextlib.asynccontextmanager
async def arena_of(server: Any):
    async with contextlib.AsyncExitStack() as stack:
        arena = Arena(server)
        await arena.setup(stack)
        yield arena


@pytest.fixture
async def fuzz_server(start_server):
    """A server whose rate limits and door clocks do not cut the fuzzers off (the flood and
    timeout tests have their own): on a slow machine the examples outlast the 10 s that an
    ungreeted connection is given, and the fuzzer's own ungreeted sender was closed."""
    return await start_server(
        rate=1e9,
        burst=1e9,
        address_rate=1e9,
        address_burst=1e9,
        hello_timeout=3600.0,
        roomless_timeout=3600.0,
        guess_rate=1e9,
        guess_burst=1e9,
        view_rate=1e9,
        view_burst=1e9,
    )


async def test_fuzzed_frames_get_errors_and_change_nothing(fuzz_server, said):
    async with arena_of(fuzz_server) as arena:
        assert set(arena.senders) == set(SENDERS)
        real_codes = sorted(arena.codes.values())
        skipped = []

        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        )
        @given(
            key=st.sampled_from(SENDERS),
            frame=frames(),
            room=st.sampled_from(real_codes),
            lower=st.booleans(),
        )
        def fuzz(key: str, frame: str | bytes, room: str, lower: bool) -> None:
            if isinstance(frame, str) and '"ABCD"' in frame:  # aim some at the real rooms
                frame = frame.replace('"ABCD"', json.dumps(room.lower() if lower else room))
            data = frame.encode() if isinstance(frame, str) else frame
            assume(len(data) <= MAX_FRAME_BYTES)  # bigger ones close the connection: see below
            code = trio.from_thread.run_sync(arena.expected, key, frame)
            if code is None:
                skipped.append(frame)
            assume(code is not None)
            trio.from_thread.run(arena.one, key, frame, code)

        await trio.to_thread.run_sync(fuzz)
        # Every sender was used, and the frames reached every layer (decoding, greeting,
        # routing, the room, the engine).
        assert arena.sent > EXAMPLES // 2, (arena.sent, len(skipped))
        assert {key for key, _ in arena.stats} == set(SENDERS)
        seen = {code for _, code in arena.stats}
        assert seen >= {
            "invalid_message",
            "malformed",
            "binary_frame",
            "hello_required",
            "not_in_room",
            "already_in_room",
            "already_started",
            "spectator",
            "not_host",
            "out_of_phase",
        }, seen
        # The players can still play: Bob (whose turn it is) writes, everyone sees it.
        spell = arena.tables["spell"]
        await spell[1].spell("mountain")
        for c in spell:
            await c.wait_view(lambda v: v.players[1].spell == "mountain")
        assert all(x.closed is None for x in arena.everyone)
    assert not [line for line in said if "error" in line], said


# ---------------------------------------------------------------------------- by hand

NASTY = [
    ("", "malformed"),
    ("\ufeff{}", "malformed"),
    ("null", "invalid_message"),
    ("[]", "invalid_message"),
    ('{"type": null}', "invalid_message"),
    ('{"type": "choose_card", "card": 1.5}', "invalid_message"),
    ('{"type": "choose_card", "card": 1e400}', "invalid_message"),
    ('{"type": "choose_card", "card": 99999999999999999999999999}', "invalid_message"),
    ('{"type": "choose_card", "card": 0, "card": 9}', "invalid_message"),
    ('{"type": "write_spell", "word": "\\ud800"}', "malformed"),  # a lone surrogate
    ('{"type": "reveal_summon", "word": "x", "nonce": "' + "A" * 64 + '"}', "invalid_message"),
    ('{"type": "commit_summon", "commitment": "' + "0" * 64 + '", "seat": 0}', "invalid_message"),
    (
        '{"type": "create_room", "name": "x", "settings": {"limits": {"spell": 4}}}',
        "invalid_message",
    ),
    ('{"type": "hello", "protocol": 1}', "already_greeted"),
    ('{"type": "start_game"}', "already_started"),
    ('{"type": "write_spell", "word": "' + "w" * 200 + '"}', "not_your_turn"),
    ('{"type": "write_spell", "word": "' + "w" * 201 + '"}', "invalid_message"),
    ("[" * 500 + "]" * 500, "invalid_message"),
]


@pytest.mark.parametrize(("frame", "code"), NASTY, ids=[f"nasty{i}" for i in range(len(NASTY))])
async def test_nasty_frames(fuzz_server, frame, code):
    async with arena_of(fuzz_server) as arena:
        key = "Cy@spell"
        assert arena.expected(key, frame) == code
        await arena.one(key, frame, code)


DEEP = '{"a":' * 2000 + "1" + "}" * 2000  # 12 KB of valid JSON


async def test_deeply_nested_json_is_invalid_message(fuzz_server, said):
    async with open_client(fuzz_server.url, "Deep") as deep:
        await deep.send(DEEP)
        err = await deep.expect_error("invalid_message")
        assert err.message
        assert not [line for line in said if "error handling a message" in line]


async def test_deeply_nested_json_does_not_crash_or_close(fuzz_server):
    """Whatever the code, the server answers, the connection stays and others are unaffected."""
    async with arena_of(fuzz_server) as arena:
        c = arena.senders["Cy@spell"].client
        c.skip_all()
        await c.send(DEEP)
        reply = await c.recv()
        assert isinstance(reply, m.Error) and reply.message
        assert await arena.probe(c) == []
        for x in arena.everyone:
            if x is not c:
                assert await arena.probe(x) == []
        assert arena.snapshot() == arena.baseline


@pytest.mark.parametrize("who", ["Cy@spell", "stranger", "spectator"])
async def test_oversized_frame_closes_only_the_sender(fuzz_server, who):
    async with arena_of(fuzz_server) as arena:
        s = arena.senders[who]
        await s.client.send('{"type": "chat", "text": "' + "x" * MAX_FRAME_BYTES + '"}')
        code, _ = await s.client.wait_closed()
        assert code == 1009
        await _only_presence_changed(arena, s)


async def test_flood_closes_only_the_flooder(start_server):
    server = await start_server(rate=20, burst=40, address_rate=1e9, address_burst=1e9)
    async with arena_of(server) as arena:
        s = arena.senders["Cy@spell"]
        mark = len(s.client.received)
        with contextlib.suppress(Exception):
            for i in range(200):
                await s.client.send(f'{{"type": "write_spell", "word": "w{i}"}}')
        code, reason = await s.client.wait_closed()
        assert code == 1008 and "too many messages" in (reason or "")
        flood = s.client.received[mark:]
        assert isinstance(flood[-1], m.Bye) and "too many messages" in flood[-1].reason
        assert 30 <= len(flood) - 1 <= 60  # the burst's errors, then the goodbye
        assert all(isinstance(e, m.Error) and e.code == "not_your_turn" for e in flood[:-1])
        await _only_presence_changed(arena, s)


async def _only_presence_changed(arena: Arena, s: Sender) -> None:
    """After ``s`` was cut off: the others got at most presence news; no game changed; the
    seat resumes with its token and the room plays on."""
    base = arena.baseline
    table = arena.tables["spell"]
    if s.kind == "seat":
        await table[0].wait_view(lambda v: not v.players[s.seat].connected)
    with trio.fail_after(5):
        await poll_until(lambda: len(arena.server.connections) == base["connections"] - 1)
    now = arena.snapshot()
    for code, before in base["rooms"].items():
        after = now["rooms"][code]
        if code != s.room:
            assert after == before
            continue
        # The game itself is untouched; only the fact that a seat's connection went is logged.
        room = arena.server.rooms[code]
        added = read_log(room.writer.path).records[before[3] + 1 :]
        assert {r.type for r in added} <= {"presence_changed"}, added
        game_after = copy.deepcopy(after[1])
        if game_after is not None:
            game_after.away = set(before[1].away)
        assert game_after == before[1]
    for x in arena.everyone:
        if x is s.client:
            continue
        for msg in await arena.probe(x):  # presence news for the sender's room only
            assert x.room == s.room and isinstance(msg, m.Update), (x.name, msg)
            assert msg.receipt == base["rooms"][x.room][2], msg
    if s.kind == "seat":
        async with open_client(arena.server.url, "Cy again") as back:
            await back.resume(s.room, s.client.token)  # type: ignore[arg-type]
            await back.wait_view(lambda v: v.players[2].connected and v.you == 2)
            await table[1].spell("mountain")
            await back.wait_view(lambda v: v.players[1].spell == "mountain")
