#!/usr/bin/env python3
"""Validates SARIF logs against the SARIF 2.1.0 JSON schema.

usage: validate_sarif.py SCHEMA LOG...
exit 0: every log is valid; 1: one is not (the errors are printed);
77: no validator (the python3-jsonschema package) is installed.

The schema is not a Debian package, so it is given by path: the test looks in
$FABCHECK_SARIF_SCHEMA, then in .peer/sarif/ (docs/k8s-sarif.md says how
to fetch it with npm). The file @microsoft/jest-sarif ships,
sarif-2.1.0-rtm.5.json, is draft-04 and has a pattern (language) that is not a
valid ECMAScript unicode regex but is valid for Python's re, which is why this
check uses jsonschema rather than ajv.
"""
import json
import sys

try:
    import jsonschema
except ImportError:
    print("python3-jsonschema is not installed", file=sys.stderr)
    sys.exit(77)


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 64
    with open(sys.argv[1], encoding="utf-8") as f:
        schema = json.load(f)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    validator = cls(schema, format_checker=cls.FORMAT_CHECKER)
    bad = 0
    for path in sys.argv[2:]:
        with open(path, encoding="utf-8") as f:
            log = json.load(f)
        errors = sorted(validator.iter_errors(log), key=lambda e: list(e.absolute_path))
        for e in errors[:20]:
            print(f"{path}: /{'/'.join(str(p) for p in e.absolute_path)}: {e.message}")
        bad += bool(errors)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
