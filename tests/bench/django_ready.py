"""Set Django up on import, for benchmarks that import models at their top.

Each benchmark imports this first, so that it also runs as a script or as a child process
(`python -m tests.bench.bench_report --phase fill`), where nothing else set Django up.
Setting up twice (under run_all, which already did) changes nothing.
"""

import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup()
