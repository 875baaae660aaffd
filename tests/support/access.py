"""How the permission tests read an answer: a redirect to the login page is a denial."""

from django.urls import reverse


def admitted(response) -> bool:
    """Say whether a request got through: 200, or a redirect anywhere but the login page."""
    if response.status_code == 200:
        return True
    if response.status_code == 302:
        return not response["Location"].startswith(reverse("login"))
    return False


def denied(response) -> bool:
    """Say whether a request was refused: 403, or a redirect to the login page."""
    if response.status_code == 403:
        return True
    return response.status_code == 302 and response["Location"].startswith(reverse("login"))
