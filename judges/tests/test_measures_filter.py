from django.template import Context, Template

from judges.templatetags.measures import NOT_MEASURED


def render(value, digits):
    return Template("{% load measures %}{{ value|measured:digits }}").render(
        Context({"value": value, "digits": digits})
    )


def test_an_unmeasured_value_is_a_dash_with_a_tooltip_and_a_measured_zero_stays_zero():
    assert render(None, 4) == f'<span class="muted" title="{NOT_MEASURED}">—</span>'
    assert render(0, 4) == "0.0000"
    assert render(850.4, 0) == "850"
