from django.contrib.auth.decorators import login_not_required
from django.db import connection
from django.http import JsonResponse
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
