from django.contrib.auth.decorators import login_not_required
from django.db import connection
from django.http import HttpResponseServerError, JsonResponse
from django.shortcuts import render

from config.roles import user_roles


def home(request):
    """Show each role's starting points; the navigation already hides the rest."""
    return render(request, "home.html", {"user_role_names": sorted(user_roles(request.user))})


@login_not_required
def health(request):
    """Answer 200 when the database answers: for load balancers and `make run`'s wait."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return JsonResponse({"status": "ok"})


def server_error_page(request):
    """Answer 500 with the styled error page (navigation kept); plain text if that page itself fails.

    Django's own handler renders 500.html without the request, so the page would lose the
    signed-in navigation; and whatever broke (the database, say) may break the page too.
    """
    try:
        return render(request, "500.html", status=500)
    except Exception:  # noqa: BLE001 — the error page must answer whatever else is broken
        return HttpResponseServerError(
            "Server error (500): the request could not be completed.", content_type="text/plain"
        )
