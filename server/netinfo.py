"""The machine's own addresses, read from its interfaces: the server tells players where to connect.

Nothing here sends a packet. The usual trick (``connect`` a UDP socket to a public address and read
the local end) is avoided on purpose: a LAN party server has no business touching the Internet.
Sources, in order: ``ip -j addr`` (iproute2's JSON), the ``SIOCGIFADDR`` ioctl per interface name,
and finally loopback only.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import shutil
import socket
import struct
import subprocess
import sys

_SIOCGIFADDR = 0x8915  # Linux: get an interface's IPv4 address


def _from_ip_json(text: str) -> list[str]:
    """Global-scope addresses from ``ip -j addr`` output, IPv4 first."""
    v4: list[str] = []
    v6: list[str] = []
    for iface in json.loads(text):
        if "UP" not in iface.get("flags", ()) or "LOOPBACK" in iface.get("flags", ()):
            continue
        for info in iface.get("addr_info", ()):
            if info.get("scope") != "global" or not info.get("local"):
                continue
            (v4 if info.get("family") == "inet" else v6).append(info["local"])
    return v4 + v6


def _via_ip_command() -> list[str] | None:
    exe = shutil.which("ip")
    if exe is None:
        return None
    try:
        out = subprocess.run(
            [exe, "-j", "addr"], capture_output=True, text=True, timeout=2, check=True
        ).stdout
        return _from_ip_json(out)
    except (OSError, subprocess.SubprocessError, ValueError, TypeError, AttributeError):
        return None


def _via_ioctl() -> list[str] | None:
    if not sys.platform.startswith("linux"):
        return None
    import fcntl

    found: list[str] = []
    try:
        names = [name for _, name in socket.if_nameindex()]
    except OSError:
        return None
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:  # never connected or sent on
        for name in names:
            packed = struct.pack("256s", name.encode()[:15])
            with contextlib.suppress(OSError):
                raw = fcntl.ioctl(s.fileno(), _SIOCGIFADDR, packed)
                addr = socket.inet_ntoa(raw[20:24])
                if not ipaddress.ip_address(addr).is_loopback:
                    found.append(addr)
    return found


def lan_addresses() -> list[str]:
    """Addresses other machines may reach this one at; ["127.0.0.1"] when none is found."""
    for source in (_via_ip_command, _via_ioctl):
        found = source()
        if found:
            return list(dict.fromkeys(found))
    return ["127.0.0.1"]


def addresses_for(bind_host: str) -> list[str]:
    """What to print for a server bound to ``bind_host``: all LAN addresses for a wildcard."""
    if bind_host in ("", "0.0.0.0", "::"):
        found = lan_addresses()
        if bind_host == "0.0.0.0":
            found = [a for a in found if ":" not in a] or ["127.0.0.1"]
        return found
    return [bind_host]


def url_host(host: str) -> str:
    """A host as it appears in a URL (IPv6 literals in brackets)."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host
