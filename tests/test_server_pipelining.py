"""A client need not wait for one answer before it sends its next message: the server reads on
while the room works, and still answers every message in the order it was sent."""

from __future__ import annotations

import contextlib

import trio
from wsclient import open_client

from conjure.protocol import messages as m
from conjure.server.room import Room


def _answers(received: list[m.ServerMsg]) -> list[str]:
    """The chats and errors a client got, in order, as short words."""
    out = []
    for msg in received:
        if isinstance(msg, m.Chat):
            out.append(msg.text)
        elif isinstance(msg, m.Error):
            out.append(msg.code)
    return out


def slow_room(room: Room, delay: float = 0.01) -> None:
    """The room takes its time over every chat (as over a slow disk): later messages wait."""
    handle = room._on_request

    async def slowly(conn, msg):
        if isinstance(msg, m.SendChat):
            await trio.sleep(delay)
        await handle(conn, msg)

    room._on_request = slowly  # type: ignore[method-assign]


async def test_messages_sent_without_waiting_are_answered_in_the_order_sent(start_server):
    server = await start_server(chat_burst=100)  # (22 lines at once: over a room's chat burst)
    async with contextlib.AsyncExitStack() as stack:
        ann = await stack.enter_async_context(open_client(server.url, "Ann"))
        bob = await stack.enter_async_context(open_client(server.url, "Bob"))
        code = await ann.create()
        slow_room(server.rooms[code])
        # Bob joins and talks at once: nothing he sends waits for an answer.
        await bob.send(m.JoinRoom(room=code, name="Bob"))
        chats = [f"chat {i}" for i in range(20)]
        for text in chats:
            await bob.send(m.SendChat(text=text))
        await bob.send("{")  # refused at the door, not by the room
        await bob.send(m.SendChat(text="after the bad one"))
        await bob.send({"type": "no_such_message"})
        await bob.send(m.SendChat(text="last"))
        await bob.recv_until(lambda x: isinstance(x, m.Chat) and x.text == "last")
        assert _answers(bob.received) == [
            *chats,
            "malformed",
            "after the bad one",
            "invalid_message",
            "last",
        ]
        # Ann, in the same room, heard every chat once, in order.
        await ann.recv_until(lambda x: isinstance(x, m.Chat) and x.text == "last")
        assert _answers(ann.received) == [*chats, "after the bad one", "last"]


async def test_a_message_right_after_a_join_goes_to_the_room_joined(server):
    """Joining decides where the next message goes: it is read only once the join is done."""
    async with contextlib.AsyncExitStack() as stack:
        ann = await stack.enter_async_context(open_client(server.url, "Ann"))
        bob = await stack.enter_async_context(open_client(server.url, "Bob"))
        code = await ann.create()
        await bob.send(m.JoinRoom(room=code, name="Bob"))
        await bob.send(m.SendChat(text="hi"))
        await ann.recv_until(lambda x: isinstance(x, m.Chat) and x.text == "hi")
        await bob.recv_until(lambda x: isinstance(x, m.Chat) and x.text == "hi")
        assert not any(isinstance(x, m.Error) for x in bob.received)


async def test_what_was_sent_before_a_close_is_still_handled(server):
    """Bob says two things and hangs up at once: the room still hears both, in order."""
    async with contextlib.AsyncExitStack() as stack:
        ann = await stack.enter_async_context(open_client(server.url, "Ann"))
        code = await ann.create()
        async with open_client(server.url, "Bob") as bob:
            await bob.join(code)
            slow_room(server.rooms[code])
            await bob.send(m.SendChat(text="one"))
            await bob.send(m.SendChat(text="bye"))
        await ann.recv_until(lambda x: isinstance(x, m.Chat) and x.text == "bye")
        assert [x.text for x in ann.received if isinstance(x, m.Chat)] == ["one", "bye"]


async def test_a_flooder_is_closed_only_after_what_it_sent_within_its_rate(start_server):
    """Bob sends 8 chats at once with room for 6: the 6 are handled and heard, then his
    goodbye comes after their answers, and nothing after the flood is handled."""
    server = await start_server(rate=1.0, burst=6.0)
    async with contextlib.AsyncExitStack() as stack:
        ann = await stack.enter_async_context(open_client(server.url, "Ann"))
        bob = await stack.enter_async_context(open_client(server.url, "Bob"))
        code = await ann.create()
        await bob.join(code)
        slow_room(server.rooms[code], 0.1)  # the room is still busy when the flood is seen
        start = len(bob.received)
        for i in range(8):
            with contextlib.suppress(Exception):
                await bob.send(m.SendChat(text=f"c{i}"))
        await bob.wait_closed(timeout=10)
        heard = [x.text for x in ann.received if isinstance(x, m.Chat)]
        assert heard and heard == [f"c{i}" for i in range(len(heard))], heard
        own = [
            x.text if isinstance(x, m.Chat) else "bye"
            for x in bob.received[start:]
            if isinstance(x, (m.Chat, m.Bye))
        ]
        assert own == [*heard, "bye"], own
