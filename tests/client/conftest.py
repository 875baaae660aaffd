"""The client's tests import it from its source folder: `make test` needs no `pip install` first."""

import sys
from pathlib import Path

CLIENT_SOURCE = Path(__file__).resolve().parents[2] / "clients" / "python" / "src"
if str(CLIENT_SOURCE) not in sys.path:
    sys.path.insert(0, str(CLIENT_SOURCE))
