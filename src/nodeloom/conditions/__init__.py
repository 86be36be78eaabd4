"""Conditions: `{field, operator, value, caseSensitive}` tested against a JSON value.

One package, shared by Conditional, Switch and Filter, so the three nodes agree on every
operator. The full table is in docs/conditions.md; in short:

- `field` is a dotted path into the value (`user.address.city`, `items.0.name`); an empty
  field is the value itself. A path that does not resolve reads as null.
- String operators (equals, notEquals, contains, notContains, startsWith, endsWith, regex)
  ignore case when `caseSensitive` is false (default true). Numbers and booleans read as
  their JSON text (`42`, `true`) where text is needed.
- equals is JSON equality, except that a number equals its numeric string (`42` = `"42"`)
  and `true` never equals `1`.
- greaterThan/lessThan compare numbers or numeric strings; null reads as "no", anything
  else that is not a number raises.
- exists: the path resolves to a non-null value. isEmpty: null, "", [], {} or missing.
- regex searches with RE2 (`nodeloom.regex`): linear time whatever the pattern, so a
  webhook payload cannot stall the run; backreferences and lookaround are refused.

A condition that cannot be evaluated raises `NodeError` with code `condition_error`
(not retryable: the same input fails the same way). `check_condition` finds the same
problems statically, for a definition's `check` hook.

Modules: `operators` (the operator names), `values` (paths, numbers, JSON type names),
`evaluation` (`evaluate_condition`), `checks` (`check_condition`, `condition_parameters`).
"""

from nodeloom.conditions.checks import check_condition, condition_parameters
from nodeloom.conditions.evaluation import evaluate_condition
from nodeloom.conditions.operators import OPERATORS, UNARY_OPERATORS, unknown_operator_message
from nodeloom.conditions.values import as_number, json_type, preview, resolve_path, split_path

__all__ = [
    "OPERATORS",
    "UNARY_OPERATORS",
    "as_number",
    "check_condition",
    "condition_parameters",
    "evaluate_condition",
    "json_type",
    "preview",
    "resolve_path",
    "split_path",
    "unknown_operator_message",
]
