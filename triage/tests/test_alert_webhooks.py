"""Alert deliveries against a real local HTTP receiver and Django's mail outbox."""

import hashlib
import hmac
import json
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.core.management import CommandError, call_command

from triage.alert_models import Alert, AlertDelivery, AlertRecipient, Webhook
from triage.alerts import alert_acknowledge, alert_raise, alert_resolve, deliveries_requeue_stale
from triage.tests.alert_receiver import Receiver
from triage.webhooks import webhook_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def receiver():
    server = Receiver()
    yield server
    server.close()


def add_webhook(url, kind="json") -> str:
    """Register a webhook through the command; return the secret it printed."""
    out = StringIO()
    call_command("add_webhook", url, "--kind", kind, stdout=out)
    return next(line for line in out.getvalue().splitlines() if line.startswith("secret: ")).removeprefix("secret: ")


def raise_alert(capture, cause="queue_sla", message="The queue is late."):
    with capture(execute=True):
        return alert_raise(kind=Alert.Kind.QUEUE_SLA, cause_key=cause, message=message, details={"waited_minutes": 90})


def test_a_json_webhook_gets_the_alert_signed_with_the_secret_the_command_printed(
    receiver, eager_tasks, django_capture_on_commit_callbacks
):
    secret = add_webhook(receiver.url)
    alert = raise_alert(django_capture_on_commit_callbacks)
    [post] = receiver.posts
    expected = "sha256=" + hmac.new(secret.encode(), post.body, hashlib.sha256).hexdigest()
    assert hmac.compare_digest(post.headers["X-Docket-Signature"], expected)
    payload = json.loads(post.body)
    assert payload["type"] == "docket.alert" and payload["id"] == alert.pk
    assert payload["kind"] == "queue_sla" and payload["cause"] == "queue_sla"
    assert payload["message"] == "The queue is late." and payload["details"] == {"waited_minutes": 90}
    delivery = AlertDelivery.objects.get(alert=alert)
    assert (delivery.status, delivery.attempts, delivery.response_status) == ("sent", 1, 204)


def test_a_signature_under_another_secret_does_not_verify(receiver, eager_tasks, django_capture_on_commit_callbacks):
    add_webhook(receiver.url)
    raise_alert(django_capture_on_commit_callbacks)
    [post] = receiver.posts
    forged = "sha256=" + hmac.new(b"not-the-secret", post.body, hashlib.sha256).hexdigest()
    assert not hmac.compare_digest(post.headers["X-Docket-Signature"], forged)


def test_each_webhook_has_its_own_secret_and_the_database_holds_neither(receiver):
    first, second = add_webhook(receiver.url), add_webhook(receiver.url)
    assert first != second and len(first) == 64
    stored = json.dumps(list(Webhook.objects.values()), default=str)
    assert first not in stored and second not in stored


def test_a_slack_webhook_gets_text_and_blocks(receiver, eager_tasks, django_capture_on_commit_callbacks):
    add_webhook(receiver.url, kind="slack")
    raise_alert(django_capture_on_commit_callbacks)
    payload = json.loads(receiver.posts[0].body)
    assert "The queue is late." in payload["text"]
    assert [block["type"] for block in payload["blocks"]] == ["header", "section", "context"]
    assert payload["blocks"][1]["text"]["text"] == "The queue is late."


def test_a_failing_receiver_is_retried_until_it_answers(eager_tasks, django_capture_on_commit_callbacks):
    server = Receiver(statuses=[503, 500, 204])
    try:
        add_webhook(server.url)
        alert = raise_alert(django_capture_on_commit_callbacks)
    finally:
        server.close()
    assert len(server.posts) == 3
    assert len({post.body for post in server.posts}) == 1  # one body, one signature, every try
    delivery = AlertDelivery.objects.get(alert=alert)
    assert (delivery.status, delivery.attempts, delivery.response_status) == ("sent", 3, 204)


def test_a_receiver_that_keeps_failing_is_logged_failed_after_the_retries(
    eager_tasks, django_capture_on_commit_callbacks
):
    server = Receiver(statuses=[500])
    try:
        add_webhook(server.url)
        alert = raise_alert(django_capture_on_commit_callbacks)
    finally:
        server.close()
    delivery = AlertDelivery.objects.get(alert=alert)
    assert delivery.status == "failed" and delivery.attempts == 6 and delivery.last_error == "HTTP 500"


def test_a_refusing_receiver_is_not_retried(receiver, eager_tasks, django_capture_on_commit_callbacks):
    receiver.statuses = [404]
    add_webhook(receiver.url)
    alert = raise_alert(django_capture_on_commit_callbacks)
    assert len(receiver.posts) == 1
    assert AlertDelivery.objects.get(alert=alert).status == "failed"


def test_an_unreachable_receiver_is_retried_and_logged(eager_tasks, django_capture_on_commit_callbacks):
    webhook_create(url="http://127.0.0.1:1/hook", kind="json")
    alert = raise_alert(django_capture_on_commit_callbacks)
    delivery = AlertDelivery.objects.get(alert=alert)
    assert delivery.status == "failed" and delivery.attempts == 6 and "refused" in delivery.last_error.lower()
    assert Alert.objects.filter(pk=alert.pk).exists()  # the alert stays listed whatever the receiver did


def test_the_same_cause_is_not_sent_again_until_its_alert_is_resolved(
    receiver, eager_tasks, django_capture_on_commit_callbacks
):
    add_webhook(receiver.url)
    first = raise_alert(django_capture_on_commit_callbacks)
    assert raise_alert(django_capture_on_commit_callbacks) is None
    alert_acknowledge(alert_id=first.pk, user=None)
    assert raise_alert(django_capture_on_commit_callbacks) is None
    assert len(receiver.posts) == 1
    alert_resolve(alert_id=first.pk)
    assert raise_alert(django_capture_on_commit_callbacks) is not None
    assert len(receiver.posts) == 2
    assert raise_alert(django_capture_on_commit_callbacks, cause="live_failed") is not None  # another cause
    assert len(receiver.posts) == 3


def test_alerts_are_e_mailed_to_the_users_an_admin_chose(eager_tasks, django_capture_on_commit_callbacks):
    users = get_user_model().objects
    chosen = users.create_user(username="oncall", email="oncall@example.com")
    users.create_user(username="bystander", email="bystander@example.com")
    AlertRecipient.objects.create(user=chosen)
    alert = raise_alert(django_capture_on_commit_callbacks)
    [message] = mail.outbox
    assert message.to == ["oncall@example.com"]
    assert "The queue is late." in message.body and "queue_sla" in message.body
    assert AlertDelivery.objects.get(alert=alert, channel="email").status == "sent"


def test_a_delivery_the_broker_never_took_is_sent_by_the_sweeper(receiver, eager_tasks):
    add_webhook(receiver.url)
    alert = alert_raise(kind=Alert.Kind.QUEUE_SLA, cause_key="queue_sla", message="late", details={})  # no commit
    assert receiver.posts == []
    AlertDelivery.objects.filter(alert=alert).update(created_at=alert.created_at.replace(year=2020))
    assert deliveries_requeue_stale() == 1
    assert len(receiver.posts) == 1 and AlertDelivery.objects.get(alert=alert).status == "sent"


@pytest.mark.parametrize("url", ["ftp://example.com/hook", "file:///etc/passwd", "http://user:pw@example.com/hook"])
def test_add_webhook_refuses_what_it_cannot_post_to(url):
    with pytest.raises(CommandError):
        call_command("add_webhook", url, stdout=StringIO())
    assert not Webhook.objects.exists()


def test_add_webhook_accepts_loopback_addresses():
    for url in ("http://127.0.0.1:9/hook", "http://localhost:8080/h", "http://[::1]:9/h"):
        add_webhook(url)
    assert Webhook.objects.count() == 3
