"""Validation judges exactly as it did before the speed work of issue 13.

`golden/validate.json.gz` was recorded from `validate_object` as it was before it was
made faster: the errors (field and message) and the defaulted object for every object
of `corpus.py` (valid objects of every kind, then 4,000 damaged copies), for the
fixtures' documents, and a digest of the same for the benchmark's 10,000 Workloads.
It was recorded again once, for three intended changes and nothing else (checked object
by object): unknown fields say "did you mean" (420 objects), integers past their
int32/int64 format are refused (63), and odd Workload statuses get sentences instead of
exceptions (6). Recorded again for names: every DNS-1123 label and subdomain, qualified
name and label value message is now Kubernetes' own, from `k8s/names.py` (342 objects, no
other change: checked object by object). Recorded again for issue 29's one-sentence messages,
an error now `[field, message, fix]` where it has a fix (782 objects, no other change: checked
object by object): an unknown field is named by its whole path, as the API server's strict
decoding names it, its "not part of this kind's schema" and "did you mean" the fix (692
errors); a CEL rule the bindings could not evaluate keeps their first sentence, their advice
the fix (142); an integer past int32 of a kind no webhook decodes is said in one sentence
(22). Regenerate only for an intended change of behaviour, and say why:

    python -m tests.kueue.test_golden
"""

from __future__ import annotations

import copy
import gzip
import hashlib
import json
from functools import cache
from pathlib import Path

import pytest

from aks_kueue.kueue.manifests import read_documents
from aks_kueue.kueue.validate import load_object, validate_object
from aks_kueue.kueue.workload_webhook import validate_workload_status
from benchmarks.admission import sized
from tests.admission.scenarios import scenario
from tests.kueue.corpus import corpus, other_kinds
from tests.messages import breaks

GOLDEN = Path(__file__).parent / "golden" / "validate.json.gz"
FIXTURES = Path(__file__).parents[1] / "fixtures"
MUTANTS, SEED = 4_000, 13
BENCHMARK_FULL = (10_000, 200, 20, 7)


@cache
def objects() -> tuple[dict, ...]:
    bases = [o for seed in range(40) for o in scenario(seed) if o["kind"] != "Namespace"]
    bases += sized(20, 20, 2, 7)[1] + other_kinds()
    fixtures = [d for path in (FIXTURES / "validate-mixed.yaml", FIXTURES / "simulate" / "team-queue.yaml")
                for _, d in read_documents(path, also=(("v1", "Namespace"),)) if d.get("kind") != "Namespace"]
    return tuple(fixtures + corpus(bases, MUTANTS, SEED))


def verdict(manifest: dict) -> dict:
    obj = load_object(copy.deepcopy(manifest))
    errors = validate_object(obj)
    if not errors and obj.kind == "Workload" and "status" in obj.manifest:
        try:
            errors = validate_workload_status(obj.manifest)
        except Exception as error:  # recorded, so that a fix shows up as a change
            return {"crash": type(error).__name__}
    return {"errors": [[e.field, e.message, e.fix] if e.fix else [e.field, e.message] for e in errors],
            "defaulted": obj.defaulted or None}


def digest(value) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


def record() -> None:
    golden = {"objects": [verdict(m) for m in objects()],
              "benchmark full": digest([verdict(m) for m in sized(*BENCHMARK_FULL)[1]])}
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_bytes(gzip.compress(json.dumps(golden, sort_keys=True).encode(), mtime=0))
    print(f"wrote {GOLDEN} ({len(golden['objects'])} objects)")


@pytest.fixture(scope="module")
def golden() -> dict:
    return json.loads(gzip.decompress(GOLDEN.read_bytes()))


def test_the_corpus_holds_valid_and_invalid_objects(golden):
    verdicts = golden["objects"]
    assert len(verdicts) == len(objects())
    invalid = sum(bool(v.get("errors") or v.get("crash")) for v in verdicts)
    assert 1_000 < invalid < len(verdicts) - 500, invalid


@pytest.mark.parametrize("chunk", range(10))
def test_verdicts_are_unchanged(golden, chunk):
    everything = objects()
    for index in range(chunk, len(everything), 10):
        assert verdict(everything[index]) == golden["objects"][index], (index, everything[index])


def test_every_message_states_its_fact_in_one_sentence(golden):
    """Issue 29: these messages are kueue-object-invalid's findings too; advice goes in the third item, the fix."""
    wrong = [(index, error) for index, verdict in enumerate(golden["objects"]) for error in verdict.get("errors", ())
             if breaks(error[1])]
    assert not wrong, wrong[:5]


def test_benchmark_backlog_is_unchanged(golden):
    assert digest([verdict(m) for m in sized(*BENCHMARK_FULL)[1]]) == golden["benchmark full"]


if __name__ == "__main__":
    record()
