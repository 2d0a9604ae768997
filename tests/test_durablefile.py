"""Files written whole or not at all (protocol.durablefile): a client's tokens and receipts and a
server's keys all go through it, so none is written through a link planted at a guessable name
(found by review in the server's key files; the client's state files had the same pattern)."""

from __future__ import annotations

import os
import stat

import pytest

from conjure.client.statefile import StateDir, write_private
from conjure.protocol.durablefile import write_whole


def _planted(folder, name, victim):
    """Links at the names the writers used to use (``.NAME.PID.tmp``), pointing at ``victim``."""
    for pid in {os.getpid(), 1, os.getppid()}:
        (folder / f".{name}.{pid}.tmp").symlink_to(victim)


def _left(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if not p.is_symlink())


@pytest.mark.parametrize("overwrite", [True, False])
def test_a_planted_link_is_never_written_through(tmp_path, overwrite):
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    victim.chmod(0o644)
    folder = tmp_path / "d"
    folder.mkdir()
    _planted(folder, "f.json", victim)
    write_whole(folder / "f.json", b"data\n", 0o600, overwrite=overwrite)
    assert victim.read_text() == "precious\n" and stat.S_IMODE(victim.stat().st_mode) == 0o644
    assert (folder / "f.json").read_bytes() == b"data\n" and not (folder / "f.json").is_symlink()
    assert stat.S_IMODE((folder / "f.json").stat().st_mode) == 0o600
    assert _left(folder) == ["f.json"]  # no temporary file stays


def test_replacing_keeps_the_mode_and_leaves_nothing_behind(tmp_path):
    path = tmp_path / "f"
    for n in range(3):
        write_whole(path, f"v{n}".encode(), 0o600, overwrite=True)
    assert path.read_text() == "v2" and _left(tmp_path) == ["f"]


def test_a_file_that_must_not_be_overwritten_is_not(tmp_path):
    path = tmp_path / "key.pem"
    write_whole(path, b"first", 0o600, overwrite=False)
    with pytest.raises(FileExistsError):
        write_whole(path, b"second", 0o600, overwrite=False)
    dangling = tmp_path / "dangling.pem"
    dangling.symlink_to(tmp_path / "nowhere")
    with pytest.raises(FileExistsError):
        write_whole(dangling, b"x", 0o600, overwrite=False)
    assert path.read_bytes() == b"first" and not (tmp_path / "nowhere").exists()
    assert _left(tmp_path) == ["key.pem"]


def test_the_clients_state_files_go_the_same_way(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    store = StateDir(tmp_path / "state")
    store.ensure()
    _planted(store.path, "secrets.json", victim)
    store.save_seat("ws://127.0.0.1:1", "ABCD", seat=0, player_id="p0", token="t" * 43, name="Ann")
    assert victim.read_text() == "precious\n"
    assert store.load_seat("ws://127.0.0.1:1", "ABCD")["token"] == "t" * 43
    write_private(store.path / "x" / "y.json", b"{}")  # its folder made, mode 0700
    assert stat.S_IMODE((store.path / "x").stat().st_mode) == 0o700
