"""``conjure serve``: run a game server for a LAN party (or, with a certificate, for the Internet).

Prints where players can connect (the machine's own addresses, read from its interfaces) and the
exact ``conjure play`` lines, then ``listening on ws://HOST:PORT`` (a line scripts may parse for the
port). Ctrl-C or SIGTERM stop it cleanly: appends in flight finish, every client gets a goodbye and a
close frame, unfinished games resume at the next start.
"""

from __future__ import annotations

import argparse
import signal
import ssl
import sys
from pathlib import Path

import trio

from protocol.events import RULES_VERSION
from protocol.messages import PROTOCOL_VERSION
from server.config import ServerConfig
from server.gctuning import tune_for_serving
from server.netinfo import addresses_for, url_host
from server.service import GameServer


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="0.0.0.0", help="address to listen on (default: all)")
    parser.add_argument("--port", type=int, default=8765, help="port (default 8765; 0 = any free)")
    parser.add_argument(
        "--replays",
        type=Path,
        default=Path("replays"),
        help="directory of game logs; unfinished games in it resume (default: replays/)",
    )
    parser.add_argument("--tls-cert", type=Path, help="certificate chain (PEM) to serve wss://")
    parser.add_argument("--tls-key", type=Path, help="private key (PEM) for --tls-cert")


def ssl_context(cert: Path, key: Path) -> ssl.SSLContext:
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(cert, key)
    return ctx


def banner(server: GameServer) -> list[str]:
    """The lines a host reads at start: where to connect and how."""
    cfg = server.config
    scheme = "wss" if cfg.ssl_context is not None else "ws"
    report = server.report
    lines = [
        f"Conjure server (protocol {PROTOCOL_VERSION}, rules version {RULES_VERSION})",
        f"game logs in {cfg.replays.resolve()}: {len(report.resumed)} unfinished game(s) resumed,"
        f" {report.finished} finished, {len(report.refused)} refused",
        "Players join with one of:",
    ]
    for addr in addresses_for(cfg.host):
        url = f"{scheme}://{url_host(addr)}:{server.port}"
        lines.append(f"  conjure play {url} --name YOU --create")
        lines.append(f"  conjure play {url} --name YOU --room CODE")
    lines.append(f"listening on {scheme}://{url_host(cfg.host)}:{server.port}")
    return lines


async def main(config: ServerConfig) -> int:
    server = GameServer(config)
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with trio.open_nursery() as nursery:
            await nursery.start(server.run)
            tune_for_serving()
            for line in banner(server):
                config.say(line)

            async def stop_on_signal() -> None:
                async for signum in signals:
                    config.say(f"{signal.Signals(signum).name}: shutting down")
                    server.shutdown()
                    return

            nursery.start_soon(stop_on_signal)
            await server.wait_stopped()
            nursery.cancel_scope.cancel()
    config.say("stopped")
    return 0


def run(args: argparse.Namespace) -> int:
    if (args.tls_cert is None) != (args.tls_key is None):
        print("conjure serve: give both --tls-cert and --tls-key, or neither", file=sys.stderr)
        return 2
    ctx = None
    if args.tls_cert is not None:
        try:
            ctx = ssl_context(args.tls_cert, args.tls_key)
        except (OSError, ssl.SSLError) as exc:
            print(f"conjure serve: cannot load the certificate: {exc}", file=sys.stderr)
            return 2
    config = ServerConfig(replays=args.replays, host=args.host, port=args.port, ssl_context=ctx)
    try:
        return trio.run(main, config)
    except (OSError, BaseExceptionGroup) as exc:
        found = _first_oserror(exc)
        if found is None:
            raise
        print(f"conjure serve: cannot listen on {args.host}:{args.port}: {found}", file=sys.stderr)
        return 1


def _first_oserror(exc: BaseException) -> OSError | None:
    """The OSError (e.g. address in use) inside what trio.run raised, if that is what it was."""
    if isinstance(exc, OSError):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = _first_oserror(inner)
            if found is not None:
                return found
    return None
