"""What may grow inside one function call: literals, built strings, patterns, grouping sets.

A statement timeout stops a query between rows and inside most functions, but not inside
every one: PostgreSQL's `translate`, `btrim`, `strpos`, LIKE and their kin, and SQLite's
`instr`, `replace`, `trim`, LIKE/GLOB and `printf`, run to their end once called, for time
in proportion to the product of their inputs' lengths (`translate` over 20 MB with a 5 KB
set ran 690 s against a 1 s timeout). So the guard bounds those inputs where the text makes
them (issue 27), each with a setting:

- a string literal: at most `WAREHOUSE_MAX_SQL_LITERAL_BYTES`;
- a string the text builds (`repeat`, `lpad`/`rpad`, `format`/`printf` widths, and what is
  concatenated or replaced from them): its width arguments are literals (or `least(x, N)`)
  and its length at most `WAREHOUSE_MAX_SQL_WIDTH`;
- a pattern or search argument (LIKE/ILIKE/SIMILAR TO/GLOB, regular expressions, `strpos`,
  `position`, `split_part`, trim sets, `translate`): at most
  `WAREHOUSE_MAX_SQL_PATTERN_BYTES` when the text makes it;
- a value an aggregate builds from every row (`string_agg`, `array_agg`, `json_agg`,
  `group_concat`, `ARRAY(subquery)`) is as long as the data: it may be returned, but not fed to
  one of those functions, directly or through a CTE or subquery column;
- `GROUP BY` expands to at most `WAREHOUSE_MAX_SQL_GROUPING_SETS` grouping sets (CUBE of n
  is 2^n).

A column of the warehouse's own data is not the text's to bound and is not refused.
"""

import math
import re

from sqlglot import exp

from probes.guard_limits import GuardLimits

UNBOUNDED = math.inf  # a length the data decides, not the text (an aggregate's result)
_HUGE = 10**18

# Typed nodes whose named arguments are patterns or search strings (cost ~ subject × pattern).
PATTERN_ARGS: dict[type, tuple[str, ...]] = {
    exp.Like: ("expression",),
    exp.ILike: ("expression",),
    exp.SimilarTo: ("expression",),
    exp.Glob: ("expression",),
    exp.RegexpLike: ("expression",),
    exp.RegexpILike: ("expression",),
    exp.RegexpCount: ("expression",),
    exp.RegexpInstr: ("expression",),
    exp.RegexpSubstr: ("expression",),
    exp.RegexpReplace: ("expression",),
    exp.StringToArray: ("expression",),
    exp.StartsWith: ("expression",),
    exp.Trim: ("expression",),
    exp.StrPosition: ("substr",),
    exp.SplitPart: ("delimiter",),
    exp.Translate: ("from_", "to"),
    exp.Replace: ("expression",),
}
# Functions sqlglot reads as Anonymous, by name: the positions of their pattern arguments.
ANONYMOUS_PATTERN_ARGS: dict[str, tuple[int, ...]] = {
    "regexp_match": (1,),
    "regexp_matches": (1,),
    "regexp_split_to_array": (1,),
    "regexp_split_to_table": (1,),
}
# Aggregates whose result grows with every row they read.
UNBOUNDED_AGGREGATES = (exp.GroupConcat, exp.ArrayAgg, exp.JSONArrayAgg, exp.JSONObjectAgg, exp.JSONBObjectAgg)
UNBOUNDED_ANONYMOUS = frozenset({"jsonb_agg", "xmlagg", "array_agg", "json_group_array", "json_group_object"})
# Functions whose result is no longer than their first argument.
_SAME_LENGTH = (exp.Upper, exp.Lower, exp.Initcap, exp.Trim, exp.Translate, exp.Substring, exp.Left, exp.Right)
_PRINTF_SPEC = re.compile(r"%[-+ 0#,!]*(\*|\d+)?(?:\.(\*|\d+))?")


def _utf8_length(text: str) -> int:
    return len(text.encode("utf-8", errors="surrogatepass"))


def is_unbounded_aggregate(node: exp.Expression) -> bool:
    if isinstance(node, UNBOUNDED_AGGREGATES):
        return True
    if isinstance(node, exp.Anonymous) and node.name.lower() in UNBOUNDED_ANONYMOUS:
        return True
    return isinstance(node, exp.Array) and any(isinstance(e, exp.Query) for e in node.expressions)


def unbounded_names(tree: exp.Expression) -> frozenset[str]:
    """Output names of projections holding an aggregate's whole-data value (and their aliases)."""
    names: set[str] = set()
    for select in tree.find_all(exp.Select):
        tainted = [p for p in select.expressions if any(is_unbounded_aggregate(n) for n in p.walk())]
        names |= {p.alias_or_name.lower() for p in tainted if p.alias_or_name}
        if tainted:
            # A column list on the derived table or CTE renames them: all of its columns count.
            alias = select.parent.args.get("alias") if isinstance(select.parent, exp.Subquery | exp.CTE) else None
            if isinstance(alias, exp.TableAlias):
                names |= {column.name.lower() for column in alias.columns}
    return frozenset(names)


def int_value(node: exp.Expression | None) -> int | None:
    """The integer an expression provably is at most, from literals alone; None if unknown."""
    if node is None:
        return None
    if isinstance(node, exp.Paren | exp.Cast):
        return int_value(node.this)
    if isinstance(node, exp.Literal) and not node.is_string:
        try:
            return min(int(float(node.name)), _HUGE)
        except (ValueError, OverflowError):
            return None
    if isinstance(node, exp.Neg):
        inner = int_value(node.this)
        return None if inner is None else -inner
    if isinstance(node, exp.Least):
        known = [v for v in (int_value(a) for a in [node.this, *node.expressions]) if v is not None]
        return min(known) if known else None
    if isinstance(node, exp.Add | exp.Mul | exp.Pow):
        left, right = int_value(node.this), int_value(node.expression)
        if left is None or right is None:
            return None
        if isinstance(node, exp.Add):
            return min(left + right, _HUGE)
        if isinstance(node, exp.Mul):
            return min(left * right, _HUGE)
        return _HUGE if right > 64 else min(abs(left) ** max(right, 0), _HUGE)
    return None


# Calls whose result is a number however long their argument (an aggregate's value ends there).
_MEASURES = (exp.Length, exp.ArraySize, exp.Count, exp.Bracket)
_ANONYMOUS_MEASURES = frozenset({"cardinality", "octet_length", "char_length", "character_length", "bit_length"})
# A built string an aggregate may take from every row: longer, and it grows the server's
# memory faster than table data does (repeat('x', 10000) per row reached 1 GB in a second).
AGGREGATED_BUILD_MAX = 64


class Lengths:
    """Provable lengths of string expressions in one tree (None: the data decides)."""

    def __init__(self, tree: exp.Expression):
        self.tainted = unbounded_names(tree)
        self._known: dict[int, float | None] = {}

    def of(self, node: exp.Expression | None) -> float | None:
        if node is None:
            return 0
        key = id(node)
        if key not in self._known:
            self._known[key] = self._measure(node)
        return self._known[key]

    def _measure(self, node: exp.Expression) -> float | None:
        if isinstance(node, exp.Null):
            return 0
        if is_unbounded_aggregate(node):
            return UNBOUNDED
        if isinstance(node, exp.Literal):
            return _utf8_length(node.name) if node.is_string else len(node.name)
        if isinstance(node, exp.Column):
            return UNBOUNDED if node.name.lower() in self.tainted else None
        if isinstance(node, exp.Subquery):
            return UNBOUNDED if any(is_unbounded_aggregate(n) for n in node.walk()) else None
        if isinstance(node, (exp.Paren, exp.Alias, exp.Cast, exp.TryCast, *_SAME_LENGTH)):
            return self.of(node.this)
        if isinstance(node, exp.DPipe):
            return self._sum([node.this, node.expression])
        if isinstance(node, exp.Concat | exp.ConcatWs):
            return self._sum(node.expressions)
        if isinstance(node, exp.Repeat):
            times = int_value(node.args.get("times"))
            base = self.of(node.this)
            return None if times is None or base is None else base * max(times, 0)
        if isinstance(node, exp.Pad):
            return int_value(node.expression)
        if isinstance(node, exp.Format):
            return self._formatted(node.this, node.expressions)
        if isinstance(node, exp.Anonymous) and node.name.lower() == "printf" and node.expressions:
            return self._formatted(node.expressions[0], node.expressions[1:])
        if isinstance(node, exp.Replace | exp.RegexpReplace):
            base, into = self.of(node.this), self.of(node.args.get("replacement"))
            return None if base is None or into is None else base * max(1, into)
        branches = _branches(node)
        if branches is not None:
            parts = [self.of(branch) for branch in branches]
            return None if not parts or None in parts else max(parts)
        measured = isinstance(node, _MEASURES) or (
            isinstance(node, exp.Anonymous) and node.name.lower() in _ANONYMOUS_MEASURES
        )
        if not measured and any(self.of(child) == UNBOUNDED for child in node.iter_expressions()):
            return UNBOUNDED  # whatever a call makes of an aggregate's value is as long as it
        return None

    def _formatted(self, template: exp.Expression, arguments: list) -> float | None:
        """A format's literal text, its widths and precisions, and its arguments' lengths."""
        if not (isinstance(template, exp.Literal) and template.is_string):
            return None
        widths = [int(n) for spec in _PRINTF_SPEC.findall(template.name) for n in spec if n.isdigit()]
        if "*" in template.name:
            widths += [abs(v) for v in (int_value(a) for a in arguments) if v is not None]
        measured = [self.of(a) for a in arguments]
        if UNBOUNDED in measured:
            return UNBOUNDED
        return len(template.name) + sum(widths) + sum(m or 0 for m in measured)

    def _sum(self, parts) -> float | None:
        lengths = [self.of(part) for part in parts]
        return None if None in lengths else sum(lengths)


def _branches(node: exp.Expression) -> list | None:
    """The values a conditional expression may take, or None if it is not one."""
    if isinstance(node, exp.Case):
        return [branch.args.get("true") for branch in node.args.get("ifs") or []] + [node.args.get("default")]
    if isinstance(node, exp.If):
        return [node.args.get("true"), node.args.get("false")]
    if isinstance(node, exp.Coalesce):
        return [node.this, *node.expressions]
    if isinstance(node, exp.Nullif):
        return [node.this]
    return None


def _format_refusal(name: str, template: exp.Expression, arguments: list, limits: GuardLimits) -> str | None:
    if not (isinstance(template, exp.Literal) and template.is_string):
        return f"{name}() needs a literal format string (the guard holds its widths under WAREHOUSE_MAX_SQL_WIDTH)"
    widths = [int(n) for spec in _PRINTF_SPEC.findall(template.name) for n in spec if n.isdigit()]
    if "*" in template.name:
        values = [int_value(argument) for argument in arguments]
        if None in values:
            return f"{name}() with a * width needs literal arguments (held under WAREHOUSE_MAX_SQL_WIDTH)"
        widths += [abs(v) for v in values]
    if any(width > limits.max_width for width in widths):
        return f"a {name}() width over WAREHOUSE_MAX_SQL_WIDTH ({limits.max_width:,})"
    return None


def _width_refusal(node: exp.Expression, lengths: Lengths, limits: GuardLimits) -> str | None:
    """Refuse a width function whose result the guard cannot bound under the width limit."""
    if isinstance(node, exp.Repeat):
        times, base = int_value(node.args.get("times")), lengths.of(node.this)
        if times is None or base is None:
            return "repeat() needs a literal count (or least(x, N)) and a measurable string (WAREHOUSE_MAX_SQL_WIDTH)"
        length, name = base * max(times, 0), "repeat()"
    elif isinstance(node, exp.Pad):
        width = int_value(node.expression)
        if width is None:
            return "lpad()/rpad() needs a literal length (or least(x, N)) within WAREHOUSE_MAX_SQL_WIDTH"
        length, name = width, "lpad()/rpad()"
    elif isinstance(node, exp.Format):
        return _format_refusal("format", node.this, node.expressions, limits)
    elif isinstance(node, exp.Anonymous) and node.name.lower() == "printf" and node.expressions:
        return _format_refusal("printf", node.expressions[0], node.expressions[1:], limits)
    elif isinstance(node, exp.DPipe | exp.Concat | exp.ConcatWs | exp.Replace | exp.RegexpReplace):
        length, name = lengths.of(node), "a built string"
        if length is None or length == UNBOUNDED:
            return None
    else:
        return None
    if length > limits.max_width:
        return f"{name} builds {length:,.0f} characters, over WAREHOUSE_MAX_SQL_WIDTH ({limits.max_width:,})"
    return None


def _pattern_arguments(node: exp.Expression) -> tuple[exp.Expression | None, list[exp.Expression]]:
    """The subject and the pattern arguments of a pattern or search call, or (None, [])."""
    keys = PATTERN_ARGS.get(type(node))
    if keys:
        return node.this, [node.args[key] for key in keys if isinstance(node.args.get(key), exp.Expression)]
    if isinstance(node, exp.Anonymous) and node.name.lower() in ANONYMOUS_PATTERN_ARGS:
        arguments = node.expressions
        positions = ANONYMOUS_PATTERN_ARGS[node.name.lower()]
        return (arguments[0] if arguments else None), [arguments[i] for i in positions if i < len(arguments)]
    return None, []


def _call_label(node: exp.Expression) -> str:
    if isinstance(node, exp.Anonymous):
        return f"{node.name.lower()}()"
    labels = {
        exp.Like: "LIKE",
        exp.ILike: "ILIKE",
        exp.SimilarTo: "SIMILAR TO",
        exp.Glob: "GLOB",
        exp.RegexpLike: "~",
        exp.StrPosition: "strpos()/position()/instr()",
    }
    if type(node) in labels:
        return labels[type(node)]
    return f"{node.sql_name().lower()}()" if isinstance(node, exp.Func) else type(node).__name__


def _pattern_refusal(node: exp.Expression, lengths: Lengths, limits: GuardLimits) -> str | None:
    subject, patterns = _pattern_arguments(node)
    if not patterns:
        return None
    label = _call_label(node)
    for argument in [subject, *patterns]:
        if lengths.of(argument) == UNBOUNDED:
            return (
                f"{label} over the result of an aggregate that builds a value from every row (string_agg, "
                "array_agg, ...): its length is the data's, past anything WAREHOUSE_MAX_SQL_WIDTH bounds; test the "
                "rows instead (e.g. bool_or(x LIKE ...))"
            )
    for pattern in patterns:
        length = lengths.of(pattern)
        if length is not None and length > limits.max_pattern_bytes:
            return (
                f"a {label} pattern or search string of {length:,.0f} bytes, over WAREHOUSE_MAX_SQL_PATTERN_BYTES "
                f"({limits.max_pattern_bytes:,})"
            )
    return None


def grouping_set_count(group: exp.Group) -> int:
    """How many grouping sets a GROUP BY expands to (CUBE of n: 2^n; ROLLUP of n: n + 1)."""
    count = 1
    for element in group.expressions:
        count = min(count * _sets_of(element), _HUGE)
    for key in ("cube", "rollup", "grouping_sets"):
        for element in group.args.get(key) or []:
            count = min(count * _sets_of(element), _HUGE)
    return count


def _sets_of(element: exp.Expression) -> int:
    if isinstance(element, exp.Cube):
        return 2 ** min(len(element.expressions), 62)
    if isinstance(element, exp.Rollup):
        return len(element.expressions) + 1
    if isinstance(element, exp.GroupingSets):
        return min(sum(_sets_of(inner) for inner in element.expressions), _HUGE)
    return 1


def _aggregated_refusal(node: exp.Expression, lengths: Lengths) -> str | None:
    """Refuse an aggregate that builds a value from every row out of a long built string."""
    if not is_unbounded_aggregate(node):
        return None
    for argument in node.iter_expressions():
        length = lengths.of(argument)
        if length is not None and length != UNBOUNDED and length > AGGREGATED_BUILD_MAX:
            return (
                f"an aggregate over a string the text builds ({length:,.0f} characters a row, over "
                f"{AGGREGATED_BUILD_MAX}) grows the server's memory past what WAREHOUSE_MAX_SQL_WIDTH bounds"
            )
    return None


def growth_refusal(node: exp.Expression, lengths: Lengths, limits: GuardLimits) -> str | None:
    """Why this node could grow past what one call may cost, or None."""
    if isinstance(node, exp.Literal) and node.is_string:
        size = _utf8_length(node.name)
        if size > limits.max_literal_bytes:
            limit = limits.max_literal_bytes
            return f"a string literal of {size:,} bytes, over WAREHOUSE_MAX_SQL_LITERAL_BYTES ({limit:,})"
        return None
    if isinstance(node, exp.HexString | exp.ByteString):
        size = len(node.name) // 2 if isinstance(node, exp.HexString) else len(node.name)
        if size > limits.max_literal_bytes:
            return (
                f"a blob literal of {size:,} bytes, over WAREHOUSE_MAX_SQL_LITERAL_BYTES ({limits.max_literal_bytes:,})"
            )
        return None
    if isinstance(node, exp.Group):
        sets = grouping_set_count(node)
        if sets > limits.max_grouping_sets:
            limit = limits.max_grouping_sets
            return f"GROUP BY expands to {sets:,} grouping sets, over WAREHOUSE_MAX_SQL_GROUPING_SETS ({limit})"
        return None
    return (
        _width_refusal(node, lengths, limits)
        or _pattern_refusal(node, lengths, limits)
        or _aggregated_refusal(node, lengths)
    )
