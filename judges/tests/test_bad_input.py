"""Bad input to the judge pages gets a 400 with a message, never a 500 (issue 26, item 7)."""

import pytest
from django.urls import reverse

from judges.tests.calibration_builders import make_judge_version

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("params", [{"left": "abc"}, {"right": "1x"}, {"left": "-1"}, {"left": "9" * 30}])
def test_comparing_versions_that_are_not_numbers_is_a_400_that_says_why(client_for, params):
    version = make_judge_version("compared")
    make_judge_version("compared", number=2)
    client = client_for("ml_engineer")
    client.raise_request_exception = False
    response = client.get(reverse("judges:judge_compare", args=[version.judge.pk]), params)
    assert response.status_code == 400
    assert "is not a version number" in response.content.decode()


def test_comparing_a_version_the_judge_does_not_have_is_a_404(client_for):
    version = make_judge_version("compared")
    client = client_for("ml_engineer")
    assert client.get(reverse("judges:judge_compare", args=[version.judge.pk]), {"left": 7}).status_code == 404
