"""The server's own WebSocket frames (``server.wsframes``), checked against wsproto: every frame a
wsproto client sends is read back whole however its bytes are cut; every frame the server
writes is what wsproto's server would write and reads back on wsproto's client; and each rule
of RFC 6455 a client can break ends the connection with the code the RFC names."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from wsproto import ConnectionType, WSConnection
from wsproto.events import (
    AcceptConnection,
    BytesMessage,
    CloseConnection,
    Message,
    Ping,
    Pong,
    Request,
    TextMessage,
)

from conjure.server import wsframes
from conjure.server.wsframes import (
    MAX_FRAGMENTS,
    Close,
    FrameReader,
    TooManyFragments,
    close_frame,
    text_frame,
)

MAX = 65536


def open_pair() -> tuple[WSConnection, WSConnection]:
    """A wsproto client and server past the handshake."""
    client, server = WSConnection(ConnectionType.CLIENT), WSConnection(ConnectionType.SERVER)
    server.receive_data(client.send(Request(host="127.0.0.1", target="/")))
    next(server.events())
    client.receive_data(server.send(AcceptConnection()))
    next(client.events())
    return client, server


def feed_in_pieces(reader: FrameReader, data: bytes, cuts: list[int]) -> tuple[list, int]:
    found, began, start = [], 0, 0
    for cut in [*sorted({c % (len(data) + 1) for c in cuts}), len(data)]:
        items, n, violation = reader.feed(data[start:cut])
        assert violation is None
        found += items
        began += n
        start = cut
    return found, began


def masked(opcode: int, payload: bytes, *, fin: bool = True, b0_extra: int = 0) -> bytes:
    """A client frame built by hand (for what no library would send)."""
    mask = b"\x01\x02\x03\x04"
    n = len(payload)
    if n < 126:
        head = bytes((0x80 * fin | opcode | b0_extra, 0x80 | n))
    elif n < 65536:
        head = bytes((0x80 * fin | opcode | b0_extra, 0x80 | 126)) + n.to_bytes(2, "big")
    else:
        head = bytes((0x80 * fin | opcode | b0_extra, 0x80 | 127)) + n.to_bytes(8, "big")
    return head + mask + wsframes.unmask(payload, mask)


#: (payload size, fragments): each length encoding, whole and in pieces.
MESSAGES = st.lists(
    st.tuples(st.sampled_from([0, 1, 125, 126, 200, 65535, 65536]), st.integers(1, 4)),
    min_size=1,
    max_size=6,
)


@settings(max_examples=60, deadline=None)
@given(MESSAGES, st.lists(st.integers(0, 10**6), max_size=12), st.booleans(), st.booleans())
def test_every_message_wsproto_sends_is_read_whole_however_the_bytes_are_cut(
    messages, cuts, pings, binary
):
    client, _ = open_pair()
    data = b""
    want: list = []
    for size, parts in messages:
        if pings:
            data += client.send(Ping(b"p"))
            want.append(wsframes.Ping(b"p"))
        piece = max(1, size // parts)
        text = "é" * (size // 2) + "x" * (size % 2) if not binary else "x" * size
        body = text.encode() if binary else text
        chunks = [body[i : i + piece] for i in range(0, len(body), piece)] or [body[:0]]
        for k, chunk in enumerate(chunks):
            data += client.send(Message(data=chunk, message_finished=k == len(chunks) - 1))
        want.append(body)
    reader = FrameReader(2 * MAX)
    found, began = feed_in_pieces(reader, data, cuts)
    assert found == want
    assert began == reader.frames
    assert reader.fragments == 0  # every message finished


def test_pongs_and_a_close_are_read_with_their_payloads():
    client, _ = open_pair()
    data = client.send(Pong(b"hi")) + client.send(CloseConnection(code=1001, reason="bye"))
    found, began, violation = FrameReader(MAX).feed(data)
    assert (found, began, violation) == ([wsframes.Pong(b"hi"), Close(1001, "bye")], 2, None)
    found, _, _ = FrameReader(MAX).feed(masked(wsframes.CLOSE, b""))
    assert found == [Close(None, "")]


@pytest.mark.parametrize("size", [0, 125, 126, 65535, 65536, 70000])
def test_the_servers_text_frames_are_wsprotos_and_read_back_on_its_client(size):
    client, server = open_pair()
    text = "é" * (size // 2) + "x" * (size % 2)
    data = text_frame(text.encode())
    assert data == server.send(TextMessage(data=text))
    client.receive_data(data)
    assert "".join(e.data for e in client.events() if isinstance(e, TextMessage)) == text


def test_a_close_frame_carries_its_code_and_a_reason_cut_to_fit():
    client, _ = open_pair()
    client.receive_data(close_frame(1008, "é" * 100))  # 200 bytes: more than a control frame
    (event,) = [e for e in client.events() if isinstance(e, CloseConnection)]
    assert event.code == 1008 and event.reason.endswith("...") and len(event.reason) < 100


VIOLATIONS = [
    ("unmasked", b"\x81\x02hi", 1002),
    ("reserved bits", masked(wsframes.TEXT, b"hi", b0_extra=0x40), 1002),
    ("unknown opcode", masked(0x3, b"hi"), 1002),
    ("fragmented ping", masked(wsframes.PING, b"", fin=False), 1002),
    ("long ping", masked(wsframes.PING, b"x" * 126), 1002),
    ("lone continuation", masked(wsframes.CONTINUATION, b"hi"), 1002),
    (
        "message inside a message",
        masked(wsframes.TEXT, b"a", fin=False) + masked(wsframes.TEXT, b"b"),
        1002,
    ),
    ("16-bit length for 5 bytes", b"\x81\xfe\x00\x05abcd" + b"x" * 5, 1002),
    ("not UTF-8", masked(wsframes.TEXT, b"\xff\xfe"), 1007),
    ("close of one byte", masked(wsframes.CLOSE, b"\x03"), 1002),
    ("close code 1005", masked(wsframes.CLOSE, (1005).to_bytes(2, "big")), 1002),
    ("close reason not UTF-8", masked(wsframes.CLOSE, b"\x03\xe8\xff"), 1007),
    ("over the size limit", masked(wsframes.BINARY, b"x" * (MAX + 1)), 1009),
    (
        "over the limit in fragments",
        masked(wsframes.TEXT, b"x" * MAX, fin=False) + masked(wsframes.CONTINUATION, b"x"),
        1009,
    ),
]


@pytest.mark.parametrize(
    ("data", "code"), [v[1:] for v in VIOLATIONS], ids=[v[0] for v in VIOLATIONS]
)
def test_a_frame_that_breaks_the_protocol_ends_the_connection_with_its_code(data, code):
    ok = masked(wsframes.TEXT, b"before")
    found, _, violation = FrameReader(MAX).feed(ok + data)
    assert found == ["before"]  # what came before it is still read
    assert violation is not None and violation.code == code


def test_an_oversized_message_is_refused_at_its_header_before_its_payload():
    header = b"\x82\xff" + (2**40).to_bytes(8, "big") + b"mask"
    _, began, violation = FrameReader(MAX).feed(header)
    assert began == 1 and violation is not None and violation.code == 1009


def test_a_message_of_too_many_fragments_is_refused_at_the_one_too_many():
    client, _ = open_pair()
    reader = FrameReader(MAX)
    data = client.send(TextMessage(data="", message_finished=False))
    for _ in range(MAX_FRAGMENTS - 1):
        data += client.send(Ping(b""))  # control frames between fragments are no fragments
        data += client.send(TextMessage(data="", message_finished=False))
    found, began, violation = reader.feed(data)
    assert (began, violation) == (2 * MAX_FRAGMENTS - 1, None)
    assert len(found) == MAX_FRAGMENTS - 1  # the pings
    _, _, violation = reader.feed(client.send(TextMessage(data="", message_finished=False)))
    assert isinstance(violation, TooManyFragments) and violation.code == 1008
    # Many whole messages are no fragments of one.
    client, _ = open_pair()
    whole = client.send(BytesMessage(data=b"ab", message_finished=True))
    found, began, violation = FrameReader(MAX).feed(whole * (MAX_FRAGMENTS + 10))
    assert (len(found), began, violation) == (MAX_FRAGMENTS + 10, MAX_FRAGMENTS + 10, None)


def test_a_limited_feed_begins_no_more_frames_and_keeps_the_rest():
    reader = FrameReader(MAX)
    pings = b"".join(masked(wsframes.PING, b"%d" % i) for i in range(25))
    found, began, violation = reader.feed(pings, 10)
    assert (len(found), began, violation, reader.more) == (10, 10, None, True)
    rest: list = []
    while reader.more:
        more, began, violation = reader.feed(b"", 10)
        assert began <= 10 and violation is None
        rest += more
    assert [p.payload for p in found + rest] == [b"%d" % i for i in range(25)]
