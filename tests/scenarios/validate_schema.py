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
    # A trace scenario ("trace" instead of "model") spoiled the ways only it can be.
    trace_base = next(json.loads(p.read_text()) for p in files if "trace" in json.loads(p.read_text()))
    bad_trace = {
        "both model and trace": lambda s: s.update(model="mlp"),
        "settings in a trace scenario": lambda s: s.update(settings={"iters": 2}),
        "set in a trace step": lambda s: s["steps"][0].update(set={"iters": 2}),
        "a model check in a trace scenario": lambda s: s["steps"][0]["checks"].append({"check": "node_count", "equals": 1}),
        "unknown finding kind": lambda s: s["steps"][0]["checks"].append({"check": "finding", "kind": "gpu_idel"}),
        "unknown trace total": lambda s: s["steps"][0]["checks"].append({"check": "trace_total", "key": "kernels", "equals": 1}),
        "a graph panel for a trace": lambda s: s["steps"][0].update(look_at={"panel": "graph"}),
        "unknown group": lambda s: s["steps"][0].update(look_at={"group": "launchr"}),
    }
    for what, spoil in bad_trace.items():
        doc = copy.deepcopy(trace_base)
        doc["steps"][0].setdefault("checks", [])
        spoil(doc)
        if validator.is_valid(doc):
            print(f"schema accepts a trace scenario with {what}")
            failures += 1
    model_gap = copy.deepcopy(base)
    model_gap["steps"][0]["look_at"] = {"gap": 0}
    if validator.is_valid(model_gap):
        print("schema accepts a model scenario with a look_at gap")
        failures += 1
    bad.update(bad_trace)
    print(f"{len(files)} scenarios, {len(bad) + 1} spoiled copies: {'ok' if not failures else 'FAILED'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
