"""``conjure play``: the full-screen terminal client.

prompt_toolkit runs on asyncio, the network on Trio: Trio runs as a *guest* on prompt_toolkit's
asyncio loop (``trio.lowlevel.start_guest_run``, Trio's "guest mode"), both in one thread.
The Trio side owns the program's lifetime: it starts the UI as an asyncio task, runs the
connection in a nursery, and cancels the nursery when the UI ends. Keys reach the network
through ``send_nowait`` on a memory channel; the network reaches the screen by updating the
Session and calling ``app.invalidate()``.

The layout is five windows: the header, the middle (drawn by ``client.screen.middle`` for the
exact size it gets), the status line, the input line and the key help. Before each drawing the
input line is given to the question now asked (``Session.settle_input``): text typed for a
question that closed is never carried into the next one. The exit status is not 0 when no room
was ever joined.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import shlex
import signal
import sys
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field

import msgspec
import trio
from prompt_toolkit.application import Application
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.document import Document
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.keys import Keys
from prompt_toolkit.layout import HSplit, Layout, Window
from prompt_toolkit.layout.controls import BufferControl, UIContent, UIControl
from prompt_toolkit.layout.dimension import Dimension
from prompt_toolkit.layout.processors import BeforeInput, ConditionalProcessor, PasswordProcessor
from prompt_toolkit.output import ColorDepth

from conjure.client import screen
from conjure.client.inputs import pasted_line
from conjure.client.net import Connection
from conjure.client.pins import KnownServers, Trust, pin_problem
from conjure.client.session import Session, name_problem, parse_limits
from conjure.client.statefile import ENV_LOCAL_SERVER, RECEIPT_LINE, StateDir, home_short
from conjure.protocol.cells import wrap_words
from conjure.protocol.deck import DeckError, load_deck
from conjure.protocol.house import HOUSE_RULES, canonical
from conjure.protocol.messages import ClientMsg, Leave, RoomSettings
from conjure.protocol.program import program_here
from conjure.protocol.wording import NAME_PLACEHOLDER, final_words

DEFAULT_URL = "ws://localhost:8765"
#: Seconds a leave sent as the client quits may take to reach the server (``App._left``).
LEAVE_GRACE = 1.5
CTRL_C_CLEARED = "Line cleared (Ctrl-C on an empty line, or Ctrl-Q, quits)."
CTRL_V_PASTE = "Ctrl-V does not paste here: use your terminal's paste (often Ctrl-Shift-V)."
CTRL_Z_NOTHING = "Ctrl-Z does nothing here: Ctrl-Q quits."


class SizedText(UIControl):
    """Text drawn for the exact size its window gets (``draw(width, height)`` -> lines).

    The screen module lays out the middle of the screen itself, line by line, so it must know
    how many lines it has; prompt_toolkit passes the size to ``create_content``.
    """

    def __init__(self, draw: Callable[[int, int], list[StyleAndTextTuples]]) -> None:
        self.draw = draw

    def create_content(self, width: int, height: int) -> UIContent:
        lines = self.draw(width, height)
        return UIContent(get_line=lambda i: lines[i], line_count=len(lines), show_cursor=False)

    def is_focusable(self) -> bool:
        return False


@dataclass
class Options:
    url: str = DEFAULT_URL
    name: str | None = None
    room: str | None = None
    create: bool = False
    password: str | None = None
    spectator: bool = False
    pin: str | None = None  # sha256:... the wss:// server's certificate must have
    state_dir: str | None = None
    settings: RoomSettings = field(default_factory=RoomSettings)
    ask_settings: bool = True


class ClientApp:
    """One running client: the Session, the prompt_toolkit Application and the Connection."""

    def __init__(self, opts: Options, *, input=None, output=None) -> None:
        self.opts = opts
        self.store = StateDir(opts.state_dir)
        self._send_channel, self._receive_channel = trio.open_memory_channel[ClientMsg](256)
        #: Set when the network changes the session, while ``_left`` waits for a goodbye.
        self._changed: trio.Event | None = None
        self.session = Session(
            server=opts.url,
            store=self.store,
            send=self._send,
            name=opts.name,
            room=opts.room,
            create=opts.create,
            password=opts.password,
            spectator=opts.spectator,
            settings=opts.settings,
            ask_settings=opts.ask_settings,
        )
        self.connection: Connection | None = None
        self.buffer = Buffer(multiline=False)
        self._width_override: int | None = None
        self._page = 10  # lines PgUp/PgDn move: what the middle showed last
        self.app: Application[int] = self._build_app(input, output)
        self.ui_task: asyncio.Future | None = None
        self._trio_cancel: trio.CancelScope | None = None
        self._trio_token: trio.lowlevel.TrioToken | None = None

    # ---------------------------------------------------------------- UI -> network

    def _send(self, msg: ClientMsg) -> None:
        try:
            self._send_channel.send_nowait(msg)
        except (trio.WouldBlock, trio.BrokenResourceError, trio.ClosedResourceError):
            self.session.say("error", "Could not send: the connection is busy. Try again.")

    # ---------------------------------------------------------------- layout

    def _width(self) -> int:
        if self._width_override is not None:
            return self._width_override
        try:
            return self.app.output.get_size().columns
        except Exception:
            return 80

    def _build_app(self, input, output) -> Application[int]:
        s = self.session

        keys_mode = Condition(lambda: s.wants_keys() and not self.buffer.text)

        kb = KeyBindings()

        # Ctrl-D on an empty line quits too, as it ends a shell (a newcomer pressed it and
        # nothing happened); on a line with text it keeps the editor's own meaning.
        empty_line = Condition(lambda: not self.buffer.text)

        @kb.add("c-c", filter=empty_line, eager=True)
        @kb.add("c-q", eager=True)
        @kb.add("c-d", filter=empty_line, eager=True)
        @kb.add(Keys.SIGINT)
        def _quit(event) -> None:
            if s.request_quit():
                event.app.exit(result=0)
            else:
                self.settle()
                event.app.invalidate()

        @kb.add("c-c", filter=~empty_line, eager=True)
        def _clear_first(event) -> None:
            # Many press Ctrl-C to clear a line: with text typed it quit the game at once, the
            # word lost and the seat away on its turn (found by review). It clears the line.
            self.buffer.text = ""
            s.say("info", CTRL_C_CLEARED)

        @kb.add("c-v", eager=True)
        @kb.add("c-z", eager=True)
        def _not_here(event) -> None:
            # Ctrl-V was the editor's quoted insert (the next key went in as it was), Ctrl-Z a
            # control character in the word, refused as not shown (found by review).
            s.say("info", CTRL_V_PASTE if event.key_sequence[0].key == "c-v" else CTRL_Z_NOTHING)

        @kb.add("c-u", eager=True)
        def _clear(event) -> None:
            # The help says "Ctrl-U: clear it": the whole line, wherever the cursor is (the
            # editor's own Ctrl-U kept what stood right of the cursor; seen by a newcomer).
            self.buffer.text = ""

        @kb.add("enter", eager=True)
        def _enter(event) -> None:
            text = self.buffer.text
            self._guard(lambda: self._on_enter(text))

        @kb.add("escape", eager=True)
        def _escape(event) -> None:
            self._guard(lambda: s.key("escape"))

        for name in ("pageup", "pagedown", "f1", "f2", "f3", "f4"):

            @kb.add(name, eager=True)
            def _page(event, name=name) -> None:
                self._guard(lambda: s.key(name, page=self._page))

        @kb.add(Keys.BracketedPaste, eager=True)
        def _paste(event) -> None:
            # The input is one line: a pasted block's line breaks went into it, every Enter was
            # refused for them, and Ctrl-U cleared only the last line (seen by a newcomer).
            self.buffer.insert_text(pasted_line(event.data))

        # An r meant for "r: try again" as the connection came back by itself (a key bound by
        # name wins over Keys.Any, and over the line editor's own typing).
        back_unasked = Condition(lambda: s.back_unasked is not None)

        @kb.add("r", filter=back_unasked, eager=True)
        @kb.add("R", filter=back_unasked, eager=True)
        def _late_retry(event) -> None:
            if not s.late_retry_key():
                if s.wants_keys() and not self.buffer.text:
                    self._guard(lambda: s.key(event.data))
                else:
                    self.buffer.insert_text(event.data)

        @kb.add(Keys.Any, filter=keys_mode, eager=True)
        def _key(event) -> None:
            ch = event.data
            if ch == "/":
                self.buffer.insert_text(ch)
            elif len(ch) == 1 and ch.isprintable():
                self._guard(lambda: s.key(ch))

        secret = Condition(lambda: s.join_field == "password" and not s.joined)
        input_window = Window(
            BufferControl(
                buffer=self.buffer,
                input_processors=[
                    ConditionalProcessor(PasswordProcessor(), secret),
                    BeforeInput(lambda: [("class:prompt", s.prompt())]),
                ],
            ),
            height=Dimension(min=1, max=3),
            dont_extend_height=True,
            wrap_lines=True,
        )

        def middle(width: int, height: int) -> list[StyleAndTextTuples]:
            drawn = screen.middle(s, width, height)
            self._page = drawn.page
            return list(drawn.lines)

        body = HSplit(
            [
                Window(SizedText(lambda w, h: [screen.header(s, w)]), height=1),
                Window(SizedText(middle), height=Dimension(min=1, weight=1)),
                Window(
                    SizedText(lambda w, h: list(screen.status_lines(s, w))),
                    height=lambda: Dimension.exact(len(screen.status_lines(s, self._width()))),
                ),
                input_window,
                Window(SizedText(lambda w, h: [screen.key_help(s, w, self.buffer.text)]), height=1),
            ]
        )
        color_depth = ColorDepth.DEPTH_1_BIT if screen.no_color() else None
        app: Application[int] = Application(
            layout=Layout(body, focused_element=input_window),
            key_bindings=kb,
            style=screen.make_style(),
            full_screen=True,
            mouse_support=False,
            refresh_interval=0.5,
            color_depth=color_depth,
            input=input,
            output=output,
            before_render=lambda _app: self.settle(),
        )
        app.ttimeoutlen = 0.05
        return app

    def settle(self) -> None:
        """Give the input line to the question now asked (``Session.settle_input``)."""
        text = self.session.settle_input(self.buffer.text)
        if text is not None and text != self.buffer.text:
            self.buffer.document = Document(text, len(text))

    def _notify(self) -> None:
        """The network changed the session: settle the input line, draw again."""
        self.settle()
        self.app.invalidate()
        if self._changed is not None:
            self._changed.set()

    def _guard(self, fn) -> None:
        try:
            fn()
        except Exception:
            self.store.log("error handling input:\n" + traceback.format_exc())
            self.session.say("error", f"Internal error; details in {self.store.log_path}.")
        if self.session.quit_requested:
            self.app.exit(result=0)
        self.settle()
        self.app.invalidate()

    def _on_enter(self, text: str) -> None:
        s = self.session
        if s.overlay is None and s.wants_keys() and not text:
            s.key("enter")
            return
        if s.submit(text):
            self.buffer.reset()

    def snapshot(self, width: int = 80, height: int = 24) -> str:
        """The screen as plain text, drawn exactly as the terminal would get it (for tests)."""
        from prompt_toolkit.application.current import set_app
        from prompt_toolkit.layout.mouse_handlers import MouseHandlers
        from prompt_toolkit.layout.screen import Screen, WritePosition

        shot = Screen()
        self._width_override = width
        self.settle()
        self.app.render_counter += 1  # controls cache their text per render
        try:
            with set_app(self.app):
                self.app.layout.container.write_to_screen(
                    shot, MouseHandlers(), WritePosition(0, 0, width, height), "", False, None
                )
                shot.draw_all_floats()
        finally:
            self._width_override = None
        rows = []
        for y in range(height):
            row = shot.data_buffer[y]
            rows.append("".join(row[x].char for x in range(width)).rstrip())
        return "\n".join(rows)

    # ---------------------------------------------------------------- running

    async def run_async(self) -> int:
        """Run until the player quits (on an asyncio loop; Trio runs as a guest)."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future = loop.create_future()

        def done_callback(outcome) -> None:
            if not done.done():
                done.set_result(outcome)

        trio.lowlevel.start_guest_run(
            self._trio_main,
            run_sync_soon_threadsafe=loop.call_soon_threadsafe,
            run_sync_soon_not_threadsafe=loop.call_soon,
            done_callback=done_callback,
            host_uses_signal_set_wakeup_fd=True,
            strict_exception_groups=True,
        )
        try:
            outcome = await asyncio.shield(done)
        except asyncio.CancelledError:
            self.cancel()
            outcome = await done
            raise
        if self.ui_task is not None and not self.ui_task.done():
            with contextlib.suppress(Exception):
                self.app.exit(result=1)
            with contextlib.suppress(Exception):
                await self.ui_task
        return outcome.unwrap()

    def drop_connection(self) -> None:
        """Cut the current connection so that it reconnects (thread-safe; for tests)."""
        if self._trio_token is not None and self.connection is not None:
            with contextlib.suppress(trio.RunFinishedError):
                self._trio_token.run_sync_soon(self.connection.drop)

    def cancel(self) -> None:
        """Stop everything (thread-safe)."""
        if self._trio_token is not None and self._trio_cancel is not None:
            with contextlib.suppress(trio.RunFinishedError):
                self._trio_token.run_sync_soon(self._trio_cancel.cancel)

    async def _trio_main(self) -> int:
        self._trio_token = trio.lowlevel.current_trio_token()
        ui_done = trio.Event()
        token = self._trio_token
        self.connection = Connection(
            self.session,
            self.opts.url,
            self._receive_channel,
            self._notify,
            trust=Trust(
                pin=self.opts.pin,
                known=KnownServers(self.store.path),
                tell=self._tell,
            ),
        )
        with trio.CancelScope() as cancel:
            self._trio_cancel = cancel
            async with trio.open_nursery() as nursery:
                self.ui_task = asyncio.ensure_future(self.app.run_async())
                self.ui_task.add_done_callback(lambda _: token.run_sync_soon(ui_done.set))
                nursery.start_soon(self._network)
                await ui_done.wait()
                await self._left()
                nursery.cancel_scope.cancel()
        ui_task = self.ui_task
        if ui_task is not None and ui_task.done() and not ui_task.cancelled():
            exc = ui_task.exception()
            if exc is not None:
                self.store.log("the screen failed:\n" + "".join(traceback.format_exception(exc)))
                return 1
            return int(ui_task.result() or 0)
        return 1

    async def _left(self) -> None:
        """A leave sent as the screen ends (/leave, a host's quit) reaches the server before the
        connection is cut: up to LEAVE_GRACE seconds for its goodbye (cut at once, it could be
        lost, and a host who quit was waited for as away)."""
        s = self.session
        if s.paused_on_quit and s.connected:
            # The pause of a make play game as its server stops: told before the connection
            # is cut, and noted for the next run, which resumes it (client.local).
            with trio.move_on_after(LEAVE_GRACE):
                while s.connected and not (s.view is not None and s.view.paused):
                    self._changed = trio.Event()
                    await self._changed.wait()
            if s.view is not None and s.view.paused and s.room:
                with contextlib.suppress(OSError):
                    self.store.note_paused_on_quit(s.server, s.room)
            return
        if not s.sent or not isinstance(s.sent[-1], Leave) or not s.connected:
            return
        with trio.move_on_after(LEAVE_GRACE):
            while s.bye_reason is None and s.connected:
                self._changed = trio.Event()
                await self._changed.wait()

    def _tell(self, line: str) -> None:
        """One line about the connection's security (a newly pinned certificate)."""
        self.session.add_feed(line, "me")
        self.store.log(line)
        self.app.invalidate()

    async def _network(self) -> None:
        assert self.connection is not None
        try:
            await self.connection.run()
        except Exception:
            self.store.log("the connection task failed:\n" + traceback.format_exc())
            self.session.say("error", f"Internal error; details in {self.store.log_path}.")
            self.app.invalidate()


# ------------------------------------------------------------------ command line


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "url",
        nargs="?",
        default=DEFAULT_URL,
        help=f"server address (default {DEFAULT_URL}; wss:// for TLS)",
    )
    parser.add_argument("--name", help="your name at the table (asked if missing)")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--create", action="store_true", help="create a new room (you host it)")
    which.add_argument("--room", metavar="CODE", help="join the room with this 4-letter code")
    parser.add_argument("--password", help="the room's password, if it has one")
    add_pin_argument(parser)
    setup = parser.add_argument_group("room settings (with --create)")
    setup.add_argument("--variant", choices=("standard", "dark-magic"), default="standard")
    setup.add_argument(
        "--limits",
        metavar="SPEC",
        help="time limits, e.g. '90 60 90 120 30 120', 'off', 'spell=30 review=off'",
    )
    setup.add_argument("--deck", metavar="FILE", help="add the categories of a TOML deck file")
    setup.add_argument(
        "--only-deck", action="store_true", help="play only with the --deck categories"
    )
    setup.add_argument("--no-spectators", action="store_true", help="nobody may watch")
    setup.add_argument(
        "--house-rule",
        action="append",
        default=[],
        choices=sorted(HOUSE_RULES),
        metavar="NAME",
        help="play and score by this house rule (repeatable; docs/RULES.md, House rules): "
        + ", ".join(sorted(HOUSE_RULES)),
    )
    setup.add_argument(
        "--max-spectators",
        type=int,
        metavar="N",
        help="most spectators at once (default 20; the server may allow fewer)",
    )
    setup.add_argument(
        "--quick", action="store_true", help="create the room with these settings without asking"
    )


def add_pin_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--pin",
        metavar="sha256:HEX",
        help="the wss:// server's certificate fingerprint, as the host's screen shows it"
        " (without it, the first one seen is remembered and checked from then on)",
    )


def settings_from_args(args: argparse.Namespace) -> RoomSettings:
    settings = RoomSettings(variant=getattr(args, "variant", "standard") or "standard")
    if getattr(args, "limits", None):
        settings = msgspec.structs.replace(settings, limits=parse_limits(args.limits))
    if getattr(args, "deck", None):
        cards = list(load_deck(args.deck))
        deck = "custom" if getattr(args, "only_deck", False) else "default+custom"
        settings = msgspec.structs.replace(settings, custom_cards=cards, deck=deck)
    if getattr(args, "no_spectators", False):
        settings = msgspec.structs.replace(settings, spectators=False)
    house = getattr(args, "house_rule", None) or []
    if house:
        settings = msgspec.structs.replace(settings, house_rules=canonical(house))
    most = getattr(args, "max_spectators", None)
    if most is not None:
        if not 0 <= most <= 1000:
            raise SystemExit("conjure play: --max-spectators must be between 0 and 1000")
        settings = msgspec.structs.replace(settings, max_spectators=most)
    return settings


def options_from_args(args: argparse.Namespace, *, spectator: bool = False) -> Options:
    name = getattr(args, "name", None)
    if name == NAME_PLACEHOLDER:
        # The share line's "--name YOU", pasted as it is: the client asks the name instead (a
        # friend sat at the table as "YOU", beside the legend's "▶ you").
        name = None
    return Options(
        url=args.url,
        name=name,
        room=getattr(args, "room", None),
        create=getattr(args, "create", False),
        password=getattr(args, "password", None),
        spectator=spectator,
        pin=getattr(args, "pin", None),
        state_dir=os.environ.get("CONJURE_STATE_DIR") or None,
        settings=settings_from_args(args) if not spectator else RoomSettings(),
        ask_settings=not getattr(args, "quick", False),
    )


def check_url(url: str) -> str | None:
    if not (url.startswith("ws://") or url.startswith("wss://")):
        return f"{url!r} is not a ws:// or wss:// address"
    return None


async def _main_async(client: ClientApp) -> int:
    loop = asyncio.get_running_loop()
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGHUP):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, lambda: client.app.exit(result=0))
    return await client.run_async()


def run_client(opts: Options) -> int:
    problem = check_url(opts.url)
    if problem:
        print(f"conjure: {problem}", file=sys.stderr)
        return 2
    if not opts.spectator and not opts.create and not opts.room:
        print(
            "conjure: say --create to open a new room or --room CODE to join one", file=sys.stderr
        )
        return 2
    if opts.room and not re.fullmatch(r"[A-Za-z]{4}", opts.room):
        print(f"conjure: {opts.room!r} is not a room code (4 letters)", file=sys.stderr)
        return 2
    if opts.name is not None and (problem := name_problem(opts.name)):
        print(f"conjure: {problem}", file=sys.stderr)
        return 2
    if problem := pin_problem(opts.url, opts.pin):
        print(f"conjure: {problem}", file=sys.stderr)
        return 2
    client = ClientApp(opts)
    try:
        code = asyncio.run(_main_async(client))
    except Exception:
        client.store.log("the client failed:\n" + traceback.format_exc())
        print(f"conjure: internal error; details in {client.store.log_path}", file=sys.stderr)
        return 1
    if client.connection is not None and client.connection.refused is not None:
        print(f"conjure: {client.connection.refused}", file=sys.stderr)  # gone with the screen
        return 1
    s = client.session
    if not s.joined_once:
        # Nothing was ever joined: say why, and say it in the exit status too.
        last_word = s.status[1] if s.status is not None else None
        why = (
            s.join_error
            or s.gave_up
            or s.ended
            or last_word
            or ("you quit before" if sys.stdin.isatty() else "standard input is not a terminal")
        )
        print(f"conjure: no room was joined ({why})", file=sys.stderr)
        if s.watch_instead:
            print(f"To watch the game: {s.watch_instead}", file=sys.stderr)
        return code or 1
    for line in farewell(s, local=bool(os.environ.get(ENV_LOCAL_SERVER))):
        print(line)
    return code


def farewell(s: Session, *, local: bool) -> list[str]:
    """What a player who joined reads on leaving: how to come back, when they can.

    ``make play`` (``local``) stops its own server when the client quits: there is no coming back
    to it; nor to a game that is over, or to a seat the host took away (its token no longer
    counts: seen, the command printed then seated a removed player anew).
    """
    if not s.room:
        return []
    if s.spectator:  # a word on leaving, as a player has (it printed nothing)
        return [f"Stopped watching room {s.room}."]
    if s.gave_up_seat:  # /leave: it printed nothing (found by review)
        if s.view is not None and s.view.phase != "lobby":
            return [f"Left room {s.room}: you gave up your seat in its game for good."]
        return [f"Left room {s.room}: your seat there is given up."]
    if s.view is not None and s.view.phase == "over":
        over = [f"Left room {s.room}: its game is over."]
        if not local:  # who won, as make play's own summary says it (missed here: seen)
            over += wrap_words(final_words(s.view), 80, "  ", "    ")
        if s.view.game_id and not local:  # (make play names the log in its own summary)
            # Which log is this game's: a player could not tell among the server's (seen in a
            # friends' game; the id was on no screen).
            over.append(f"  Its log, in the server's replays folder: {s.view.game_id}.jsonl")
            kept = s.store.receipt_path(s.view.game_id)
            if kept.is_file():  # what an organizer asks a player for (docs/LOG.md)
                over += [RECEIPT_LINE, f"    {home_short(kept)}"]
        return over
    if s.ended is not None:  # removed, replaced, refused: why (a blank screen said nothing)
        return [f"Left room {s.room}: {s.ended}."]
    if not s.token or local:
        return []
    name = f" --name {shlex.quote(s.name)}" if s.name else ""
    pin = f" --pin {s.pin}" if s.pin else ""  # (at another port too, the same certificate)
    # The command on a line of its own, so that it is copied whole at 80 columns.
    return [
        f"Left room {s.room}. Come back with:",
        f"  {program_here()} play {s.server}{pin} --room {s.room}{name}",
    ]


def run(args: argparse.Namespace) -> int:
    try:
        opts = options_from_args(args)
    except (DeckError, ValueError) as exc:
        print(f"conjure: {exc}", file=sys.stderr)
        return 2
    return run_client(opts)
