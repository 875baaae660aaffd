"""Create the local state a command needs: the var/ folder and the generated secret key.

Importing settings writes nothing; `manage.py` calls `local_state_prepare()` before it
reads them, and `make worker` / `make bench` run it too. It reads only the two variables
it needs.
"""

import os
import secrets
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent


def local_state_prepare() -> Path:
    """Make DOCKET_VAR_DIR (default ./var), var/static and, unless SECRET_KEY is set, var/secret_key."""
    var_dir = Path(os.environ.get("DOCKET_VAR_DIR", "").strip() or BASE_DIR / "var")
    # STATIC_ROOT: WhiteNoise warns on every start when it is missing.
    (var_dir / "static").mkdir(parents=True, exist_ok=True)
    key_file = var_dir / "secret_key"
    if not os.environ.get("SECRET_KEY", "").strip() and not key_file.exists():
        # Written under a temporary name and renamed: two commands starting at once never
        # read a half-written key.
        partial = key_file.with_name(f".secret_key.{os.getpid()}")
        partial.write_text(secrets.token_urlsafe(50))
        partial.chmod(0o600)
        partial.replace(key_file) if not key_file.exists() else partial.unlink()
    return var_dir
