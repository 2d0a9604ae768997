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

from conjure.protocol.errors import first_of
from conjure.protocol.events import RULES_VERSION
from conjure.protocol.messages import PROTOCOL_VERSION
from conjure.protocol.program import program_here
from conjure.protocol.receiptsig import key_text
from conjure.protocol.wording import join_command, not_on_path_note
from conjure.server import receiptkey, settings, tlscert
from conjure.server.config import ServerConfig
from conjure.server.gctuning import collect_young, tune_for_serving
from conjure.server.netinfo import addresses_for, url_host
from conjure.server.service import GameServer

DEFAULT_HOST = "0.0.0.0"
DEFAULT_PORT = 8765
DEFAULT_REPLAYS = Path("replays")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default=None, help="address to listen on (default: all)")
    parser.add_argument("--port", type=int, default=None, help="port (default 8765; 0 = any free)")
    parser.add_argument(
        "--replays",
        type=Path,
        default=None,
        help="directory of game logs; unfinished games in it resume (default: replays/)",
    )
    parser.add_argument("--tls-cert", type=Path, help="certificate chain (PEM) to serve wss://")
    parser.add_argument("--tls-key", type=Path, help="private key (PEM) for --tls-cert")
    parser.add_argument(
        "--tls-self-signed",
        action="store_true",
        help="serve wss:// with this server's own certificate, made on the first start and kept"
        " (players pin its fingerprint, printed in the join lines)",
    )
    parser.add_argument(
        "--tls-dir",
        type=Path,
        help="where --tls-self-signed keeps its certificate (default: server-tls in the state"
        " directory)",
    )
    parser.add_argument(
        "--receipt-key",
        type=Path,
        metavar="FILE",
        help="the file of the key this server signs receipts with, made on the first start and"
        f" kept (default: {receiptkey.KEY_FILE} in the state directory)",
    )
    settings.add_arguments(parser)


def ssl_context(cert: Path, key: Path) -> ssl.SSLContext:
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(cert, key)
    return ctx


def banner(server: GameServer, fingerprint: str | None = None) -> list[str]:
    """The lines a host reads at start: where to connect and how (and which certificate to pin)."""
    cfg = server.config
    scheme = "wss" if cfg.ssl_context is not None else "ws"
    report = server.report
    lines = [
        f"Conjure server (protocol {PROTOCOL_VERSION}, rules version {RULES_VERSION})",
        # the folder on a line of its own: the count after a long path wrapped mid-word at 80
        f"game logs in {cfg.replays.resolve()}:",
        f"  {len(report.resumed)} unfinished game(s) resumed, {report.finished} finished,"
        f" {len(report.refused)} refused, {len(report.skipped)} skipped (not game logs)",
        "Players join with one of:",
    ]
    if fingerprint is not None:
        lines.insert(-1, f"certificate fingerprint {fingerprint}")
    if cfg.receipt_key is not None:  # the key on a line of its own: copied whole at 80 columns
        lines[-1:-1] = ["receipts signed with the key (for conjure replay --server-key):"]
        lines[-1:-1] = [f"  {key_text(cfg.receipt_key)}"]
    pin = fingerprint or ""
    for addr in addresses_for(cfg.host):
        url = f"{scheme}://{url_host(addr)}:{server.port}"
        lines.append("  " + join_command(url, pin=pin))
        lines.append("  " + join_command(url, room="CODE", pin=pin))
    if (note := not_on_path_note(program_here())) is not None:
        lines.append("  " + note)
    lines.append(f"listening on {scheme}://{url_host(cfg.host)}:{server.port}")
    return lines


async def main(
    config: ServerConfig, fingerprint: str | None = None, started: list[bool] | None = None
) -> int:
    server = GameServer(config)
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with trio.open_nursery() as nursery:
            await nursery.start(server.run)
            if started is not None:
                started.append(True)  # from here on an OSError is not "cannot listen"
            tune_for_serving()
            nursery.start_soon(collect_young)
            for line in banner(server, fingerprint):
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
    try:
        chosen = settings.overrides(args)
    except settings.SettingsError as exc:
        print(f"conjure serve: {exc}", file=sys.stderr)
        return 2
    settings.setup_logging(chosen.pop("log_level", "info"))
    # The command line wins over the file, the file over the defaults.
    args.host = args.host or chosen.pop("host", None) or DEFAULT_HOST
    port = chosen.pop("port", None)
    args.port = args.port if args.port is not None else DEFAULT_PORT if port is None else port
    replays = chosen.pop("replays", None)
    args.replays = args.replays or replays or DEFAULT_REPLAYS
    chosen.pop("host", None)
    if (args.tls_cert is None) != (args.tls_key is None):
        print("conjure serve: give both --tls-cert and --tls-key, or neither", file=sys.stderr)
        return 2
    if args.tls_self_signed and args.tls_cert is not None:
        print("conjure serve: --tls-self-signed and --tls-cert exclude each other", file=sys.stderr)
        return 2
    if args.tls_dir is not None and not args.tls_self_signed:
        print("conjure serve: --tls-dir goes with --tls-self-signed", file=sys.stderr)
        return 2
    ctx = None
    fingerprint = None
    cert, key = args.tls_cert, args.tls_key
    try:
        if args.tls_self_signed:
            made = tlscert.self_signed(
                args.tls_dir or tlscert.default_tls_dir(), tlscert.server_names(args.host)
            )
            cert, key = made.cert, made.key
            how = "made a new" if made.created else "using the"
            print(f"{how} self-signed certificate in {made.cert.parent.resolve()}", flush=True)
        if cert is not None:
            fingerprint = tlscert.fingerprint_of(cert)
            tlscert.check_key_file(key)
            ctx = ssl_context(cert, key)
    except tlscert.TlsCertError as exc:
        print(f"conjure serve: {exc}", file=sys.stderr)
        return 2
    except (OSError, ssl.SSLError) as exc:
        print(f"conjure serve: cannot load the certificate: {exc}", file=sys.stderr)
        return 2
    try:
        kept = receiptkey.load_or_make(args.receipt_key or receiptkey.default_key_file())
    except receiptkey.ReceiptKeyError as exc:
        print(f"conjure serve: {exc}", file=sys.stderr)
        return 2
    if kept.created:
        print(f"made a new receipt key in {kept.path.resolve()}", flush=True)
    config = ServerConfig(
        replays=args.replays,
        host=args.host,
        port=args.port,
        ssl_context=ctx,
        receipt_key=kept.key,
        **chosen,
    )
    started: list[bool] = []
    try:
        return trio.run(main, config, fingerprint, started)
    except (OSError, BaseExceptionGroup) as exc:
        found = first_of(exc, OSError)  # e.g. the address is in use
        if found is None or started:
            raise
        if found.filename is not None:
            # A file of the replays folder, not the address (a --replays that names a file was
            # said as "cannot listen on ...: File exists": found by review).
            print(
                f"conjure serve: cannot use the game logs' folder {args.replays}: "
                f"{found.strerror or found} ({found.filename})",
                file=sys.stderr,
            )
            return 1
        print(f"conjure serve: cannot listen on {args.host}:{args.port}: {found}", file=sys.stderr)
        return 1
