"""The CEL rules run on the bindings' compiled core alone, without the package's command line."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT

# A ClusterQueue whose CEL rule fails (borrowingLimit without a cohort), then `import cel` after it.
SCRIPT = """
import sys
from aks_kueue.kueue.validate import KueueObject, validate_object
found = validate_object(KueueObject({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
    "metadata": {"name": "q"}, "spec": {"resourceGroups": [{"coveredResources": ["cpu"], "flavors": [
    {"name": "f", "resources": [{"name": "cpu", "nominalQuota": "1", "borrowingLimit": "1"}]}]}]}}))
print(any("borrowingLimit must be nil when cohort is empty" in str(e) for e in found))
print(sorted(m for m in sys.modules if m == "cel" or m.startswith(("cel.", "prompt_toolkit"))))
import cel
print(cel.compile is sys.modules["cel.cel"].compile, cel.evaluate("1 + 1"))
"""


def test_rules_need_only_the_compiled_core_and_import_cel_still_works():
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["True", "['cel.cel']", "True 2"]
