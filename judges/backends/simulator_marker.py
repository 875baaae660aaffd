"""How a verdict says it came from the local vendor simulator: the simulator's own marker.

The simulator (`simulator/`, outside the apps: it writes the same two names in
`simulator/conventions.py`) stamps every answer it gives: a response header
(`x-docket-simulator: 1`) and a field in the JSON body (`"docket_simulator": true`, on each
Message Batch result line too). A vendor backend reads them from the SDK's raw response
and records a verdict as `simulated` exactly when its answer carried the marker, whatever
base URL the version names: the simulator behind a proxy or on another port is still
simulated, and a real vendor reached on a URL that looks like the simulator's is not.
A call that got no answer at all (every attempt timed out) carries no marker: not simulated.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from judges.backends.vendors import DEFAULT_HOSTS

SIMULATOR_HEADER = "x-docket-simulator"
SIMULATOR_FIELD = "docket_simulator"
# What a verdict records as its endpoint when the simulator answered.
SIMULATED_ENDPOINT = "simulated"


def answer_is_simulated(*, headers=None, body=None) -> bool:
    """Say whether an answer carries the simulator's marker, in its headers or its JSON body."""
    if headers is not None and headers.get(SIMULATOR_HEADER):
        return True
    return isinstance(body, dict) and body.get(SIMULATOR_FIELD) is True


def endpoint_host(endpoint) -> str:
    """The host a backend sends its calls to (the vendor's default host without a base URL)."""
    if endpoint.base_url:
        return urlsplit(endpoint.base_url).netloc or endpoint.base_url
    return DEFAULT_HOSTS.get(endpoint.vendor, endpoint.vendor)


def answer_trace(endpoint, *, simulated: bool) -> dict:
    """The trace fields an answer decides: `simulated`, and `endpoint` ("simulated" or the host called)."""
    return {"simulated": simulated, "endpoint": SIMULATED_ENDPOINT if simulated else endpoint_host(endpoint)}
