"""Computer players as real protocol clients: whole games on a real server, reconnects, restarts,
the ``conjure bot`` and ``conjure demo`` commands, and the committed sample logs."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest
import trio
from polling import poll_until

from conjure.client.bots import runner
from conjure.client.bots.player import (
    RESULTS_READING,
    UNKNOWN_CATEGORY_LINE,
    Bot,
    BotOptions,
    NamePool,
    move_bot_seats,
    parse_delay,
    passes_checks,
    saved_bots,
)
from conjure.client.demo import bot_game
from conjure.client.statefile import StateDir
from conjure.protocol import messages as m
from conjure.protocol.deck import Card
from conjure.protocol.events import event_from_record
from conjure.protocol.words import contains_written
from conjure.server.logformat import read_log
from conjure.server.rules import fold

ROOT = Path(__file__).resolve().parent.parent
NO_DELAY = (0.0, 0.0)


def conjure(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "conjure.client.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )


async def replay_ok(path: Path) -> None:
    out = await trio.to_thread.run_sync(lambda: conjure("replay", "--no-state-dir", str(path)))
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]


def check_game(server, view: m.View, bots: list[Bot], rounds: int) -> None:
    """Finished, no void round, no invalid word, the log folds to the room and replays."""
    assert view.phase == "over"
    assert len(view.results) == rounds
    for result in view.results:
        assert result.case in ("everyone", "conjured", "missed-conjurer", "failed"), result
        assert result.invalid == {}, result
        assert all(w.strip() for w in result.words.values())
    for bot in bots:
        assert bot.status == "over", (bot.name, bot.status)
        assert bot.record.errors == [], (bot.name, bot.record.errors)
    assert view.game_id is not None
    log = read_log(server.replays / f"{view.game_id}.jsonl")
    assert not log.torn
    events = [event_from_record(r.type, r.data) for r in log.records]
    invalid = [e for e in events if type(e).__name__ == "RoundScored" and e.invalid]
    assert invalid == []
    state = fold(events)
    assert state.over and {p.seat: p.score for p in view.players} == state.totals


def spells_and_summons(bot: Bot) -> list[tuple[list[str], dict[int, str], int, str]]:
    """(spell words, summoning words, conjurer, variant) of every round the bot reviewed."""
    out = []
    for v in bot.reviews.values():
        spells = [p.spell for p in v.players if p.spell]
        words = {p.seat: p.summon for p in v.players if p.summon}
        assert v.conjurer is not None
        out.append((spells, words, v.conjurer, v.settings.variant))
    return out


def check_words_follow_the_rules(bot: Bot) -> None:
    for spells, words, conjurer, variant in spells_and_summons(bot):
        for seat, word in words.items():
            if variant == "dark-magic" and seat == conjurer:
                continue
            assert not any(contains_written(word, s) for s in spells), (word, spells)
            assert passes_checks(word, spells)


@pytest.mark.parametrize(
    ("variant", "players"), [("standard", 4), ("dark-magic", 5)], ids=["standard", "dark"]
)
async def test_a_whole_game_among_bots(server, variant, players):
    game = await bot_game(
        server.url, players=players, variant=variant, delay=NO_DELAY, seed=11, challenge_rate=0
    )
    view = game.host.view
    check_game(server, view, game.bots, players)
    names = [p.name for p in view.players]
    assert len({n.casefold() for n in names}) == players
    assert not any(n.startswith("Bot") for n in names)
    check_words_follow_the_rules(game.host)
    if variant == "dark-magic":  # the conjurer's secret word, chosen first, is revealed
        for result in view.results:
            assert result.conjurer in result.words
    await replay_ok(server.replays / f"{view.game_id}.jsonl")


async def test_unknown_custom_categories_are_played_and_said(server):
    cards = [
        Card(text="Things in a wizard's pocket", stars=2),
        Card(text="Something you find at a lighthouse", stars=2),
        Card(text="Qwzx blorb", stars=3),
    ]
    settings = m.RoomSettings(deck="custom", custom_cards=cards)
    game = await bot_game(
        server.url, players=3, settings=settings, delay=NO_DELAY, seed=5, challenge_rate=0
    )
    check_game(server, game.host.view, game.bots, 3)
    chats = [line for bot in game.bots for line in bot.record.chats]
    assert chats and set(chats) == {UNKNOWN_CATEGORY_LINE}
    for bot in game.bots:  # once per category and bot, at most
        assert len(bot.record.chats) <= 3
        check_words_follow_the_rules(bot)


async def test_bot_command_fills_a_room_with_unique_names(server, tmp_path):
    """``conjure bot URL --room CODE --count 3``: a taken name is skipped; it exits at the end."""
    host = Bot(
        BotOptions(
            url=server.url,
            create=m.RoomSettings(),
            start_when=lambda v: len(v.players) == 4,
            delay=NO_DELAY,
            log=lambda line: None,
        ),
        NamePool(["Ada"]),
    )
    log = tmp_path / "bots.log"
    async with trio.open_nursery() as nursery:
        nursery.start_soon(host.run)
        with trio.fail_after(10):
            await host.seated.wait()
        with log.open("w") as out, trio.fail_after(60):
            code = await runner.main(
                server.url, host.room or "", 3, [], 1, None, NO_DELAY, None, out
            )
    assert code == 0
    view = host.view
    assert view is not None and view.phase == "over"
    assert sorted(p.name for p in view.players) == ["Ada", "Basil", "Cleo", "Dora"]
    assert all(p.computer for p in view.players)  # each said so in its hello: marked ⚙
    text = log.read_text()
    assert "'Ada' is taken" in text
    assert "the game is over" in text
    check_game(server, view, [host], 4)


async def test_dropped_and_restarted_bots_resume_and_reveal(server, tmp_path):
    """One bot loses its connection mid-game and comes back with its token; another is
    stopped right after committing and a new one (same name, same state directory) resumes
    the seat and reveals the saved word."""
    store = StateDir(tmp_path / "state")
    pool = NamePool()
    events: list[str] = []
    state = {"dropped": False, "stopped": False}

    host = Bot(
        BotOptions(
            url=server.url,
            create=m.RoomSettings(),
            start_when=lambda v: len(v.players) == 4,
            delay=NO_DELAY,
            seed=1,
            challenge_rate=0,
            log=events.append,
        ),
        pool,
    )
    bots: list[Bot] = [host]

    def opts(seed: int, on_view=None, store_=None) -> BotOptions:
        return BotOptions(
            url=server.url,
            room=host.room,
            delay=NO_DELAY,
            seed=seed,
            challenge_rate=0,
            log=events.append,
            on_view=on_view,
            store=store_,
        )

    def drop_in_round_two(v: m.View) -> None:
        if not state["dropped"] and v.round == 2 and v.phase == "spell":
            state["dropped"] = True
            bots[1].drop()

    def stop_after_commit(v: m.View) -> None:
        me = next((p for p in v.players if p.seat == v.you), None)
        if not state["stopped"] and me is not None and me.committed and not me.revealed:
            state["stopped"] = True
            bots[2].stop("crashed on purpose")

    async with trio.open_nursery() as nursery:
        nursery.start_soon(host.run)
        with trio.fail_after(10):
            await host.seated.wait()
        bots.append(Bot(opts(2, drop_in_round_two), pool))
        bots.append(Bot(opts(3, stop_after_commit, store), pool, name="Vic"))
        bots.append(Bot(opts(4), pool))
        for bot in bots[1:]:
            nursery.start_soon(bot.run)
        with trio.fail_after(30):
            await poll_until(lambda: state["stopped"] and bots[2].status is not None)
        await trio.sleep(0.2)  # the table waits for Vic's reveal
        assert host.view is not None and host.view.phase in ("commit", "reveal")
        vic = bots[2].view
        assert vic is not None and vic.you is not None
        saved = store.load_summons(vic.game_id or "", vic.round, vic.you)
        assert saved, "the committed word was saved before the commitment left"
        again = Bot(opts(30, store_=StateDir(tmp_path / "state")), NamePool(), name="Vic")
        assert again.token is not None  # found its seat in the state directory
        nursery.start_soon(again.run)
        bots.append(again)
    assert state["dropped"] and bots[1].connections >= 2
    assert again.connections == 1 and again.status == "over"
    view = host.view
    assert view is not None
    first = view.results[0]
    assert first.words[vic.you] == saved[0]["word"]  # revealed by the restarted bot
    check_game(server, view, [b for b in bots if b is not bots[2]], 4)
    assert any("back in my seat" in line for line in events)


async def test_a_restarted_bot_command_resumes_its_own_seats(server, tmp_path):
    """``conjure bot --state-dir DIR`` stopped and started again: the saved bots come back to
    their own seats by their tokens (whatever names were asked for), and play the game out."""
    state = tmp_path / "bots"
    flag = {"restarted": False}
    host = Bot(
        BotOptions(
            url=server.url,
            create=m.RoomSettings(),
            start_when=lambda v: (
                flag["restarted"] and len(v.players) == 3 and all(p.connected for p in v.players)
            ),
            delay=NO_DELAY,
            challenge_rate=0,
            log=lambda line: None,
        ),
        NamePool(["Zoe"]),
    )
    first, second = tmp_path / "first.log", tmp_path / "second.log"
    async with trio.open_nursery() as nursery:
        nursery.start_soon(host.run)
        with trio.fail_after(10):
            await host.seated.wait()
        room = host.room or ""
        with first.open("w") as out, trio.CancelScope() as scope:

            async def until_seated() -> None:
                await poll_until(lambda: host.view is not None and len(host.view.players) >= 3)
                scope.cancel()

            nursery.start_soon(until_seated)
            with trio.fail_after(20):
                await runner.main(server.url, room, 2, [], 1, None, NO_DELAY, state, out)
        saved = [e["name"] for e in saved_bots(StateDir(state), server.url, room)]
        assert len(saved) == 2
        flag["restarted"] = True
        with second.open("w") as out, trio.fail_after(60):
            code = await runner.main(server.url, room, 2, ["Kai"], 2, None, NO_DELAY, state, out)
    assert code == 0
    text = second.read_text()
    assert f"resuming the seats of {saved[0]}, {saved[1]} in room {room}" in text
    assert text.count("back in my seat") == 2 and "Kai" not in text
    view = host.view
    assert view is not None and view.phase == "over"
    assert sorted(p.name for p in view.players) == sorted(["Zoe", *saved])
    check_game(server, view, [host], 3)


def test_bot_seats_are_found_at_the_same_servers_new_port(tmp_path):
    """Seen with friends: the server came back on another port; `conjure bot` told the new
    address started new bots, refused "has started without you", and the old bot's turns ran
    their clocks out. Its seats are found on the same host at another port (never another
    host's), and a person's client never takes a bot's seat for its own."""
    from conjure.client.bots.player import bot_seat_server, moved_bots_url

    store = StateDir(tmp_path)
    old = "wss://127.0.0.1:37771"
    for seat, name in ((3, "Ada"), (4, "Bo")):
        store.save_seat(bot_seat_server(old, name), "NZRM", seat=seat, player_id=f"p{seat}",
                        token=name * 20, name=name)  # fmt: skip
    new = "wss://127.0.0.1:40623"
    assert moved_bots_url(store, new, "nzrm") == old
    assert moved_bots_url(store, "wss://127.0.0.2:40623", "NZRM") is None
    assert moved_bots_url(store, new, "QQQQ") is None
    assert store.load_seat_moved(new, "NZRM") is None  # a bot's seat is no person's
    move_bot_seats(store, old, new, "NZRM")
    assert [e["name"] for e in saved_bots(store, new, "NZRM")] == ["Ada", "Bo"]


async def test_bots_keep_their_deal_shares_for_the_audit(server, tmp_path):
    """Found by review: a bot kept no share of the deal even with a state directory, so
    `conjure replay --state-dir` on it said the bots' shares were the server's word, and to
    give a state directory, which could not help. Bots with one keep theirs, as a person's
    client does."""
    from pathlib import Path

    from conjure.server.audit_verify import audit

    state = tmp_path / "bots"
    host = Bot(
        BotOptions(
            url=server.url,
            create=m.RoomSettings(),
            start_when=lambda v: len(v.players) == 3 and all(p.connected for p in v.players),
            delay=NO_DELAY,
            challenge_rate=0,
            log=lambda line: None,
        ),
        NamePool(["Zoe"]),
    )
    async with trio.open_nursery() as nursery:
        nursery.start_soon(host.run)
        with trio.fail_after(10):
            await host.seated.wait()
        out = tmp_path / "bots.log"
        with out.open("w") as log, trio.fail_after(60):
            code = await runner.main(server.url, host.room or "", 2, [], 1, None, NO_DELAY,
                                     state, log)  # fmt: skip
    assert code == 0
    view = host.view
    assert view is not None and view.phase == "over" and view.game_id
    kept = StateDir(state).read_secrets()["deals"]
    assert len(kept) == 2 and all(d.get("game_id") == view.game_id for d in kept.values())
    path = Path(server.config.replays) / f"{view.game_id}.jsonl"
    a = audit(path, state_dirs=[state])
    assert a.verified, a.problems
    bots = {p.seat for p in view.players if p.name != "Zoe"}
    assert a.deal_confirmed == bots


async def test_a_bot_gives_up_on_a_server_it_cannot_reach():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        url = f"ws://127.0.0.1:{s.getsockname()[1]}"
    lines: list[str] = []
    bot = Bot(
        BotOptions(url=url, room="ABCD", delay=NO_DELAY, log=lines.append, give_up_after=2),
        NamePool(),
    )
    with trio.fail_after(10):
        assert await bot.run() == 1
    assert bot.status == f"Cannot reach {url} (connection refused)"
    assert bot.connections == 0


async def test_bots_ride_out_a_server_restart(start_server):
    """The server stops mid-game (bye, close 1001) and comes back on the same port from its
    log: the bots reconnect with their tokens, reveal from memory and finish the game."""
    server = await start_server()
    port = server.port
    restart = trio.Event()

    def stop_in_round_two(v: m.View) -> None:
        if v.round == 2 and v.phase == "commit":
            restart.set()

    game_box: dict = {}

    async def play() -> None:
        from conjure.client.demo import Game

        game = Game()
        game_box["game"] = game
        await bot_game(
            server.url,
            players=3,
            delay=NO_DELAY,
            seed=21,
            challenge_rate=0,
            on_view=stop_in_round_two,
            game=game,
        )

    async with trio.open_nursery() as nursery:
        nursery.start_soon(play)
        with trio.fail_after(20):
            await restart.wait()
        await server.aclose()
        await trio.sleep(0.3)
        server = await start_server(port=port)
        assert server.report.resumed
    game = game_box["game"]
    view = game.host.view
    check_game(server, view, game.bots, 3)
    assert all(bot.connections >= 2 for bot in game.bots)


def review_view(proposals: list[m.ProposalView], category: str = "Animal") -> m.View:
    players = [
        m.PlayerView(seat=i, id=f"p{i}", name=n, colour="red", spell=s, summon=w, valid=True)
        for i, (n, s, w) in enumerate(
            [("Ann", "milk", "cow"), ("Bob", "farm", "cow"), ("Cy", "grass", "sheep")]
        )
    ]
    return m.View(
        room="ABCD",
        game_id="g1",
        phase="review",
        you=2,
        players=players,
        round=1,
        rounds=3,
        conjurer=0,
        card=m.CardView(index=0, text=category, stars=1),
        proposals=proposals,
    )


async def test_votes_come_with_reasons_and_review_ends_with_done():
    said: list[str] = []
    bot = Bot(
        BotOptions(url="ws://127.0.0.1:1", room="ABCD", challenge_rate=0, log=said.append),
        NamePool(),
    )
    same = m.ProposalView(
        id=0, kind="same", by=0, seats=[0, 1], words=["car", "automobile"], voters=[2]
    )
    challenge = m.ProposalView(
        id=1, kind="challenge", by=0, seats=[1], words=["cow"], rule="category", voters=[2]
    )
    bot.view = review_view([same, challenge])
    msgs = []
    while (action := bot.next_action()) is not None:
        bot._sent.add(action.key)
        msgs.extend(await action.build())
    votes = [x for x in msgs if isinstance(x, m.CastVote)]
    assert [v.proposal for v in votes] == [0, 1]
    assert all(v.reason for v in votes)
    assert votes[0].yes is True  # a car is an automobile
    assert votes[1].yes is False  # a cow is an animal
    assert isinstance(msgs[-1], m.ReviewDone)
    # Its output numbers proposals as the board, the feed and the audit do: from 1.
    assert [line.split(": ")[1] for line in said if "I vote" in line] == [
        "I vote yes on proposal 1",
        "I vote no on proposal 2",
    ]


async def test_a_bot_rarely_challenges_a_word_outside_the_category():
    bot = Bot(BotOptions(url="ws://127.0.0.1:1", room="ABCD", challenge_rate=1.0), NamePool())
    view = review_view([])
    view.players[0].summon = "saxophone"
    bot.view = view
    action = bot.next_action()
    assert action is not None and action.key[0] == "challenges"
    msgs = await action.build()
    assert msgs == [m.ChallengeWord(seat=0, rule="category")]
    calm = Bot(BotOptions(url="ws://127.0.0.1:1", room="ABCD", challenge_rate=0.0), NamePool())
    calm.view = view
    action = calm.next_action()
    assert action is not None and await action.build() == []


def test_names_and_delays():
    pool = NamePool(["Zed", "Ada"])
    assert [pool.take() for _ in range(4)] == ["Zed", "Ada", "Basil", "Cleo"]
    assert len({pool.take() for _ in range(60)}) == 60
    assert parse_delay("0") == (0.0, 0.0)
    assert parse_delay("1-3") == (1.0, 3.0)
    assert parse_delay("2") == (1.0, 3.0)
    with pytest.raises(ValueError):
        parse_delay("3-1")


def test_guess_prints_spaceship_like_words():
    out = conjure("bot", "--guess", "Vehicle", "freighter", "hydrogen", "rocket")
    assert out.returncode == 0, out.stderr
    ranked = [line.split()[1] for line in out.stdout.splitlines()[1:4]]
    assert "spaceship" in ranked or "spacecraft" in ranked, out.stdout
    assert "rocket" not in out.stdout.split(":", 1)[1].split()  # a marked word is never guessed


def test_bot_command_checks_its_arguments():
    assert conjure("bot", "ws://127.0.0.1:1").returncode == 2
    assert conjure("bot", "ws://127.0.0.1:1", "--room", "ABCD", "--delay", "x").returncode == 2
    assert conjure("bot", "--guess", "Vehicle").returncode == 2


def test_demo_prints_every_round_and_the_log(tmp_path):
    replays = tmp_path / "replays"
    out = conjure(
        "demo", "--variant", "dark-magic", "--players", "3", "--replays", str(replays),
        "--delay", "0", "--seed", "4",
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    text = out.stdout
    for n in (1, 2, 3):
        assert f"Round {n}: " in text
    assert "Final scores:" in text
    logs = list(replays.glob("*.jsonl"))
    assert len(logs) == 1 and f"Game log: {logs[0]}" in text
    assert conjure("replay", "--no-state-dir", str(logs[0])).returncode == 0


@pytest.mark.parametrize("name", ["sample-standard.jsonl", "sample-dark-magic.jsonl"])
def test_sample_logs_verify(name):
    path = ROOT / "replays" / name
    assert path.exists(), f"{name} is missing: the committed samples are part of the project"
    out = conjure("replay", "--no-state-dir", str(path))
    assert out.returncode == 0, out.stdout[-2000:]
    first = msgspec.json.decode(path.read_text().splitlines()[0])
    variant = "dark-magic" if "dark" in name else "standard"
    assert variant in str(first)


async def test_a_computer_conjurer_gives_the_table_time_to_read_the_results():
    """A newcomer was still reading round 1's results while the bots, the conjurer first, raced
    through round 2's choice and spell words. A bot that takes its time waits RESULTS_READING
    longer before choosing once a round has been scored; the first round's choice, and a bot
    that acts at once, do not; the phase's clock still caps it."""
    bot = Bot(BotOptions(url="ws://127.0.0.1:1", room="ABCD", delay=(1.0, 3.0)), NamePool())
    base = review_view([])
    result = m.ResultView(
        round=1, conjurer=0, card=m.CardView(index=0, text="Animal", stars=1), case="failed"
    )
    first = msgspec.structs.replace(
        base, phase="choose", conjurer=2, turn=2, round=1, card=None, remaining=None
    )
    later = msgspec.structs.replace(first, round=2, results=[result])
    bot.view, bot.view_at = first, trio.current_time()
    action = bot.next_action()
    assert action is not None and action.key[0] == "choose"
    assert 1.0 <= bot._delay_for(action.kind) <= 3.0
    bot.view = later
    action = bot.next_action()
    assert action is not None
    assert RESULTS_READING + 1.0 <= bot._delay_for(action.kind) <= RESULTS_READING + 3.0
    bot.view, bot.view_at = msgspec.structs.replace(later, remaining=5.0), trio.current_time()
    assert bot._delay_for(action.kind) <= 3.0  # the clock: 5 s left, 2 s kept in hand
    at_once = Bot(BotOptions(url="ws://127.0.0.1:1", room="ABCD", delay=(0.0, 0.0)), NamePool())
    at_once.view = later
    assert at_once._delay_for(action.kind) == 0.0


def test_what_bots_say_is_wrapped_between_words_in_a_terminal(monkeypatch):
    """Seen at 80 columns: a bot's long line broke as "different thi" / "ngs"."""
    import io

    from conjure.client.bots.runner import bot_log
    from conjure.protocol.cells import cells

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    line = "[Ada] voted no on proposal 2: " + "'umbrella' and 'parasol' are different things " * 3
    monkeypatch.setenv("COLUMNS", "80")
    shown = Terminal()
    bot_log(shown, quiet=False)(line)
    rows = shown.getvalue().splitlines()
    assert len(rows) > 1 and all(cells(r) <= 80 for r in rows)
    assert " ".join(r.strip() for r in rows) == line.strip()
    piped = io.StringIO()
    bot_log(piped, quiet=False)(line)
    assert piped.getvalue() == line + "\n"
