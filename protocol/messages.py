"""The wire protocol: msgspec tagged unions, JSON over WebSocket text frames.

Inbound messages (client -> server) are strict: unknown fields, wrong types and over-long text are
rejected on decode. Outbound messages (server -> client) tolerate new fields so clients can be older
than the server. docs/PROTOCOL.md describes every message; keep the two in step.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from conjure.protocol.deck import Card, card_text_problem
from conjure.protocol.errors import ErrorCode
from conjure.protocol.events import Limits, Rule, Variant
from conjure.protocol.names import MAX_NAME_LENGTH
from conjure.protocol.structs import FrozenStruct
from conjure.protocol.text import shown_line_problem

PROTOCOL_VERSION = 1
MAX_FRAME_BYTES = 64 * 1024

# Patterns end in ``\Z``, not ``$``: msgspec runs ``re.search``, and ``$`` also matches before
# a final newline.
#: Only lengths on decode: the server enforces names (protocol.names) to answer ``bad_name``.
Name = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_NAME_LENGTH)]
RoomCode = Annotated[str, msgspec.Meta(min_length=4, max_length=4, pattern=r"^[A-Za-z]{4}\Z")]
Password = Annotated[str, msgspec.Meta(max_length=64)]
Token = Annotated[str, msgspec.Meta(min_length=16, max_length=128, pattern=r"^[A-Za-z0-9_-]+\Z")]
WordText = Annotated[str, msgspec.Meta(max_length=200)]  # the 40-character rule is a game rule
Hex64 = Annotated[str, msgspec.Meta(pattern=r"^[0-9a-f]{64}\Z")]
Seat = Annotated[int, msgspec.Meta(ge=0, le=7)]
#: Chat texts and vote reasons are checked for unshown characters (protocol.text) by the
#: ``__post_init__`` of the messages that carry them, which makes decoding refuse them.
ChatText = Annotated[str, msgspec.Meta(min_length=1, max_length=300)]
Reason = Annotated[str, msgspec.Meta(max_length=200)]
#: A player's public id as views give it (``PlayerView.id``: "p" and 8 hex digits today).
PlayerId = Annotated[str, msgspec.Meta(min_length=1, max_length=40)]
Seconds = Annotated[float, msgspec.Meta(ge=5, le=3600)]


class InLimits(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Per-phase time limits as a client may set them (None = no clock)."""

    choose: Seconds | None = 90.0
    spell: Seconds | None = 60.0
    mark: Seconds | None = 90.0
    commit: Seconds | None = 120.0
    reveal: Seconds | None = 30.0
    review: Seconds | None = 120.0

    def to_limits(self) -> Limits:
        return Limits(**msgspec.structs.asdict(self))


class RoomSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    variant: Variant = "standard"
    deck: Literal["default", "default+custom", "custom"] = "default"
    custom_cards: Annotated[list[Card], msgspec.Meta(max_length=200)] = []
    limits: InLimits = InLimits()
    spectators: bool = True
    #: Most spectators the room admits (the server may allow fewer: its --max-spectators).
    max_spectators: Annotated[int, msgspec.Meta(ge=0, le=1000)] = 20
    #: House rules the game is played and scored by (protocol.house names; docs/RULES.md H1-H3).
    house_rules: Annotated[
        list[Annotated[str, msgspec.Meta(max_length=40)]], msgspec.Meta(max_length=8)
    ] = []


# ------------------------------------------------------------------ client -> server


def chat_problem(text: str) -> str | None:
    """Why ``text`` cannot be sent as chat, or None (emoji joiners and selectors are fine)."""
    return shown_line_problem(text, "Chat text", emoji=True)


def reason_problem(text: str) -> str | None:
    """Why ``text`` cannot be a vote reason, or None (none at all is fine: it is optional)."""
    return shown_line_problem(text, "The vote reason") if text else None


def _check_cards(settings: RoomSettings) -> None:
    """Raise ValueError (a ValidationError when decoding) for a custom card with unshown text.

    Checked on the inbound messages, not on ``Card`` itself, so views and logs decode whatever
    this Python's Unicode tables say about characters assigned later.
    """
    for i, card in enumerate(settings.custom_cards, 1):
        if problem := card_text_problem(card.text, f"Custom card {i}'s text"):
            raise ValueError(problem)


class ClientMsg(FrozenStruct, tag_field="type", forbid_unknown_fields=True):
    """Base of every inbound message."""


#: What a client may ask for in ``hello`` (protocol.patch.FEATURE); a word the server does not
#: know is ignored, so a newer client can talk to an older server.
Feature = Annotated[str, msgspec.Meta(max_length=32)]

#: The ``hello`` feature of a program that plays on its own (the computer players): the seats its
#: connection takes are shown as a computer's (``PlayerView.computer``). Said by the client, not
#: proven: it is a courtesy to the people at the table, like a name.
COMPUTER = "computer"


class Hello(ClientMsg, tag="hello"):
    protocol: int
    client: Annotated[str, msgspec.Meta(max_length=80)] = ""
    features: Annotated[list[Feature], msgspec.Meta(max_length=16)] = []  # noqa: RUF012 (a struct field: msgspec copies the default)


class CreateRoom(ClientMsg, tag="create_room"):
    name: Name
    password: Password | None = None
    settings: RoomSettings = RoomSettings()

    def __post_init__(self) -> None:
        _check_cards(self.settings)


class JoinRoom(ClientMsg, tag="join_room"):
    room: RoomCode
    name: Name
    password: Password | None = None


class ResumeSeat(ClientMsg, tag="resume_seat"):
    room: RoomCode
    token: Token


class Watch(ClientMsg, tag="watch"):
    room: RoomCode
    password: Password | None = None


class ChangeSettings(ClientMsg, tag="change_settings"):
    settings: RoomSettings

    def __post_init__(self) -> None:
        _check_cards(self.settings)


class SeatOrder(ClientMsg, tag="seat_order"):
    order: Annotated[list[Seat], msgspec.Meta(max_length=8)]


class StartGame(ClientMsg, tag="start_game"):
    pass


class ChooseCard(ClientMsg, tag="choose_card"):
    card: Annotated[int, msgspec.Meta(ge=0, le=7)]


class WriteSpell(ClientMsg, tag="write_spell"):
    word: WordText


class MarkBoards(ClientMsg, tag="mark_boards"):
    boards: Annotated[list[Seat], msgspec.Meta(max_length=8)]


class CommitSummon(ClientMsg, tag="commit_summon"):
    commitment: Hex64


class RevealSummon(ClientMsg, tag="reveal_summon"):
    word: WordText
    nonce: Hex64


class ChallengeWord(ClientMsg, tag="challenge"):
    seat: Seat
    rule: Rule


class ProposeSame(ClientMsg, tag="propose_same"):
    a: Seat
    b: Seat


class CastVote(ClientMsg, tag="vote"):
    proposal: Annotated[int, msgspec.Meta(ge=0, le=999)]
    yes: bool
    reason: Reason = ""

    def __post_init__(self) -> None:
        if problem := reason_problem(self.reason):
            raise ValueError(problem)


class ReviewDone(ClientMsg, tag="done"):
    pass


class PauseGame(ClientMsg, tag="pause"):
    pass


class ResumeGame(ClientMsg, tag="resume"):
    pass


class KickPlayer(ClientMsg, tag="kick"):
    seat: Seat
    #: The id of the player meant (``PlayerView.id``). In the lobby a seat is a place in the
    #: seating, which shifts when someone leaves: given, and the seat now holds someone else,
    #: the kick is refused (``seat_changed``) rather than removing the wrong player.
    player_id: PlayerId | None = None


class SkipPlayer(ClientMsg, tag="skip"):
    seat: Seat


class Leave(ClientMsg, tag="leave"):
    pass


class DealSeed(ClientMsg, tag="deal_seed"):
    """A seat's random contribution to the shuffle, sent in answer to ``deal_open``."""

    seed: Hex64


class Resync(ClientMsg, tag="resync"):
    """A patching client whose view fell out of step (a patch whose ``base`` is not the view it
    holds): the server answers with a full ``update``."""


class SendChat(ClientMsg, tag="chat"):
    text: ChatText

    def __post_init__(self) -> None:
        if problem := chat_problem(self.text):
            raise ValueError(problem)


AnyClientMsg = (
    Hello
    | CreateRoom
    | JoinRoom
    | ResumeSeat
    | Watch
    | ChangeSettings
    | SeatOrder
    | StartGame
    | ChooseCard
    | WriteSpell
    | MarkBoards
    | CommitSummon
    | RevealSummon
    | ChallengeWord
    | ProposeSame
    | CastVote
    | ReviewDone
    | PauseGame
    | ResumeGame
    | KickPlayer
    | SkipPlayer
    | Leave
    | SendChat
    | DealSeed
    | Resync
)

# ------------------------------------------------------------------ server -> client


class Receipt(msgspec.Struct, frozen=True, omit_defaults=True):
    """The log position an update reflects: keep the latest, audit with ``conjure replay``.

    At the start of each round and at the game's end the server signs it (protocol.receiptsig):
    ``key`` is the server's public key and ``sig`` its signature; other receipts carry neither.
    """

    seq: int
    hash: str
    key: str | None = None
    sig: str | None = None


class PlayerView(msgspec.Struct, kw_only=True):
    seat: int
    id: str
    name: str
    colour: str
    connected: bool = False
    host: bool = False
    #: The seat was last taken by a computer player (its client said ``COMPUTER`` in hello).
    computer: bool = False
    you: bool = False
    kicked: bool = False
    skipped: bool = False
    spell: str | None = None
    passed: bool = False
    marked: bool = False
    committed: bool = False
    revealed: bool = False
    summon: str | None = None
    compared: str | None = None
    valid: bool | None = None
    invalid_reason: str | None = None
    flags: list[str] = []
    done: bool = False
    score: int = 0


class CardView(msgspec.Struct, kw_only=True):
    index: int
    text: str
    stars: int
    used: bool = False


class ProposalView(msgspec.Struct, kw_only=True):
    id: int
    kind: str
    by: int
    seats: list[int]
    words: list[str]
    rule: str | None = None
    voters: list[int] = []
    votes: dict[int, bool] = {}
    reasons: dict[int, str] = {}
    carried: bool | None = None


class PointView(msgspec.Struct, kw_only=True):
    points: int
    why: str
    rule: str


class ResultView(msgspec.Struct, kw_only=True):
    round: int
    conjurer: int
    card: CardView | None = None
    case: str
    points: dict[int, int] = {}
    reasons: dict[int, list[PointView]] = {}
    invalid: dict[int, str] = {}
    words: dict[int, str] = {}
    reason: str = ""


class View(msgspec.Struct, kw_only=True):
    """Everything one viewer may see. Built by one server function for every payload."""

    room: str
    game_id: str | None = None
    phase: str = "lobby"
    you: int | None = None
    host: int | None = None
    settings: RoomSettings = RoomSettings()
    players: list[PlayerView] = []
    cards: list[CardView] = []
    round: int = 0
    rounds: int = 0
    conjurer: int | None = None
    card: CardView | None = None
    turn: int | None = None
    deadline: float | None = None
    remaining: float | None = None
    paused: bool = False
    proposals: list[ProposalView] = []
    #: In the review: the seats whose standing summoning words count as one word as things
    #: stand (the same word, or ruled the same thing), each group of two or more.
    counted_as_one: list[list[int]] = []
    results: list[ResultView] = []
    winners: list[int] = []
    spectators: int = 0
    #: ``phase`` is ``over`` because nobody was connected for a while (docs/RULES.md A7): no winners
    abandoned: bool = False


class ServerMsg(FrozenStruct, tag_field="type"):
    """Base of every outbound message."""


class Welcome(ServerMsg, tag="welcome"):
    protocol: int
    server: str
    #: The features of the client's hello this server uses on this connection.
    features: list[str] = []  # noqa: RUF012 (a struct field: msgspec copies the default)


class Seated(ServerMsg, tag="seated"):
    room: str
    seat: int
    player_id: str
    token: str


class Watching(ServerMsg, tag="watching"):
    room: str


class EarlierChat(FrozenStruct):
    """A chat line said before a connection's first view from a room (``Update.earlier_chat``)."""

    name: str
    text: str
    seat: int | None = None
    #: How many of that update's ``earlier`` lines were said before it: it goes after them.
    after: int = 0


class Update(ServerMsg, tag="update"):
    view: View
    receipt: Receipt | None = None
    feed: list[str] = []  # noqa: RUF012 (a struct field: msgspec copies the default)
    #: Only in a connection's first view from a room: the room's table talk before it (at most
    #: ``EARLIER_LINES``, oldest first), for a client that comes back with nothing on screen.
    earlier: list[str] = []  # noqa: RUF012
    #: Beside ``earlier``: the room's chat before that view (at most ``EARLIER_LINES``, oldest
    #: first), each placed among ``earlier``'s lines. Seen: a player whose terminal was closed
    #: came back to the table talk but not to what the others had said.
    earlier_chat: list[EarlierChat] = []  # noqa: RUF012
    #: The number of this view on this connection, given only to a patching client: the next
    #: ``patch`` names it as its ``base``.
    n: int | None = None


#: The most lines of earlier table talk a first view carries (``Update.earlier``), and the
#: most chat lines (``Update.earlier_chat``).
EARLIER_LINES = 40
#: What a first view carries of the room's past: its ``earlier`` and its ``earlier_chat``.
Earlier = tuple[list[str], list[EarlierChat]]
#: A view that carries none (every one but a connection's first from a room); never changed.
NO_EARLIER: Earlier = ([], [])


class Patch(ServerMsg, tag="patch"):
    """What changed in the viewer's view since view ``base``: apply ``ops`` (RFC 6902, see
    protocol.patch) to that view to get view ``n``. Sent only to a client that asked for
    patches; ``receipt`` and ``feed`` are those of the update it stands for."""

    base: int
    n: int
    ops: list[dict[str, Any]]
    receipt: Receipt | None = None
    feed: list[str] = []  # noqa: RUF012 (a struct field: msgspec copies the default)


class Error(ServerMsg, tag="error"):
    """``code`` decodes as any string (a newer server may know more codes); build one with ``error``."""

    code: str
    message: str
    ref: str | None = None


def error(code: ErrorCode, message: str, ref: str | None = None) -> Error:
    """An ``Error`` as the server sends it: the type checker holds ``code`` to ``ErrorCode``."""
    return Error(code=code, message=message, ref=ref)


class Chat(ServerMsg, tag="chat"):
    name: str
    text: str
    seat: int | None = None


class DealOpen(ServerMsg, tag="deal_open"):
    """The host started the game: answer with ``deal_seed`` before ``deadline`` (protocol.deal)."""

    commitment: str
    deadline: float


class Bye(ServerMsg, tag="bye"):
    reason: str


AnyServerMsg = Welcome | Seated | Watching | Update | Patch | Error | Chat | DealOpen | Bye

client_decoder = msgspec.json.Decoder(AnyClientMsg)
server_decoder = msgspec.json.Decoder(AnyServerMsg)
encoder = msgspec.json.Encoder()
