"""Rules of the codebase that no linter states: checked here so they stay true."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


MESSAGES = "conjure.protocol.messages"


def error_constructions(source: str) -> list[int]:
    """Lines that build the protocol's ``Error`` directly (``m.Error(...)``, or ``Error(...)``
    imported from protocol.messages); another library's ``Error`` (outcome's) is not it."""
    tree = ast.parse(source)
    modules: set[str] = set()  # names the messages module is bound to
    classes: set[str] = set()  # names its Error class is bound to
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "conjure.protocol":
            modules |= {a.asname or a.name for a in node.names if a.name == "messages"}
        elif isinstance(node, ast.ImportFrom) and node.module == MESSAGES:
            classes |= {a.asname or a.name for a in node.names if a.name == "Error"}
        elif isinstance(node, ast.Import):
            modules |= {a.asname or a.name for a in node.names if a.name == MESSAGES}
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if (isinstance(f, ast.Name) and f.id in classes) or (
            isinstance(f, ast.Attribute)
            and f.attr == "Error"
            and isinstance(f.value, ast.Name)
            and f.value.id in modules
        ):
            found.append(node.lineno)
    return found


def test_the_scan_sees_an_error_built_directly():
    direct = (
        "from conjure.protocol import messages as m\n"
        "from conjure.protocol.messages import Error as E\n"
        "m.Error(code='x', message='y')\n"
        "E(code='z', message='')\n"
    )
    assert error_constructions(direct) == [3, 4]
    fine = (
        "import outcome\n"
        "from conjure.protocol import messages as m\n"
        "m.error('bad_name', 'No.')\n"
        "outcome.Error(ValueError())\n"
    )
    assert error_constructions(fine) == []


def test_no_server_code_builds_an_error_message_directly():
    """The server says every error through ``m.error(code, message)``, whose ``code`` the type
    checker holds to ``ErrorCode`` (protocol/errors.py), so no undocumented code can be sent."""
    offenders = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in sorted((ROOT / "server").rglob("*.py"))
        for line in error_constructions(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []
