#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

import gc
import os
import sys

from django.core.management import execute_from_command_line

from config.local_state import local_state_prepare


def main():
    """Run administrative tasks."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    # Before settings are read: they read the secret key file this creates.
    local_state_prepare()
    try:
        execute_from_command_line(sys.argv)
    finally:
        # The command is done: the interpreter's last collection at exit would walk every
        # object the app imported (0.3 s of `run_calibration`'s wall; issue 33). Freezing
        # them skips it; atexit handlers and module teardown still run.
        gc.freeze()


if __name__ == "__main__":
    main()
