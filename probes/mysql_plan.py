"""The verifier's reading of a MySQL / MariaDB plan (`EXPLAIN FORMAT=JSON`, issue 34).

Join types and estimated rows: a table joined by a block nested loop (or a full scan inside a
nested loop) with no condition attached is a cross join; the estimated rows out are the
product of each joined table's `rows` × `filtered` %.
"""


def _tables(node):
    """Yield each table entry of a plan, in join order, with whether it was joined by a buffer (BNL/BKA)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "table" and isinstance(value, dict):
                yield value, False
                yield from _tables({k: v for k, v in value.items() if k != "table"})
            elif key in ("block-nl-join", "bka-join") and isinstance(value, dict):
                for table, _ in _tables(value):
                    yield table, not value.get("attached_condition")
            else:
                yield from _tables(value)
    elif isinstance(node, list):
        for item in node:
            yield from _tables(item)


def mysql_plan_tables(document: dict) -> list[dict]:
    """The tables of the outermost query block's nested loop: name, access type, rows, condition."""
    block = document.get("query_block") or {}
    loop = block.get("nested_loop") or ([{"table": block["table"]}] if "table" in block else [])
    tables = []
    for step in loop:
        for table, buffered_without_condition in _tables(step):
            tables.append(
                {
                    "name": table.get("table_name", "?"),
                    "access_type": table.get("access_type", ""),
                    "rows": float(table.get("rows") or table.get("r_rows") or 0),
                    "filtered": float(table.get("filtered") or 100),
                    "condition": bool(table.get("attached_condition")) and not buffered_without_condition,
                    "keyed": table.get("access_type") in ("ref", "eq_ref", "ref_or_null", "const", "system"),
                }
            )
            break  # the first table entry of a step is the joined table; the rest are its subqueries
    return tables


def mysql_cross_join(document: dict) -> str | None:
    tables = mysql_plan_tables(document)
    for outer, inner in zip(tables, tables[1:], strict=False):
        if inner["keyed"] or inner["condition"] or inner["rows"] <= 1 or outer["rows"] <= 1:
            continue
        return f"cross join between {outer['name']} and {inner['name']} ({inner['access_type']} scan, no condition)"
    return None


def mysql_estimated_rows(document: dict) -> float:
    total = 1.0
    for table in mysql_plan_tables(document):
        total *= max(1.0, table["rows"] * table["filtered"] / 100)
    return total
