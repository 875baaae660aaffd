"""The app's URLs plus one that fails, for the 500 page's browser test (ROOT_URLCONF in that test only)."""

from django.urls import path

from config.urls import handler500, urlpatterns  # noqa: F401 — handler500 is read from this module


def _fail(request):
    raise RuntimeError("a deliberate failure for the 500 page's test")


urlpatterns = [*urlpatterns, path("boom/", _fail)]
