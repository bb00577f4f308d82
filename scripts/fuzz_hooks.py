# Schemathesis hooks for `npm run fuzz` (scripts/fuzz.ts), loaded for both documents.
import itertools
import os
import uuid

import schemathesis

# Customer document: each request carries the next key of a list, so the per-key rate limit (120 a
# minute) paces no key below what the fuzzer sends. The operator document sends its token as a header.
_token_list = [t for t in os.environ.get("FUZZ_TOKENS", "").split(",") if t]
if _token_list:
    _tokens = itertools.cycle(_token_list)

    @schemathesis.auth(refresh_interval=None)
    class RotatingKeys:
        def get(self, case, context):
            return next(_tokens)

        def set(self, case, data, context):
            case.headers = case.headers or {}
            case.headers["Authorization"] = f"Bearer {data}"


# The records fuzz.ts seeded, which schemathesis.toml pins as the data operations' path parameters.
# The stateful phase may carry one of them into a delete (GET of the seeded table, then DELETE of the
# id it answered): that delete names an id that exists nowhere instead, so every later request still
# reaches a live record. Deletes of what the fuzzer created itself go through.
_SEEDED = {
    name: os.environ.get(variable, "")
    for name, variable in (
        ("table", "FUZZ_DATA_TABLE"),
        ("column", "FUZZ_DATA_COLUMN"),
        ("record", "FUZZ_DATA_RECORD"),
        ("group", "FUZZ_DATA_GROUP"),
    )
}


@schemathesis.hook
def before_call(context, case, kwargs):
    if case.method.upper() != "DELETE" or "/data/" not in case.path or not case.path_parameters:
        return
    # What a delete removes is the last parameter of its path (a column's delete keeps its table).
    name = case.path.rstrip("/").rsplit("/", 1)[-1].strip("{}")
    seeded = _SEEDED.get(name)
    if seeded and case.path_parameters.get(name) == seeded:
        case.path_parameters[name] = str(uuid.uuid4()) if name != "column" else "fuzz_absent"
