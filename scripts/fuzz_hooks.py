# Schemathesis hooks for `npm run fuzz` (scripts/fuzz.ts): each request carries the next key of a
# list, so the per-key rate limit (120 a minute) paces no key below what the fuzzer sends.
import itertools
import os

import schemathesis

_tokens = itertools.cycle([t for t in os.environ.get("FUZZ_TOKENS", "").split(",") if t])


@schemathesis.auth(refresh_interval=None)
class RotatingKeys:
    def get(self, case, context):
        return next(_tokens)

    def set(self, case, data, context):
        case.headers = case.headers or {}
        case.headers["Authorization"] = f"Bearer {data}"
