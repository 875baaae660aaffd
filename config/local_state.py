"""Create the local state a command needs: the var/ folder and the generated secret key.

Importing settings writes nothing; `manage.py` calls `local_state_prepare()` before it
reads them, and `make worker` / `make bench` run it too. It reads only the two variables
it needs, through `config/env.py` like the settings.
"""

import secrets
from pathlib import Path

from config.env import env_path, env_text
from config.private_files import write_private_file

BASE_DIR = Path(__file__).resolve().parent.parent


def local_state_prepare() -> Path:
    """Make DOCKET_VAR_DIR (default ./var), var/static and, unless SECRET_KEY is set, var/secret_key."""
    var_dir = env_path("DOCKET_VAR_DIR", BASE_DIR / "var")
    # STATIC_ROOT: WhiteNoise warns on every start when it is missing.
    (var_dir / "static").mkdir(parents=True, exist_ok=True)
    key_file = var_dir / "secret_key"
    if not env_text("SECRET_KEY") and not key_file.exists():
        # Mode 0600 from the first byte, and never a half-written key: two commands
        # starting at once keep the first one's.
        write_private_file(key_file, secrets.token_urlsafe(50), replace=False)
    return var_dir
