"""Set Django up on import, for benchmarks that import models at their top.

Each benchmark imports this first, so that it also runs as a script or as a child process
(`python -m tests.bench.bench_report --phase fill`), where nothing else set Django up.
Setting up twice (under run_all, which already did) changes nothing. Like every command,
it makes its var folder and secret key first: a child process given a fresh DOCKET_VAR_DIR
has neither, and settings never write them.
"""

import os

import django

from config.local_state import local_state_prepare

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DJANGO_ENV", "local")  # benchmarks run here, with the vendor simulator
local_state_prepare()
django.setup()
