"""Serve the local vendor simulator: `python -m simulator --port 8765 [--truth FILE] [--config FILE]`.

Every verdict it gives is simulated. `make run` (`bin/run-local`) starts it under the
supervisor with the truth file `seed_demo` wrote; `manage.py export_simulator_truth` writes
one from any gold set.
"""

from __future__ import annotations

import argparse
import socket
import sys

from aiohttp import web

from simulator.app import SimulatorApp
from simulator.server import LISTEN_BACKLOG, SHUTDOWN_GRACE_S, web_application
from simulator.truth import TruthFile
from simulator.vendor import Simulator, describe, load_config


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m simulator",
        description="The local vendor simulator: a test double for the Anthropic and OpenAI APIs. "
        "Its verdicts are simulated.",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--config", help='JSON file: {"models": {name: {...}}, "default": {...}}')
    parser.add_argument("--latency-ms", type=float, help="Override every model's latency (fixed, no jitter).")
    parser.add_argument(
        "--truth", help="JSON-lines truth file (manage.py export_simulator_truth); read again when it changes."
    )
    arguments = parser.parse_args(argv)
    if arguments.latency_ms is not None and arguments.latency_ms < 0:
        parser.error("--latency-ms must not be negative")
    return arguments


def simulator_from(arguments: argparse.Namespace) -> Simulator:
    models, default = load_config(arguments.config) if arguments.config else ({}, None)
    oracle = TruthFile(arguments.truth) if arguments.truth else None
    simulator = Simulator(models=models, default=default, oracle=oracle)
    if arguments.latency_ms is not None:
        for model in [*simulator.models.values(), simulator.default]:
            model.latency_ms, model.latency_jitter_ms = arguments.latency_ms, 0.0
    return simulator


def main(argv: list[str] | None = None) -> int:
    arguments = parse_arguments(argv)
    simulator = simulator_from(arguments)
    try:
        listening = socket.create_server((arguments.host, arguments.port), backlog=LISTEN_BACKLOG)
    except OSError as exc:
        print(f"cannot listen on {arguments.host}:{arguments.port}: {exc}", file=sys.stderr)
        return 1
    names = ", ".join(row["model"] for row in describe(simulator.models))
    truth = f", truth from {arguments.truth}" if arguments.truth else ""
    print(
        f"Vendor simulator (SIMULATED verdicts) on http://{arguments.host}:{listening.getsockname()[1]} "
        f"models: {names}{truth}",
        flush=True,
    )
    web.run_app(
        web_application(SimulatorApp(simulator)),
        sock=listening,
        print=None,
        access_log=None,
        shutdown_timeout=SHUTDOWN_GRACE_S,
        handler_cancellation=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
