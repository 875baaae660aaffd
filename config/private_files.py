"""Write files that hold a secret (keys, DSNs, passwords) readable by their owner only.

A file created with `write_text` and chmod-ed afterwards is readable by anyone the umask
allows for as long as it takes to chmod it, and forever if the process dies in between. Here
the file is created with mode 0600 (`os.open`), under a temporary name, and renamed into
place once written: no reader ever sees it with another mode, or half written.

Imports nothing of Django: `config/local_state.py` uses it before settings exist.
"""

import os
from pathlib import Path

PRIVATE_MODE = 0o600


def write_private_file(path: Path, text: str, *, replace: bool = True) -> bool:
    """Write `text` to `path` with mode 0600 from its first byte; return whether it was written.

    With `replace=False` an existing file is kept (two processes creating the same key at
    once: the first one's stays, the second's is discarded).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_MODE)
    try:
        with os.fdopen(descriptor, "w") as file:
            # O_CREAT's mode is masked by the umask (which can only take bits away); fchmod
            # is not, and it acts on the file before any byte is in it.
            os.fchmod(file.fileno(), PRIVATE_MODE)
            file.write(text)
        if replace:
            os.replace(partial, path)
            return True
        try:
            os.link(partial, path)  # fails if the file exists: never overwrites
        except FileExistsError:
            return False
        return True
    finally:
        partial.unlink(missing_ok=True)
