"""Run one dialect's hostile family (`mysql`, `duckdb`) through `run_readonly` and say what went wrong."""

from probes.execution import run_readonly


def family_problems(warehouse, family, outfile) -> list[str]:
    """Refused texts must be refused, capped ones stopped (a cap, or the timeout, query gone), benign ones run."""
    problems = []
    for kind, name, sql in family.REFUSED:
        result = run_readonly(warehouse=warehouse, sql=sql.replace("{outfile}", str(outfile)), timeout_s=2)
        if result.allowed or result.executed:
            problems.append(f"{kind}/{name}: not refused by the guard")
    for kind, name, sql in family.CAPPED:
        result = run_readonly(warehouse=warehouse, sql=sql, timeout_s=1, row_cap=1000)
        stopped = (result.executed and result.truncated) or (result.timed_out and result.backend_gone)
        if not stopped:
            problems.append(f"{kind}/{name}: not stopped by a cap or the timeout ({result.error})")
    for kind, name, sql in family.BENIGN:
        result = run_readonly(warehouse=warehouse, sql=sql, timeout_s=10)
        if not (result.executed and result.rows):
            problems.append(f"{kind}/{name}: a benign query did not run ({result.error or result.reason})")
    return problems
