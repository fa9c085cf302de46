"""k8s/field: paths render as Kubernetes renders them, errors carry the API server's words."""

from aks_kueue.k8s import field
from aks_kueue.k8s.field import Path


def test_paths_render_as_kubernetes_field_paths():
    spec = Path("spec")
    assert str(spec.child("resourceGroups").index(0).child("flavors").index(1)) == "spec.resourceGroups[0].flavors[1]"
    assert str(Path("metadata").child("labels").key("kueue.x-k8s.io/queue-name")) == \
        "metadata.labels[kueue.x-k8s.io/queue-name]"
    assert str(Path().child("waitForPodsReady", "timeout")) == "waitForPodsReady.timeout"
    assert str(Path()) == ""
    assert spec.child("a") == "spec.a" and spec == Path("spec")  # paths are values; child() leaves spec as it was


def test_the_constructors_write_kubernetes_wording():
    at = Path("spec").child("x")
    assert str(field.required(at)) == "spec.x: Required value"
    assert str(field.required(at, "must be set")) == "spec.x: Required value: must be set"
    assert str(field.invalid(at, "a b", "must be a name")) == 'spec.x: Invalid value: "a b": must be a name'
    assert str(field.invalid(at, -1, "must be greater than or equal to 0")) == \
        "spec.x: Invalid value: -1: must be greater than or equal to 0"
    assert str(field.invalid(at, field.OMIT, "too large to show")) == "spec.x: Invalid value: too large to show"
    assert str(field.not_supported(at, "Sometimes", ["Never", "Always"])) == \
        'spec.x: Unsupported value: "Sometimes": supported values: "Never", "Always"'
    assert str(field.forbidden(at, "may not be set")) == "spec.x: Forbidden: may not be set"
    assert str(field.duplicate(at, {"key": "a"})) == 'spec.x: Duplicate value: {"key": "a"}'
    assert str(field.too_many(at, 3, 2)) == "spec.x: Too many: 3: must have at most 2 items"
    assert str(field.too_long(at, 63)) == "spec.x: Too long: may not be more than 63 bytes"
    assert str(field.invalid("", 1, "whole object")) == "Invalid value: 1: whole object"


def test_values_show_as_json_and_stay_short():
    assert field.show("x") == '"x"' and field.show(None) == "null" and field.show(True) == "true"
    assert len(field.show("a" * 500)) == 80
    assert field.show({1, 2}).startswith("{")  # not JSON: Python's spelling, never an exception
