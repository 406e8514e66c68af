"""Validates every shipped scenario against scenarios/scenario.schema.json with Debian's
python3-jsonschema (a validator we did not write), checks the schema itself against the
draft 2020-12 metaschema, and checks the schema rejects what the C++ loader rejects: an unknown
key, a wrong type, a check without its parameters, an unknown planner.

Usage: /usr/bin/python3 tests/scenarios/validate_schema.py SCENARIOS_DIR
"""
import copy
import json
import pathlib
import sys

import jsonschema


def main() -> int:
    folder = pathlib.Path(sys.argv[1])
    schema = json.loads((folder / "scenario.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    files = sorted(p for p in folder.glob("*.json") if p.name != "scenario.schema.json")
    assert files, f"no scenarios in {folder}"
    failures = 0
    for path in files:
        errors = sorted(validator.iter_errors(json.loads(path.read_text())), key=lambda e: e.path)
        for e in errors:
            print(f"{path.name}: /{'/'.join(map(str, e.path))}: {e.message}")
        failures += bool(errors)
        print(f"{path.name}: {'INVALID' if errors else 'valid'}")

    base = json.loads(files[0].read_text())
    bad = {
        "unknown top-level key": lambda s: s.update(modle="mlp"),
        "name of the wrong type": lambda s: s.update(name=3),
        "unknown planner": lambda s: s["steps"][0].setdefault("set", {}).update(planner="frist_fit"),
        "threads out of range": lambda s: s["steps"][0].setdefault("set", {}).update(threads=0),
        "check without its parameter": lambda s: s["steps"][0]["checks"].append({"check": "op_present"}),
        "unknown check": lambda s: s["steps"][0]["checks"].append({"check": "node_cuont", "equals": 1}),
        "model inside settings": lambda s: s.setdefault("settings", {}).update(model="mlp"),
        "unknown panel": lambda s: s["steps"][0].update(look_at={"panel": "grpah"}),
    }
    for what, spoil in bad.items():
        doc = copy.deepcopy(base)
        doc["steps"][0].setdefault("checks", [])
        spoil(doc)
        if validator.is_valid(doc):
            print(f"schema accepts a scenario with {what}")
            failures += 1
    print(f"{len(files)} scenarios, {len(bad)} spoiled copies: {'ok' if not failures else 'FAILED'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
