"""
WSGI config for config project.

It exposes the WSGI callable as a module-level variable named ``application``: the site's
Django handler, with the machine endpoints (the ingestion API, OTLP, `/health/`) sent to a
handler without the site's middleware (`config/machine.py`).

For more information on this file, see
https://docs.djangoproject.com/en/5.2/howto/deployment/wsgi/
"""

import os

from django.core.wsgi import get_wsgi_application

from config.machine import machine_or_site

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

application = machine_or_site(get_wsgi_application())
