from django.db import models


class WorkerHeartbeat(models.Model):
    """A row a worker writes when it runs `config.ping`: proof that a worker is alive."""

    token = models.CharField(max_length=64, unique=True)
    seen_at = models.DateTimeField(auto_now=True)

    def __str__(self):
        return f"{self.token} @ {self.seen_at:%H:%M:%S}"


class Role(models.Model):
    """No table: the home of the role permissions that belong to no one model.

    `config/roles.py` grants them (with the models' own permissions) to the role groups.
    """

    class Meta:
        managed = False
        default_permissions = ()
        permissions = [
            ("override_triage", "Can reopen a resolved triage item and decide one without its claim"),
            ("set_judge_base_url", "Can set or change a judge's vendor base URL"),
            ("allow_result_egress", "Can let a warehouse's result rows go to a vendor"),
        ]

    def __str__(self):
        return "role permissions"
