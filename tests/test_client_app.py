"""Headless application tests: the real ClientApp (pipe input + DummyOutput, Trio as a guest on
asyncio) against a real server on loopback, the other seats played by scripted protocol clients
(``tests/wsclient.py`` driven by ``clienthelpers.Robot``). Every phase of both variants."""

from __future__ import annotations

import trio
from clienthelpers import CTRL_U, ENTER, HeadlessClient, robots, wait_until
from wsclient import open_client

from conjure.client.app import Options
from conjure.client.inputs import KEYS_PAUSE
from conjure.protocol.messages import (
    CastVote,
    CommitSummon,
    JoinRoom,
    KickPlayer,
    ResumeSeat,
    RevealSummon,
    RoomSettings,
    SkipPlayer,
    StartGame,
    Update,
)


def opts(server, tmp_path, name="Ann", **kw) -> Options:
    kw.setdefault("state_dir", str(tmp_path / f"state-{name}"))
    return Options(url=server.url, name=name, **kw)


def phase_is(*phases, round_=None):
    def check(s):
        v = s.view
        return v is not None and v.phase in phases and (round_ is None or v.round == round_)

    return check


async def keys(client: HeadlessClient, text: str) -> None:
    for k in text:
        client.type(k)
        await client.idle()


async def test_standard_game_every_phase(server, tmp_path):
    async with HeadlessClient(opts(server, tmp_path, create=True, ask_settings=False)) as ann:
        s = ann.session
        await ann.wait(phase_is("lobby"), what="lobby")
        room = s.room
        await ann.wait_screen("Lobby: 1 player seated", f"--room {room}", "Lobby: s=start")
        ann.type("s")
        await ann.wait_screen("A game needs at least 3 players; 1 seated")
        specs = [
            dict(name="Bob", spell="hydrogen", summon="spaceship", hold=("done",)),
            dict(name="Cat", spell="rocket", summon="moon", hold=("done",)),
        ]
        async with robots(server.url, room, specs) as (bob, cat):
            await ann.wait(lambda s: len(s.view.players) == 3)
            await trio.sleep(KEYS_PAUSE)  # keys right after a refused one are a mistyped burst
            ann.type("s")
            ann.type("y")  # the host is asked first
            # choose
            await ann.wait(phase_is("choose"), what="choose")
            screen = await ann.wait_screen(
                "Choose a category (1-3):", "Categories on the table", "round 1/3", "conjurer Ann"
            )
            assert "▶1 Ann ✦ ♛" in screen and "★" in screen
            await ann.line("7")
            await ann.wait_screen("Type the number of a category, 1-3, or its name.")
            ann.type(CTRL_U)
            await ann.line("1")
            # spell: the conjurer writes first
            await ann.wait(lambda s: s.view.phase == "spell" and s.view.turn == 0)
            await ann.wait_screen("Your spell word:", "✎ writing…")
            await ann.line("freighter")
            # mark
            await ann.wait(phase_is("mark"), what="mark")
            await ann.wait_screen(
                "Toggle boards 1-3, Enter to confirm (2-3 crystals):",
                "freighter",
                "hydrogen",
                "rocket",
            )
            await keys(ann, "2" + ENTER)
            await ann.wait_screen("Place at least 2 crystals (1 placed).")
            await keys(ann, "3")
            await ann.wait_screen("◇", "Crystals ready for: hydrogen, rocket")
            ann.type(ENTER)
            # commit, with the local warning first
            await ann.wait(phase_is("commit"), what="commit")
            screen = await ann.wait_screen("Your summoning word:", "locked in")
            assert screen.count("◆") >= 2
            await ann.line("rocket ship")
            await ann.wait_screen(
                "contains 'rocket' (Cat's spell word): it would be invalid",
                "Lock in 'rocket ship' anyway? y = yes, n = change it",
            )
            assert not any(isinstance(m, CommitSummon) for m in s.sent)
            await keys(ann, "n")  # no: the word comes back to the input line, to be changed
            await wait_until(lambda: ann.client.buffer.text == "rocket ship", what="word back")
            ann.type(CTRL_U)
            await ann.line("spaceship")
            # reveal happens by itself, then the review
            await ann.wait(phase_is("review"), what="review")
            assert [m.word for m in s.sent if isinstance(m, RevealSummon)] == ["spaceship"]
            await ann.wait_screen("Review: c=challenge", "spaceship ✓", "moon ✓")
            await keys(ann, "c3")
            await ann.wait_screen("Rule for 'moon': 1-4", "3 it must fit the category")
            ann.type("3")
            await ann.wait(lambda s: s.view.proposals, what="a proposal")
            await ann.wait_screen("Ann challenges Cat's 'moon': must fit the category")
            await bob.c.send(CastVote(proposal=0, yes=True, reason="not an insect"))
            await ann.wait(lambda s: s.view.proposals[0].carried is True)
            await ann.wait_screen("carried (2-0)", "Bob: not an insect", "moon ✗ invalid")
            bob.release()
            cat.release()
            ann.type("d")
            # round 2 starts: the result of round 1 with every player's points and reasons
            await ann.wait(lambda s: s.view.round == 2, what="round 2")
            screen = await ann.wait_screen("Round 1:", "conjurer Ann", "matched", "invalid word")
            for name in ("Ann", "Bob", "Cat"):
                assert f"  {name} " in screen
            # rounds 2 and 3: the robots conjure, Ann writes and summons
            for rnd in (2, 3):
                await ann.wait(
                    lambda s, rnd=rnd: (
                        s.view.round == rnd and s.view.phase == "spell" and s.view.turn == 0
                    ),
                    timeout=15,
                    what=f"spell, round {rnd}",
                )
                await ann.line(f"word{rnd}")
                await ann.wait(phase_is("commit", round_=rnd))
                await ann.line("spaceship")
                await ann.wait(phase_is("review", round_=rnd))
                ann.type("d")
                await ann.idle()
            await ann.wait(phase_is("over"), what="game over")
            screen = await ann.wait_screen("Final standings", "Game over", "wins")
            print(screen)
        # a receipt for the game was kept
        receipt = ann.client.store.load_receipt(s.view.game_id)
        assert receipt["seq"] > 10 and len(receipt["hash"]) == 64 and receipt["room"] == room
    assert ann.exit_code == 0


async def test_dark_magic_every_phase_with_a_spectator(server, tmp_path):
    async with HeadlessClient(opts(server, tmp_path, create=True)) as ann:
        s = ann.session
        # the settings form, typed
        await ann.wait_screen("New room settings", "Variant: 1 standard, 2 dark magic [1]:")
        await ann.line("2")
        await ann.wait_screen("Seconds for choose")
        await ann.line("spell=45")
        await ann.line("")  # default deck
        await ann.line("y")
        await ann.wait_screen("Create the room?", "Dark Magic", "spell 45s")
        await ann.line("")
        await ann.wait(phase_is("lobby"), what="lobby")
        assert s.view.settings.variant == "dark-magic" and s.view.settings.limits.spell == 45
        room = s.room
        specs = [
            dict(name="Bob", spell="sea", summon="whale", hold=("done",)),
            dict(name="Cat", spell="fin", summon="shark", hold=("done",)),
        ]
        watch = Options(
            url=server.url, room=room, spectator=True, state_dir=str(tmp_path / "watcher")
        )
        async with robots(server.url, room, specs) as (bob, cat), HeadlessClient(watch) as eve:
            await ann.wait(lambda s: len(s.view.players) == 3)
            await eve.wait(lambda s: s.view is not None and len(s.view.players) == 3)
            ann.type("s")
            ann.type("y")  # the host is asked first
            await ann.wait(phase_is("choose"))
            await eve.wait_screen("watching: waiting for Ann to choose a category")
            await ann.line("2")
            # dark-commit: the conjurer's secret word at once
            await ann.wait(phase_is("dark-commit"))
            await ann.wait_screen("Your secret summoning word:")
            await eve.wait_screen("watching: waiting for Ann to write a secret summoning word")
            await ann.line("ocean")
            await ann.wait(phase_is("spell", "mark"))
            await ann.wait_screen("ocean · locked in")
            # spell words from the others only, then the marks (0-4 allowed)
            await ann.wait(phase_is("mark"), what="mark")
            await ann.wait_screen("Toggle boards 2-3, Enter to confirm (0-2 crystals):")
            await keys(ann, "1")
            await ann.wait_screen("Board 1 (Ann) has no spell word to mark.")
            await keys(ann, "2" + ENTER)
            # commit: the others summon, the conjurer waits
            await ann.wait(phase_is("commit", "reveal", "review"), what="commit")
            await ann.wait(phase_is("review"), what="review")
            await ann.wait_screen("ocean ✓", "whale ✓", "shark ✓")
            eve_screen = await eve.wait_screen("ocean ✓", "watching:")
            assert "▶" not in eve_screen  # the spectator has no board of their own
            bob.release()
            cat.release()
            ann.type("d")
            await ann.wait(lambda s: s.view.round == 2, what="round 2")
            await ann.wait_screen("Round 1:", "the conjuration failed: no two words matched")
            # round 2: Bob conjures; Ann writes a spell word after Cat, then summons
            for rnd in (2, 3):
                await ann.wait(
                    lambda s, rnd=rnd: (
                        s.view.round == rnd and s.view.phase == "spell" and s.view.turn == 0
                    ),
                    timeout=15,
                    what=f"spell, round {rnd}",
                )
                await ann.line(f"word{rnd}")
                await ann.wait(phase_is("commit", round_=rnd))
                await ann.line("whale")
                await ann.wait(phase_is("review", round_=rnd))
                ann.type("d")
                await ann.idle()
            await ann.wait(phase_is("over"), what="game over")
            await ann.wait_screen("Final standings")
            await eve.wait_screen("Final standings")


async def test_crash_mid_summon_then_restart_reveals_the_same_word(server, tmp_path):
    state = str(tmp_path / "ann-state")
    async with HeadlessClient(
        opts(server, tmp_path, create=True, ask_settings=False, state_dir=state)
    ) as ann:
        await ann.wait(phase_is("lobby"))
        room = ann.session.room
        specs = [
            dict(name="Bob", summon="spaceship", hold=("commit",)),
            dict(name="Cat", summon="moon", hold=("commit",)),
        ]
        async with robots(server.url, room, specs) as (bob, cat):
            await ann.wait(lambda s: len(s.view.players) == 3)
            ann.type("s")
            ann.type("y")  # the host is asked first
            await ann.wait(phase_is("choose"))
            await ann.line("1")
            await ann.wait(lambda s: s.view.phase == "spell" and s.view.turn == 0)
            await ann.line("freighter")
            await ann.wait(phase_is("mark"))
            await keys(ann, "23" + ENTER)
            await ann.wait(phase_is("commit"))
            await ann.line("spaceship")
            await ann.wait(lambda s: s.me.committed, what="Ann committed")
            await ann.crash()
            await bob.c.wait_view(lambda v: not v.players[0].connected)

            again = HeadlessClient(opts(server, tmp_path, room=room.lower(), state_dir=state))
            async with again:
                await again.wait(phase_is("commit"), what="resumed")
                assert isinstance(again.session.sent[0], ResumeSeat)
                assert not any(isinstance(m, JoinRoom) for m in again.session.sent)
                await again.wait_screen("Locked in 'spaceship'", "spaceship · locked in")
                bob.release()
                cat.release()
                await again.wait(phase_is("review"), what="review")
                reveals = [m for m in again.session.sent if isinstance(m, RevealSummon)]
                assert [m.word for m in reveals] == ["spaceship"]
                assert again.session.view.players[0].summon == "spaceship"
                await again.wait_screen("spaceship ✓")


async def test_connection_loss_banner_reconnects_and_keeps_the_typed_text(server, tmp_path):
    async with HeadlessClient(opts(server, tmp_path, create=True, ask_settings=False)) as ann:
        await ann.wait(phase_is("lobby"))
        room = ann.session.room
        async with robots(server.url, room, [dict(name="Bob"), dict(name="Cat")]) as (bob, _):
            await ann.wait(lambda s: len(s.view.players) == 3)
            ann.type("s")
            ann.type("y")  # the host is asked first
            await ann.wait(phase_is("choose"))
            ann.type("1")  # typed, not yet sent
            await ann.idle()
            # A slow first retry, so that the state between the loss and the return lasts long
            # enough to be looked at on a loaded machine; Bob's updates are read in order.
            assert ann.client.connection is not None
            ann.client.connection.backoff.first = 4.0
            bob.c.skip_all()
            ann.client.drop_connection()
            await ann.wait_screen("connection lost", "reconnecting")
            await bob.c.recv_until(
                lambda x: isinstance(x, Update) and not x.view.players[0].connected, timeout=10
            )
            assert ann.client.buffer.text == "1"
            await ann.wait(lambda s: s.connected and s.joined, what="reconnected")
            await ann.wait_screen("connection restored", "back at board 1")
            assert ann.session.seat == 0
            assert sum(isinstance(m, ResumeSeat) for m in ann.session.sent) == 1
            assert ann.client.buffer.text == "1"
            ann.type(ENTER)
            await ann.wait(phase_is("spell"), what="the card was chosen")


async def test_an_r_meant_for_try_again_is_not_typed_when_the_connection_came_back_by_itself(
    server, tmp_path
):
    """Found by a newcomer: the client gave up ("r: try again"), then reached the server on its
    own (it tries now and then); the r pressed as the screen had asked landed in the summoning
    word asked for by then. Through the real key bindings: that one r is dropped, said so, and
    the next is typed."""
    async with HeadlessClient(opts(server, tmp_path, create=True, ask_settings=False)) as ann:
        await ann.wait(phase_is("lobby"))
        room = ann.session.room
        async with robots(server.url, room, [dict(name="Bob"), dict(name="Cat")]):
            await ann.wait(lambda s: len(s.view.players) == 3)
            ann.type("s")
            ann.type("y")
            await ann.wait(phase_is("choose"))  # a line to type into: the category
            s = ann.session

            def back_by_itself() -> None:
                s.on_gave_up("connection refused")
                assert s.prompt() == "r or Ctrl-Q: "
                s.on_connected()  # (the client's own try, the offer still on the screen)

            await ann._call(back_by_itself)
            ann.type("r")
            await ann.idle()
            assert ann.client.buffer.text == ""
            assert s.status == (
                "info",
                "Back in the game by itself: that r was not needed, nothing was typed.",
            )
            ann.type("r")  # a second r is the player's own
            await ann.idle()
            assert ann.client.buffer.text == "r"


async def test_join_errors_read_as_sentences(server, tmp_path):
    async with HeadlessClient(opts(server, tmp_path, room="ZZZZ", name="Ann")) as ann:
        screen = await ann.wait_screen("Room code to join (4 letters):")
        assert "Traceback" not in screen
        assert ann.session.status[0] == "error"
        assert "ZZZZ" in ann.session.status[1] or "room" in ann.session.status[1].lower()
        # Said once: on the status line, with the field to change; not again in the feed.
        said = ann.session.status[1]
        assert not [f for f in ann.session.feed if said in f.text or "could not" in f.text]
        assert screen.count(said[:40]) == 1, screen


async def test_default_settings_roundtrip_through_the_lobby(server, tmp_path):
    async with HeadlessClient(
        opts(
            server,
            tmp_path,
            create=True,
            ask_settings=False,
            settings=RoomSettings(variant="dark-magic"),
        )
    ) as ann:
        await ann.wait(phase_is("lobby"))
        await ann.wait_screen("variant: Dark Magic")
        ann.type("e")
        await ann.wait_screen("Room settings", "Variant: 1 standard, 2 dark magic [2]:")
        for answer in ("1", "off", "", "n", ""):
            await ann.line(answer)
        await ann.wait(
            lambda s: (
                s.view.settings.variant == "standard"
                and s.view.settings.limits.spell is None
                and not s.view.settings.spectators
            )
        )
        await ann.wait_screen("variant: standard", "spectators: not allowed", "spell off")


async def test_a_player_the_host_removes_from_the_lobby_sees_the_way_on_not_the_lobby(
    server, tmp_path
):
    """Seen at 80x24: Bob, removed, still saw the lobby with his own seat marked and the line
    to share, under a status line that said he was out."""
    async with open_client(server.url, "Ann") as ann:
        code = await ann.create()
        async with HeadlessClient(opts(server, tmp_path, name="Bob Lee", room=code)) as bob:
            await bob.wait_screen("Lobby: 2 players seated", "/say chat")
            await ann.send(KickPlayer(seat=1))
            screen = await bob.wait_screen(f"You are no longer in room {code}")
            assert "The host removed you from the room." in screen
            assert f"conjure play {server.url} --name 'Bob Lee' --create" in screen
            assert "players seated" not in screen and "--room " + code not in screen
            assert "▶" not in screen and "spell word" not in screen  # no board, no seat as his
            assert "/say chat" not in screen  # nothing can be said any more
            assert "lobby" not in screen.splitlines()[0]  # the header names no lobby of his


async def test_a_player_removed_from_a_game_is_told_the_game_goes_on_without_them(server, tmp_path):
    """Seen in a review: a player the host removed mid-game still saw the game's board under
    "disconnected: the host removed you from the game", as if still playing."""
    async with open_client(server.url, "Ann") as ann, open_client(server.url, "Cy") as cy:
        code = await ann.create(RoomSettings(spectators=True))
        async with HeadlessClient(opts(server, tmp_path, name="Bob Lee", room=code)) as bob:
            await bob.wait_screen("Lobby: 2 players seated")
            await cy.join(code)
            await ann.wait_view(lambda v: len(v.players) == 3)
            await ann.send(StartGame())
            await bob.wait(phase_is("choose"), what="the game to start")
            await ann.send(KickPlayer(seat=1))
            screen = await bob.wait_screen(f"You are no longer in room {code}")
            assert "The host removed you from the game." in screen
            assert "The game goes on without you." in screen
            assert f"conjure watch {server.url} --room {code}" in screen
            assert "round 1/3" not in screen and "⏱" not in screen  # nor the game's header
            assert "✦" not in screen and "spell word" not in screen  # the board is gone
            assert bob.session.me is not None and bob.session.me.kicked  # it saw the removal
        await cy.wait_view(lambda v: v.players[1].kicked)


async def test_a_removal_that_ends_the_game_shows_the_removed_player_the_final_standings(
    server, tmp_path
):
    """Removing the last round's conjurer voids that round and ends the game in the same update:
    the removed player was told the game went on without them, and offered to watch it."""
    async with open_client(server.url, "Ann") as ann, open_client(server.url, "Cy") as cy:
        code = await ann.create(RoomSettings(spectators=True))
        await cy.join(code)
        async with HeadlessClient(opts(server, tmp_path, name="Bob", room=code)) as bob:
            await ann.wait_view(lambda v: len(v.players) == 3)  # Bob at seat 3: round 3's conjurer
            await ann.send(StartGame())
            await bob.wait(phase_is("choose"), what="the game to start")
            for seat, next_round in ((0, 2), (1, 3)):  # the first two conjurers skipped
                await ann.send(SkipPlayer(seat=seat))
                await ann.wait_view(lambda v, r=next_round: v.round == r)
            await ann.send(KickPlayer(seat=2))
            screen = await bob.wait_screen("the host removed you from the game")
            assert bob.session.view is not None and bob.session.view.phase == "over"
            assert "goes on without you" not in screen and "conjure watch" not in screen
            assert "Bob (you, removed)" in screen, screen  # the final standings, his place in them


async def test_the_client_keeps_each_deals_commitment_and_its_own_share_as_logged(server, tmp_path):
    """The deal is fair only if a player can check the server logged the commitment it showed
    and the share the client sent: the client kept neither (an audit review)."""
    import json

    from conjure.protocol.statedir import SECRETS_FILE
    from conjure.server.audit_verify import audit
    from conjure.server.logformat import read_log

    async with HeadlessClient(opts(server, tmp_path, create=True, ask_settings=False)) as ann:
        s = ann.session
        await ann.wait(phase_is("lobby"), what="lobby")
        specs = [dict(name="Bob"), dict(name="Cat")]
        async with robots(server.url, s.room, specs):
            await ann.wait(lambda s: len(s.view.players) == 3)
            ann.type("s")
            ann.type("y")  # the host is asked first
            await ann.wait(phase_is("choose"), what="the game to start")
            (log,) = server.config.replays.glob("*.jsonl")
            deal = read_log(log).records[0].data["deal"]
            kept = s.store.load_deals()
            assert [(d["room"], d["commitment"]) for d in kept] == [(s.room, deal["commitment"])]
            assert kept[0]["server"] == server.url
            assert deal["contributions"][str(s.view.you)] == kept[0]["share"]
            you = s.view.you
            state = s.store.path
    # Read and changed once the client is gone: it writes its secrets file as it plays, and a
    # write of its own could put back what the test had just changed.
    # conjure replay reads what the client kept: it agrees, then a lie of each kind fails
    found = audit(log, state_dirs=[state])
    assert not found.kinds.get("deal") and len(found.deal_kept) == 1, found.problems
    # Ann's share is hers, as her client kept it; Bob's and Cat's are the server's word alone
    # (the deal's line said every seat "added a share": found by review)
    (said,) = [n for n in found.notes if n.startswith("the deal:")]
    assert said.startswith("the deal: the shares of Bob and Cat in the log are the server's")
    assert any(n.startswith("the deal: every seat's share") for n in audit(log).notes)
    secrets = state / SECRETS_FILE
    kept_doc = json.loads(secrets.read_text())
    for field, lie in (("share", "ab" * 32), ("commitment", "cd" * 32)):
        doc = json.loads(json.dumps(kept_doc))
        (entry,) = doc["deals"].values()
        entry[field] = lie
        secrets.write_text(json.dumps(doc))
        found = audit(log, state_dirs=[state])
        (problem,) = found.kinds["deal"]
        assert ("is not in the logged deal" if field == "share" else "dealt again") in problem
    # Its seat, name and the game the server then named are kept too (a review: the
    # server could give a share to another seat, choosing among n! deals, or log the
    # game under another id, and every kept deal and receipt still said ok).
    (entry,) = kept_doc["deals"].values()
    game_id = read_log(log).records[0].data["game_id"]
    assert (entry["seat"], entry["name"], entry["game_id"]) == (you, "Ann", game_id)
    other = (you + 1) % 3
    for lies, says in (
        ({"seat": other}, f"is logged as seat {you + 1}'s: the server moved shares"),
        ({"game_id": "g0000000000000001"}, "the log's game id was changed"),
        ({"room": "ZZZZ"}, "the log's room was changed"),
        ({"name": "Bob"}, "but the log seats 'Ann' there"),
        ({"share": "ab" * 32}, "holds another share for that seat: the server replaced it"),
        # a seat the deal has no share for: it came late, or the server left it out
        ({"seat": 7, "share": "ab" * 32}, "the server left it out, or it came after the deal"),
    ):
        doc = json.loads(json.dumps(kept_doc))
        (entry,) = doc["deals"].values()
        entry.update(lies)
        secrets.write_text(json.dumps(doc))
        found = audit(log, state_dirs=[state])
        (problem,) = found.kinds["deal"]
        assert says in problem, problem
    # A name the server tidied as it seated it is the same name (an honest "Ａnn" failed)
    doc = json.loads(json.dumps(kept_doc))
    (entry,) = doc["deals"].values()
    entry["name"] = "\uff21nn"  # a full-width "A"
    secrets.write_text(json.dumps(doc))
    assert not audit(log, state_dirs=[state]).kinds.get("deal")
    # An earlier deal this client was shown too, then the logged one: the server dealt again in
    # its sight, as an honest one does when it cannot create the game's log (its disk was
    # full: an honest server's players' deals failed it; found by review). Said, not failed.
    doc = json.loads(json.dumps(kept_doc))
    (entry,) = doc["deals"].values()
    doc["deals"]["earlier"] = dict(entry, commitment="ef" * 32, saved_at=entry["saved_at"] - 5)
    secrets.write_text(json.dumps(doc))
    found = audit(log, state_dirs=[state])
    assert not found.kinds.get("deal") and len(found.deal_kept) == 1, found.problems
    assert any("was also shown an earlier deal" in n for n in found.notes), found.notes


async def test_ctrl_d_on_an_empty_line_quits_and_on_a_line_with_text_does_not(server, tmp_path):
    """As in a shell: a newcomer's Ctrl-D did nothing at all."""
    async with HeadlessClient(opts(server, tmp_path, create=True, ask_settings=False)) as ann:
        await ann.wait(phase_is("lobby"))
        ann.type("/say hi")
        await ann.idle()
        ann.type("\x04")  # Ctrl-D with text on the line: an edit, not a quit
        await ann.idle()
        assert ann.client.app.is_running
        assert ann.client.buffer.text == "/say hi"
        ann.type(CTRL_U)
        await ann.idle()
        ann.type("\x04")  # nobody else seated: quits at once, as Ctrl-Q does
        await wait_until(lambda: not ann.client.app.is_running, what="the client to quit")
        assert await ann.stop() == 0


async def test_ctrl_c_with_text_clears_the_line_and_on_an_empty_one_quits(server, tmp_path):
    """Found by review: Ctrl-C, which many press to clear a line, quit the game at once with a
    spell word typed. Ctrl-V (the editor's quoted insert) and Ctrl-Z (a control character in
    the word) put nothing in the line and say what to do instead."""
    from conjure.client.app import CTRL_C_CLEARED, CTRL_V_PASTE

    async with HeadlessClient(opts(server, tmp_path, create=True, ask_settings=False)) as ann:
        await ann.wait(phase_is("lobby"))
        await keys(ann, "/say lolli")
        ann.type("\x16")  # Ctrl-V
        await ann.idle()
        await keys(ann, "pop")
        assert ann.client.buffer.text == "/say lollipop"
        assert ann.client.session.status == ("info", CTRL_V_PASTE)
        ann.type("\x1a")  # Ctrl-Z
        await ann.idle()
        assert ann.client.buffer.text == "/say lollipop"
        ann.type("\x03")  # Ctrl-C with text: the line is cleared, the game goes on
        await ann.idle()
        assert ann.client.app.is_running and ann.client.buffer.text == ""
        assert ann.client.session.status == ("info", CTRL_C_CLEARED)
        ann.type("\x03")  # on an empty line: quits (nobody else is seated)
        await wait_until(lambda: not ann.client.app.is_running, what="the client to quit")
        assert await ann.stop() == 0
