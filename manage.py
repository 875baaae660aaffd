#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

import os
import sys

from django.core.management import execute_from_command_line

from config.local_state import local_state_prepare


def main():
    """Run administrative tasks."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    # Before settings are read: they read the secret key file this creates.
    local_state_prepare()
    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
