"""Judges, their immutable versions, calibration runs and verdicts."""

from django.conf import settings
from django.db import models
from django.db.models import Q

from judges.example_models import JudgeVersionExample  # noqa: F401 — a model of this app
from judges.provenance import provenance_of


class Backend(models.TextChoices):
    ANTHROPIC = "anthropic", "Anthropic (Claude)"
    OPENAI_COMPATIBLE = "openai_compatible", "OpenAI-compatible"
    VERIFIER = "verifier", "Deterministic verifier"
    HYPOTHESIS_PROBE = "hypothesis_probe", "Hypothesis + probe"
    SELF_CONSISTENCY = "self_consistency", "Self-consistency vote"
    REPLAY = "replay", "Replayed verdicts"
    LADDER = "ladder", "Verification ladder rung"


class Judge(models.Model):
    """A named checker. What it does is frozen in its versions; editing makes a new one."""

    name = models.SlugField(max_length=64, unique=True)
    # Free text as the user or another tool names it ("openai/gpt-4o"); `name` is its slug.
    # Empty means the slug is the display name.
    display_name = models.CharField(max_length=200, blank=True)
    description = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.title

    @property
    def title(self) -> str:
        return self.display_name or self.name

    @property
    def latest_version(self):
        return self.versions.order_by("-number").first()


class JudgeVersion(models.Model):
    """An immutable definition of a judge: backend, model, prompt, sampling and prices."""

    judge = models.ForeignKey(Judge, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    backend = models.CharField(max_length=32, choices=Backend.choices)
    # Vendor / model family, for the independence analysis (anthropic, openai, meta, ...).
    family = models.CharField(max_length=64, blank=True)
    model = models.CharField(max_length=128, blank=True)
    prompt_template = models.TextField(blank=True)
    temperature = models.FloatField(default=0.0)
    max_tokens = models.PositiveIntegerField(default=1024)
    # Prices in USD per million tokens.
    price_input_per_mtok = models.DecimalField(max_digits=10, decimal_places=4, default=0)
    price_output_per_mtok = models.DecimalField(max_digits=10, decimal_places=4, default=0)
    price_cache_read_per_mtok = models.DecimalField(max_digits=10, decimal_places=4, default=0)
    price_cache_write_per_mtok = models.DecimalField(max_digits=10, decimal_places=4, default=0)
    # Backend extras (base URL, samples, concurrency); never a secret.
    config = models.JSONField(default=dict, blank=True)
    # True when the version is bound to the local vendor simulator, chosen explicitly at
    # creation (config "simulated"). Whether one verdict was simulated is recorded on the
    # verdict itself, from the endpoint actually called.
    is_simulated = models.BooleanField(default=False)
    # The whole warehouse catalogue goes into the prompt when it renders within this many
    # tokens; otherwise the tables the SQL references plus one foreign-key hop.
    schema_token_budget = models.PositiveIntegerField(default=4000)
    # Opt-in: the SQL's first rows and row count (run read-only) go into the prompt too.
    include_result_preview = models.BooleanField(default=False)
    # What changed and why, in the words of whoever saved it (the edit page); not part of the
    # definition, so no diff or comparison of figures reads it.
    note = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)

    class Meta:
        ordering = ["judge", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["judge", "number"], name="judges_judgeversion_unique_number"),
        ]

    def __str__(self):
        return f"{self.judge.name} v{self.number}"


class RunStatus(models.TextChoices):
    PENDING = "pending"
    RUNNING = "running"
    CANCELLED = "cancelled"
    STOPPED_BUDGET = "stopped_budget", "Stopped at spend cap"
    COMPLETED = "completed"
    FAILED = "failed"


class CalibrationRun(models.Model):
    """Judge versions × one gold-set version × N repeats, executed on Celery."""

    label = models.CharField(max_length=100, blank=True)
    gold_set_version = models.ForeignKey(
        "labelling.GoldSetVersion", on_delete=models.PROTECT, related_name="calibration_runs"
    )
    judge_versions = models.ManyToManyField(JudgeVersion, related_name="calibration_runs")
    repeats = models.PositiveSmallIntegerField(default=3)
    status = models.CharField(max_length=16, choices=RunStatus.choices, default=RunStatus.PENDING)
    spend_cap_usd = models.DecimalField(max_digits=10, decimal_places=4, null=True, blank=True)
    total_tasks = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Progress as of the last flush of any chunk; the chunks hold the exact figures.
    done_count = models.PositiveIntegerField(default=0)
    error_count = models.PositiveIntegerField(default=0)
    spent_usd = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    # When the run was last (re)started, and how many verdicts it had then: the ETA uses
    # only the rate since then, so time spent cancelled does not distort it.
    resumed_at = models.DateTimeField(null=True, blank=True)
    done_at_resume = models.PositiveIntegerField(default=0)
    stop_reason = models.TextField(blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(spend_cap_usd__isnull=True) | Q(spend_cap_usd__gt=0),
                name="judges_calibrationrun_spend_cap_positive",
            ),
            models.CheckConstraint(condition=Q(repeats__gte=1), name="judges_calibrationrun_repeats_positive"),
        ]

    def __str__(self):
        return self.label or f"run {self.pk}"

    @property
    def is_active(self):
        return self.status in (RunStatus.PENDING, RunStatus.RUNNING)

    @property
    def simulation(self) -> dict:
        """Count the run's verdicts by where they came from: {"simulated", "imported", "real", "label"}.

        Read from the verdicts alone (recorded from each answer, or at import), never from the
        versions' settings: a run with several kinds is "mixed", one with no verdict yet has no label.
        """
        return provenance_of(self.verdicts.all()).as_dict()

    @property
    def is_simulated(self):
        return self.simulation["label"] == "simulated"


class ChunkStatus(models.TextChoices):
    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"


class RunChunk(models.Model):
    """One unit of work of a run: a slice of gold items for one judge version and repeat.

    A run is planned as chunks so it streams (a worker holds one slice at a time, never the
    whole gold set) and resumes (a chunk knows whether it finished; its verdicts say which
    items are already judged).
    """

    run = models.ForeignKey(CalibrationRun, on_delete=models.CASCADE, related_name="chunks")
    judge_version = models.ForeignKey(JudgeVersion, on_delete=models.PROTECT, related_name="+")
    repeat = models.PositiveSmallIntegerField()
    # The slice is every gold-set-version item whose query id lies in [first, last].
    first_query_id = models.BigIntegerField()
    last_query_id = models.BigIntegerField()
    item_count = models.PositiveIntegerField()
    status = models.CharField(max_length=8, choices=ChunkStatus.choices, default=ChunkStatus.PENDING)
    # A worker holds a chunk until lease_until; an expired lease means the worker died.
    lease_until = models.DateTimeField(null=True, blank=True)
    # Who holds the lease: set by each claim, checked by every renew, finish and release,
    # so a worker whose lease was taken over can neither extend nor end another's.
    lease_token = models.CharField(max_length=32, blank=True, editable=False)
    attempts = models.PositiveIntegerField(default=0)
    done_count = models.PositiveIntegerField(default=0)
    error_count = models.PositiveIntegerField(default=0)
    spent_usd = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    # The vendor batch (Anthropic Message Batches) this chunk was sent as, if any: a resumed
    # chunk waits for the same batch instead of paying for a second one.
    batch_id = models.CharField(max_length=128, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["run", "repeat", "first_query_id", "judge_version"]
        constraints = [
            # Planning twice (a redelivered plan task) must not create a second copy of a slice.
            models.UniqueConstraint(
                fields=["run", "judge_version", "repeat", "first_query_id"], name="judges_runchunk_unique_slice"
            ),
            models.CheckConstraint(
                condition=Q(first_query_id__lte=models.F("last_query_id")), name="judges_runchunk_ordered_bounds"
            ),
            # A chunk can never claim more verdicts than it has items.
            models.CheckConstraint(
                condition=Q(done_count__lte=models.F("item_count")), name="judges_runchunk_done_le_items"
            ),
        ]
        indexes = [models.Index(fields=["run", "status"], name="judges_runchunk_run_status")]

    def __str__(self):
        return f"{self.run} {self.judge_version} r{self.repeat} [{self.first_query_id}..{self.last_query_id}]"


class Decision(models.TextChoices):
    ACCEPT = "accept"
    REJECT = "reject"
    # A fault of the checker (timeout, rate limit, garbage): counted, never a rejection.
    ERROR = "error"


class PromptPrefix(models.Model):
    """The stable part of a judge request (system, tool, shared schema), stored once.

    Every verdict of a version on one catalogue version shares it, so a 900,000-verdict
    run stores one copy of the schema, not 900,000; a verdict keeps only its own tail.
    """

    sha256 = models.CharField(max_length=64, unique=True)
    judge_version = models.ForeignKey(JudgeVersion, on_delete=models.CASCADE, related_name="prompt_prefixes")
    catalogue_version = models.PositiveIntegerField(null=True, blank=True)
    body = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return f"{self.judge_version} prefix {self.sha256[:12]}"


class Verdict(models.Model):
    """One judge version's decision on one query, in one run and repeat (or live)."""

    judge_version = models.ForeignKey(JudgeVersion, on_delete=models.PROTECT, related_name="verdicts")
    query = models.ForeignKey("labelling.Query", on_delete=models.CASCADE, related_name="verdicts")
    run = models.ForeignKey(CalibrationRun, null=True, blank=True, on_delete=models.CASCADE, related_name="verdicts")
    repeat = models.PositiveSmallIntegerField(default=0)
    decision = models.CharField(max_length=8, choices=Decision.choices)
    reason = models.TextField(blank=True)
    # A class of the gold set's taxonomy, or a checker's own (mapped by the taxonomy's maps_to).
    error_class_guess = models.CharField(max_length=100, blank=True)
    hypotheses = models.JSONField(default=list, blank=True)
    input_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)
    cache_read_tokens = models.PositiveIntegerField(default=0)
    cache_write_tokens = models.PositiveIntegerField(default=0)
    # None when the source did not measure it (imported verdicts): never shown as a zero,
    # left out of means.
    cost_usd = models.DecimalField(max_digits=12, decimal_places=8, default=0, null=True, blank=True)
    latency_ms = models.FloatField(default=0, null=True, blank=True)
    model_reported = models.CharField(max_length=128, blank=True)
    raw_response = models.JSONField(default=dict, blank=True)
    # Anything the check read from outside the query: clock, schema slice, attempts.
    context = models.JSONField(default=dict, blank=True)
    # The trace: recorded at call time from the endpoint actually called.
    simulated = models.BooleanField(default=False)
    endpoint = models.CharField(max_length=200, blank=True)  # "simulated" or the vendor host
    catalogue_version = models.PositiveIntegerField(null=True, blank=True)
    # The request as sent (never the key) = the shared prefix + this verdict's own part.
    prompt_prefix = models.ForeignKey(PromptPrefix, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    request_tail = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            # Exactly one verdict per (judge version, query, run, repeat): a redelivered
            # task can never add a second one.
            models.UniqueConstraint(
                fields=["judge_version", "query", "run", "repeat"],
                condition=Q(run__isnull=False),
                name="judges_verdict_one_per_run_repeat",
            ),
            models.UniqueConstraint(
                fields=["judge_version", "query", "repeat"],
                condition=Q(run__isnull=True),
                name="judges_verdict_one_live_per_repeat",
            ),
        ]
        indexes = [
            models.Index(fields=["run", "judge_version"], name="judges_verdict_run_judge"),
            # The report's class accuracy reads the rejects that name a class: usually few of a
            # run's verdicts (none for judges that name none), so only they are indexed.
            models.Index(
                fields=["run", "query"],
                condition=Q(decision="reject") & ~Q(error_class_guess=""),
                name="judges_verdict_class_guesses",
            ),
        ]

    def __str__(self):
        return f"{self.judge_version} on {self.query_id}: {self.decision}"


class RunVerdictSums(models.Model):
    """One judge version's verdict counts and cost in one run, summed as the run completed.

    Recorded by `judges.verdict_sums.record_verdict_sums` once nothing writes the run's
    verdicts any more, so that a report need not scan every verdict a second time for its
    costs. Database triggers (migration 0012) delete a run's rows whenever any of its
    verdicts is inserted, updated or deleted: rows that exist are current, and a run
    without rows is summed from its verdicts.
    """

    run = models.ForeignKey(CalibrationRun, on_delete=models.CASCADE, related_name="verdict_sums")
    judge_version = models.ForeignKey(JudgeVersion, on_delete=models.CASCADE, related_name="+")
    verdicts = models.PositiveIntegerField()
    # Verdicts whose cost was measured, and the sum of those costs (exact: a Decimal sum).
    costed = models.PositiveIntegerField()
    cost_usd = models.DecimalField(max_digits=24, decimal_places=8)
    simulated = models.PositiveIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "judge_version"], name="judges_runverdictsums_one_per_judge"),
        ]

    def __str__(self):
        return f"{self.judge_version} in run {self.run_id}: {self.verdicts} verdicts"
