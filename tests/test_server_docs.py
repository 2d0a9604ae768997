"""docs/PROTOCOL.md stays true: its commit-then-reveal test vector, and every error code documented."""

from __future__ import annotations

import re
from pathlib import Path

from wsclient import open_client

from conjure.protocol import messages as m
from conjure.protocol.commitment import check_reveal, commitment, commitment_preimage
from conjure.protocol.errors import ERROR_CODES

ROOT = Path(__file__).parent.parent
DOC = (ROOT / "docs" / "PROTOCOL.md").read_text()


def _block_after(marker: str) -> str:
    start = DOC.index(marker) + len(marker)
    return DOC[start:]


def test_commitment_test_vector_in_the_doc():
    section = _block_after("**Test vector.**")
    pre_hex = "".join(
        re.search(r"preimage \(115 bytes, hex\):\n((?:\s+[0-9a-f]+\n)+)", section).group(1).split()
    )
    digest = re.search(r"commitment:\n\s+([0-9a-f]{64})", section).group(1)
    nonce = bytes(range(32))
    assert commitment_preimage("g0123456789abcdef", 2, 3, nonce, "rocket").hex() == pre_hex
    assert commitment("g0123456789abcdef", 2, 3, nonce, "rocket") == digest
    assert check_reveal(digest, "g0123456789abcdef", 2, 3, nonce.hex(), "rocket")
    assert not check_reveal(digest, "g0123456789abcdef", 2, 3, nonce.hex(), "Rocket")
    eclair = re.search(r"`Éclair`.*?commitment\s+is\s+`([0-9a-f]{64})`", section, re.S).group(1)
    assert commitment("g0123456789abcdef", 2, 3, nonce, "Éclair") == eclair
    assert f'"commitment": "{digest}"' in section
    assert f'"nonce": "{nonce.hex()}"' in section


#: Codes the error tables may name that no server sends (a client's own). None today.
CLIENT_ONLY_CODES: frozenset[str] = frozenset()


def _documented_codes() -> set[str]:
    """Every code in the first column of the error tables (a row may name several)."""
    errors = DOC.split("\n## Errors\n")[1].split("\n## ")[0]
    codes: set[str] = set()
    for first_column in re.findall(r"^\| (`[^|]*`) \|", errors, re.M):
        codes.update(re.findall(r"`([a-z_]+)`", first_column))
    return codes


def test_every_error_code_is_documented():
    """The codes are one Literal (protocol.errors.ErrorCode): the docs list exactly those."""
    documented = _documented_codes()
    missing = ERROR_CODES - documented
    assert not missing, f"error codes missing from docs/PROTOCOL.md: {sorted(missing)}"
    unknown = documented - ERROR_CODES - CLIENT_ONLY_CODES
    assert not unknown, f"docs/PROTOCOL.md documents codes no server sends: {sorted(unknown)}"


async def test_what_a_client_sees_where_the_doc_says_so(server):
    """PROTOCOL.md's answers to a client writer's questions, checked on a real server."""
    async with open_client(server.url, "Ann") as ann:
        # An upper-case commitment and an unknown rule fail decoding, before any rule is asked.
        await ann.send({"type": "commit_summon", "commitment": "AB" * 32})
        err = await ann.expect_error("invalid_message")
        assert "$.commitment" in err.message
        await ann.send({"type": "challenge", "seat": 1, "rule": "spelling"})
        err = await ann.expect_error("invalid_message")
        assert "$.rule" in err.message
        # A partial `limits` object is accepted: the phases it leaves out keep their defaults.
        await ann.send(
            {"type": "create_room", "name": "Ann", "settings": {"limits": {"spell": None}}}
        )
        seated = await ann.recv_until(lambda x: isinstance(x, m.Seated | m.Error))
        assert isinstance(seated, m.Seated), seated
        view = await ann.wait_view(lambda v: v.room == seated.room)
        assert view.settings.limits == m.InLimits(spell=None)
    async with open_client(server.url, "Bob") as bob:
        # A password sent to a room that has none is ignored.
        assert (await bob.join(seated.room, password="sesame")).room == seated.room
