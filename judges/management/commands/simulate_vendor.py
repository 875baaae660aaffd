"""Serve the local vendor simulator (Anthropic Messages + OpenAI chat completions)."""

import threading

from django.core.management.base import BaseCommand, CommandError
from django.db import close_old_connections

from judges.simulator import SimModel, Simulator, Truth, describe, load_config, make_server
from labelling.models import GoldSetVersionItem
from probes.fingerprint import sql_fingerprint


def gold_label_oracle():
    """Look up Docket's gold labels by SQL fingerprint, so the demo judges have a truth to miss."""
    cache: dict = {}
    lock = threading.Lock()

    def oracle(sql: str):
        with lock:
            if sql in cache:
                return cache[sql]
        # The prompt does not say the dialect for sure: match the fingerprint under either.
        fingerprints = {sql_fingerprint(sql, "sqlite"), sql_fingerprint(sql, "postgres")}
        try:
            item = (
                GoldSetVersionItem.objects.filter(query__fingerprint__in=fingerprints)
                .order_by("-version__published_at")
                .values("decision", "error_class")
                .first()
            )
        finally:
            close_old_connections()
        truth = (
            None
            if item is None
            else Truth(wrong=item["decision"] == "wrong", error_class=item["error_class"] or "other")
        )
        with lock:
            cache[sql] = truth
        return truth

    return oracle


class Command(BaseCommand):
    help = (
        "Run the local vendor simulator: a test double for the Anthropic and OpenAI APIs. Its verdicts are simulated."
    )

    def add_arguments(self, parser):
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8765)
        parser.add_argument("--config", help='JSON file: {"models": {name: {...}}, "default": {...}}')
        parser.add_argument("--latency-ms", type=float, help="Override every model's latency (fixed, no jitter).")
        parser.add_argument("--no-oracle", action="store_true", help="Do not read gold labels from the database.")

    def handle(self, *args, host, port, config, latency_ms, no_oracle, **options):
        models, default = load_config(config) if config else ({}, None)
        simulator = Simulator(models=models, default=default, oracle=None if no_oracle else gold_label_oracle())
        if latency_ms is not None:
            if latency_ms < 0:
                raise CommandError("--latency-ms must not be negative")
            for model in [*simulator.models.values(), simulator.default]:
                model.latency_ms, model.latency_jitter_ms = latency_ms, 0.0
        try:
            server = make_server(host, port, simulator)
        except OSError as exc:
            raise CommandError(f"cannot listen on {host}:{port}: {exc}") from exc
        names = ", ".join(row["model"] for row in describe(simulator.models))
        self.stdout.write(
            f"Vendor simulator (SIMULATED verdicts) on http://{host}:{server.server_address[1]} models: {names}"
        )
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()


__all__ = ["Command", "SimModel"]
