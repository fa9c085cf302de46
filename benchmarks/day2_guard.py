"""Random day-2 edits of prod through the guard, at a larger size than the test suite's sample.

    python benchmarks/day2_guard.py [--edits N] [--programs M] [--seed S]

The same catalogue and promise as tests/day2/test_day2_properties.py (`tests/day2/edits.py`):
prod's previous outputs come from the real program under mocks (one deployment with protection
on, one with `protect: false`); each edit is one to three changes of the catalogue, an
acknowledgement (none, some or all of what they destroy, plus stray entries) and this update's
`protect`. Every edit is judged as the program judges it (settings, model, day-2 record, guard);
`--programs` of them also run the whole program under mocks with the previous outputs, where a
refusal is `ProgramRefused` (what `aks-kueue preview` exits 1 on). Printed: the edits tried,
destructive, refused and accepted, the disagreements with the promise (0 expected), and the rate.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=3000)
    parser.add_argument("--programs", type=int, default=30)
    parser.add_argument("--seed", type=int, default=17)
    args = parser.parse_args()

    from aks_kueue.preview.run import run_program
    from aks_kueue.preview.stackfile import StackConfig
    from tests.conftest import edited, flat, stack_doc
    from tests.day2.edits import EDITS, ENTRIES, acknowledgement, apply_edits, try_one

    def deployed(config, previous=None):
        outputs = run_program(StackConfig("aks-kueue", "prod", flat(config)), ROOT, False,
                              previous_outputs=previous).outputs
        return json.loads(json.dumps(outputs))

    protected = deployed(stack_doc("prod"))
    states = {"protected": protected,
              "unprotected": deployed(edited("prod", lambda c: c.update({"aks-kueue:protect": False})), protected)}
    rnd = random.Random(args.seed)
    tally: Counter = Counter()
    wrong = []
    started = time.perf_counter()
    samples = []
    for _ in range(args.edits):
        edits = tuple(rnd.sample(EDITS, rnd.randint(1, 3)))
        destroyed = set().union(*(e.destroys for e in edits))
        how = rnd.choice(["none", "some", "all"])
        allow = acknowledgement(destroyed, how, rnd.sample(ENTRIES, rnd.randint(0, 2)), rnd)
        protect = rnd.choice([None, True, False])
        state = rnd.choice(list(states))
        verdict = try_one(edits, allow, protect, states[state], tally, wrong)
        if verdict is not None and len(samples) < args.programs:
            samples.append((edits, allow, protect, state, verdict.refused))
    judged = time.perf_counter() - started

    program_wrong = 0
    program_refused = 0
    started = time.perf_counter()
    for edits, allow, protect, state, refused in samples:
        config = apply_edits(edits, allow, protect)
        try:
            run_program(StackConfig("aks-kueue", "prod", flat(config)), ROOT, True, previous_outputs=states[state])
            stopped = False
        except Exception:  # ProgramRefused, or the settings or the judge refused it before the guard: refused too
            stopped = True
        program_refused += stopped
        program_wrong += stopped != refused
    programs = time.perf_counter() - started

    print(f"day-2 guard over random edits of prod (seed {args.seed}):")
    print(f"  {tally['tried']} edits tried ({tally['destructive']} destructive), {tally['refused']} refused, "
          f"{tally['accepted']} accepted, {tally['invalid']} not valid settings")
    print(f"  disagreements with the promise: {len(wrong)}")
    for verdict in wrong[:5]:
        print(f"    {verdict}")
    print(f"  {tally['tried'] / judged:.0f} edits/s judged ({judged:.1f} s)")
    print(f"  whole program under mocks: {len(samples)} edits, {program_refused} refused, "
          f"{program_wrong} disagreeing with the guard's verdict ({programs:.1f} s)")
    return 1 if wrong or program_wrong else 0


if __name__ == "__main__":
    raise SystemExit(main())
