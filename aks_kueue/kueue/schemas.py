"""The OpenAPI schemas of Kueue v0.19.2's CRDs, served version v1beta2.

`data/kueue-crds.json` holds each CRD's `openAPIV3Schema` for v1beta2 and v1beta1,
without descriptions and status, plus the CRD's scope. It is derived data: regenerate it
from the upstream CRD files with

    python -m aks_kueue.kueue.schemas PATH/TO/kueue-crds

and a test checks that it still equals what the CRD files say.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

DATA_FILE = "data/kueue-crds.json"


@dataclass(frozen=True)
class KindSchema:
    kind: str
    namespaced: bool
    schema: dict[str, Any]
    v1beta1: dict[str, Any]


def _strip(node: Any, in_properties: bool = False) -> Any:
    """Drop schema descriptions; a property that is itself called `description` stays."""
    if isinstance(node, dict):
        return {k: _strip(v, k == "properties" and not in_properties) for k, v in node.items()
                if in_properties or k != "description"}
    if isinstance(node, list):
        return [_strip(v) for v in node]
    return node


def extract(crd_dir: Path) -> dict[str, Any]:
    """Reduce the upstream CRD files to what validation needs."""
    out = {}
    for path in sorted(crd_dir.glob("kueue.x-k8s.io_*.yaml")):
        crd = yaml.safe_load(path.read_text())
        schemas = {}
        for version in crd["spec"]["versions"]:
            schema = _strip(version["schema"]["openAPIV3Schema"])
            schema.get("properties", {}).pop("status", None)
            schemas[version["name"]] = schema
        out[crd["spec"]["names"]["kind"]] = {"namespaced": crd["spec"]["scope"] == "Namespaced",
                                             "schema": schemas["v1beta2"], "v1beta1": schemas["v1beta1"]}
    return out


@lru_cache(maxsize=1)
def all_kinds() -> dict[str, KindSchema]:
    raw = json.loads(resources.files("aks_kueue.kueue").joinpath(DATA_FILE).read_text())
    return {kind: KindSchema(kind, entry["namespaced"], entry["schema"], entry["v1beta1"])
            for kind, entry in raw.items()}


def kind_schema(kind: str) -> KindSchema | None:
    return all_kinds().get(kind)


if __name__ == "__main__":
    target = Path(__file__).resolve().parent / DATA_FILE
    target.write_text(json.dumps(extract(Path(sys.argv[1])), separators=(",", ":"), sort_keys=True))
    print(f"wrote {target}")
