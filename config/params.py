"""Read numbers from query strings without letting a bad one become a 500, and answer 400."""

from django.shortcuts import render

# Nine digits always fit the databases' 32-bit integer columns (and SQLite's 64-bit ones).
MAX_DIGITS = 9


def number_param(text: str | None) -> int | None:
    """Return the query parameter as a non-negative number, or None when it is not one.

    `str.isdigit` alone accepts "²" and "١" (which `int` refuses or reads unexpectedly) and
    any length (which overflows a database integer): only ASCII digits, at most MAX_DIGITS.
    """
    if text is None or not (text.isascii() and text.isdigit()) or len(text) > MAX_DIGITS:
        return None
    return int(text)


def bad_request_page(request, reason: str):
    """Answer 400 with the reason on the error page (a query parameter that cannot be read, say)."""
    return render(request, "400.html", {"reason": reason}, status=400)
