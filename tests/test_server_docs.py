"""docs/PROTOCOL.md stays true: its commit-then-reveal test vector, and every error code documented."""

from __future__ import annotations

import re
from pathlib import Path

from protocol.commitment import check_reveal, commitment, commitment_preimage

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


def _codes_in_source() -> set[str]:
    codes: set[str] = set()
    patterns = [
        r'Rejected\(\s*"([a-z_]+)"',
        r'Rejection\(\s*"([a-z_]+)"',
        r'RoomError\(\s*"([a-z_]+)"',
        r'code="([a-z_]+)"',
    ]
    for path in [*ROOT.glob("server/*.py"), *ROOT.glob("server/rules/*.py")]:
        text = path.read_text()
        for p in patterns:
            codes.update(re.findall(p, text))
    return codes


def test_every_error_code_is_documented():
    documented = set(re.findall(r"^\| `([a-z_]+)`", DOC, re.M))
    documented |= set(re.findall(r"`([a-z_]+)`", DOC.split("### Game errors")[1]))
    missing = _codes_in_source() - documented
    assert not missing, f"error codes missing from docs/PROTOCOL.md: {sorted(missing)}"
