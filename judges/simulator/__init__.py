"""The local vendor simulator: a test double speaking the Anthropic and OpenAI HTTP APIs.

No machine here reaches a vendor, and a fresh user may have no key, so this server answers
`POST /v1/messages` (Anthropic Messages, forced tool use, usage with cache tokens, Message
Batches) and `POST /v1/chat/completions` (OpenAI, tool calls or json_schema, usage) well
enough for the real SDKs, pointed at it by base URL, to work unchanged. Every verdict it
produces is simulated; Docket records that on each verdict from the endpoint it called.

One job per module:

- `vendor.py`: what a simulated model answers (`Simulator`, `SimModel`, `Truth`), its
  faults, its latency and the tokens the vendor would bill;
- `formats.py`: the two vendors' request and response shapes;
- `batches.py`: Anthropic Message Batches;
- `app.py`: the HTTP routes (`SimulatorApp`);
- `server.py`: the asyncio HTTP/1.1 server (`SimulatorServer`, `start_in_thread`);
- `oracle.py`: the gold-label oracle the `simulate_vendor` command and the demo use.

This package exports what callers outside it use.
"""

from judges.simulator.formats import anthropic_message, parse_anthropic
from judges.simulator.server import SimulatorServer, make_server, start_in_thread
from judges.simulator.vendor import SimModel, Simulator, Truth, describe, load_config

__all__ = [
    "SimModel",
    "Simulator",
    "SimulatorServer",
    "Truth",
    "anthropic_message",
    "describe",
    "load_config",
    "make_server",
    "parse_anthropic",
    "start_in_thread",
]
