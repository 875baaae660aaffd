"""Which models the local vendor simulator serves: asked as a vendor is asked, `GET /v1/models`.

The simulator answers any model name, with its default behaviour for a name it was not told
about. A simulated judge named after a vendor's model ("gpt-5") would then report figures
that look like that model's and are not. So a judge's form refuses a simulated model the
simulator does not list (`simulated_model_problem`), naming the ones it does.
"""

from __future__ import annotations

import json
import urllib.request

from django.conf import settings

from judges.backends.vendors import SIMULATOR_KEY

LIST_TIMEOUT_S = 3.0


class SimulatorUnreachable(RuntimeError):
    """The simulator did not answer its model list."""


def simulator_models() -> list[str]:
    """Return the names of the models the simulator at VENDOR_SIMULATOR_URL serves.

    A plain GET, not the vendor SDK: a web process that has not loaded the SDK (tens of MB) would
    spend seconds importing it for one small list. The simulator's own key, never a vendor's.
    """
    url = settings.VENDOR_SIMULATOR_URL.rstrip("/") + "/v1/models"
    request = urllib.request.Request(url, headers={"x-api-key": SIMULATOR_KEY, "accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=LIST_TIMEOUT_S) as response:
            return sorted(model["id"] for model in json.load(response)["data"])
    except (OSError, ValueError, KeyError, TypeError) as exc:  # unreachable, an error status, or not the list
        raise SimulatorUnreachable(f"{type(exc).__name__}: {exc}") from exc


def simulated_model_problem(model: str) -> str:
    """Say why a simulated judge may not name `model` ("" when the simulator serves it)."""
    try:
        served = simulator_models()
    except SimulatorUnreachable:
        return (
            f"the vendor simulator at {settings.VENDOR_SIMULATOR_URL} does not answer, so Docket cannot check that it "
            f"serves {model!r}: start it (make run starts it) and save again"
        )
    if model in served:
        return ""
    return (
        f"the vendor simulator serves no model named {model!r}: its figures would be the simulator's default "
        f"behaviour, not that model's. Name one it serves: {', '.join(served)} "
        "(or give the simulator that model: python -m simulator --config FILE)"
    )
