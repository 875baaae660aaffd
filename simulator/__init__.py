"""The local vendor simulator: a test double speaking the Anthropic and OpenAI HTTP APIs.

No machine here reaches a vendor, and a fresh user may have no key, so this server answers
`POST /v1/messages` (Anthropic Messages, forced tool use, usage with cache tokens, Message
Batches) and `POST /v1/chat/completions` (OpenAI, tool calls or json_schema, usage) well
enough for the real SDKs, pointed at it by base URL, to work unchanged. Every answer is
simulated and says so (its marker); Docket records that on each verdict from the endpoint it called.

A development and test tool, not part of the product: it imports nothing of Docket (no
Django, no app), and no app module imports it (`tests/test_house_layering.py`). `make run`
starts it as a process of its own (`python -m simulator`); the tests start it on a thread.
What it needs from Docket comes in from outside: the truth about an SQL text as a callable
or a file (`truth.py`), the settings of its models as a JSON file.

One job per module:

- `vendor.py`: what a simulated model answers (`Simulator`, `SimModel`, `Truth`), its
  faults, its latency and the tokens the vendor would bill;
- `conventions.py`: what it shares with Docket (marker, error classes, caching rules);
- `formats.py`: the two vendors' request and response shapes;
- `batches.py`: Anthropic Message Batches;
- `app.py`: the HTTP routes (`SimulatorApp`);
- `server.py`: the aiohttp server (`SimulatorServer`, `start_in_thread`);
- `truth.py`: a truth file as the oracle (`TruthFile`);
- `__main__.py`: the command line, `python -m simulator`.

This package exports what callers outside it use.
"""

from simulator.formats import anthropic_message, parse_anthropic
from simulator.server import SimulatorServer, make_server, start_in_thread
from simulator.truth import TruthFile
from simulator.vendor import SimModel, Simulator, Truth, describe, load_config

__all__ = [
    "SimModel",
    "Simulator",
    "SimulatorServer",
    "Truth",
    "TruthFile",
    "anthropic_message",
    "describe",
    "load_config",
    "make_server",
    "parse_anthropic",
    "start_in_thread",
]
