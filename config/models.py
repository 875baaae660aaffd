from django.db import models


class WorkerHeartbeat(models.Model):
    """A row a worker writes when it runs `config.ping`: proof that a worker is alive."""

    token = models.CharField(max_length=64, unique=True)
    seen_at = models.DateTimeField(auto_now=True)

    def __str__(self):
        return f"{self.token} @ {self.seen_at:%H:%M:%S}"
