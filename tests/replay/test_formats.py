"""The four trace formats, read from content, and bad input refused with file, line or document, and field."""

from __future__ import annotations

import json

import pytest
import yaml

from aks_kueue.k8s.loader import LoadError
from aks_kueue.replay.formats import MAX_LINE_BYTES, read_trace
from aks_kueue.replay.trace import TraceError, trim_pod_spec

V1B2 = "kueue.x-k8s.io/v1beta2"
V1B1 = "kueue.x-k8s.io/v1beta1"


def _export(name: str, created: str, uid: str = "", finished: str = "", admitted: str = "", ready: str = "",
            api: str = V1B2, priority: int = 100, queue: str = "default", resource_version: str = "1") -> dict:
    conditions = []
    if admitted:
        conditions.append({"type": "Admitted", "status": "True", "lastTransitionTime": admitted})
    if ready:
        conditions.append({"type": "PodsReady", "status": "True", "lastTransitionTime": ready})
    if finished:
        conditions.append({"type": "Finished", "status": "True", "lastTransitionTime": finished})
    spec = {"queueName": queue, "priority": priority,
            "podSets": [{"name": "main", "count": 2, "template": {"spec": {
                "containers": [{"name": "c", "image": "busybox", "command": ["sleep", "1"],
                                "resources": {"requests": {"cpu": "2", "memory": "1Gi"}}}]}}}]}
    if api == V1B1:
        spec.update({"priorityClassSource": "kueue.x-k8s.io/workloadpriorityclass", "priorityClassName": "batch"})
    else:
        spec["priorityClassRef"] = {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": "batch"}
    metadata = {"name": name, "namespace": "team-a", "creationTimestamp": created, "resourceVersion": resource_version}
    if uid:
        metadata["uid"] = uid
    return {"apiVersion": api, "kind": "Workload", "metadata": metadata, "spec": spec,
            "status": {"conditions": conditions}}


def _list(*items: dict) -> dict:
    return {"apiVersion": "v1", "kind": "List", "items": list(items), "metadata": {"resourceVersion": ""}}


def test_a_workload_export_gives_times_runtime_queue_and_priority(tmp_path):
    path = tmp_path / "export.yaml"
    path.write_text(yaml.safe_dump(_list(
        _export("a", "2026-11-02T08:00:00Z", uid="u1", admitted="2026-11-02T08:01:00Z",
                finished="2026-11-02T09:01:00Z"),
        _export("b", "2026-11-02T08:30:00Z", uid="u2", admitted="2026-11-02T08:31:00Z",
                ready="2026-11-02T08:35:00Z", finished="2026-11-02T08:45:00Z"),
        _export("c", "2026-11-02T08:40:00Z", uid="u3"))))
    trace = read_trace([str(path)])
    a, b, c = trace.workloads
    assert trace.start == 1793606400.0  # 2026-11-02T08:00:00Z
    assert (a.submitted, a.runtime) == (0.0, 3600.0)
    assert (b.submitted, b.runtime) == (1800.0, 600.0)  # from PodsReady, not Admitted
    assert c.runtime is None  # not finished: runs to the end of the replay
    assert (a.queue, a.namespace, a.priority, a.priority_class) == ("default", "team-a", 100, "batch")
    # The pod template is trimmed to what admission and placement read.
    container = a.shape.pod_sets[0]["template"]["spec"]["containers"][0]
    assert container == {"name": "c", "resources": {"requests": {"cpu": "2", "memory": "1Gi"}}}
    assert a.shape is b.shape  # one shape, kept once


def test_a_v1beta1_export_as_json(tmp_path):
    path = tmp_path / "export.json"
    path.write_text(json.dumps(_list(_export("a", "2026-11-02T08:00:00Z", api=V1B1)), indent=2))
    workload = read_trace([str(path)]).workloads[0]
    assert workload.priority_class == "batch"


def test_several_exports_count_a_workload_once_with_its_latest_state(tmp_path):
    early = tmp_path / "day1.yaml"
    late = tmp_path / "day2.yaml"
    early.write_text(yaml.safe_dump_all([_export("a", "2026-11-02T08:00:00Z", uid="u1",
                                                 admitted="2026-11-02T08:01:00Z"),
                                         _export("b", "2026-11-02T08:05:00Z", uid="u2")]))
    late.write_text(yaml.safe_dump_all([_export("a", "2026-11-02T08:00:00Z", uid="u1",
                                                admitted="2026-11-02T08:01:00Z", finished="2026-11-02T08:21:00Z",
                                                resource_version="7")]))
    for order in ([early, late], [late, early]):
        trace = read_trace([str(p) for p in order])
        assert len(trace.workloads) == 2
        a = next(w for w in trace.workloads if w.name == "a")
        assert a.runtime == 1200.0  # the finished copy wins, whichever file came first


def test_without_uid_identity_is_namespace_name_and_creation(tmp_path):
    path = tmp_path / "export.yaml"
    path.write_text(yaml.safe_dump_all([_export("a", "2026-11-02T08:00:00Z"), _export("a", "2026-11-02T08:00:00Z"),
                                        _export("a", "2026-11-02T09:00:00Z")]))
    assert len(read_trace([str(path)]).workloads) == 2  # the name was reused an hour later: another workload


def test_json_lines_with_pod_sets(tmp_path):
    path = tmp_path / "trace.jsonl"
    path.write_text("\n".join([
        json.dumps({"submitted": "2026-11-02T08:00:00Z", "namespace": "team-a", "queue": "default", "name": "wl-1",
                    "priority": 100, "runtime": "2h",
                    "podSets": [{"name": "main", "count": 4, "minCount": 2,
                                 "requests": {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": "1"},
                                 "nodeSelector": {"pool": "a100"},
                                 "tolerations": [{"key": "sku", "operator": "Exists"}]}]}),
        "# a comment",
        "",
        json.dumps({"submitted": 60, "queue": "default", "name": "wl-2", "priorityClass": "batch-high",
                    "runtime": 7200, "podSets": [{"requests": {"cpu": 0.5}}]}),
    ]) + "\n")
    first, second = read_trace([str(path)]).workloads
    assert (first.runtime, first.priority, second.priority_class) == (7200.0, 100, "batch-high")
    assert second.submitted == 60.0 and second.namespace == "default"
    pod_set = first.shape.pod_sets[0]
    assert pod_set["minCount"] == 2 and pod_set["template"]["spec"]["nodeSelector"] == {"pool": "a100"}
    assert second.shape.pod_sets[0]["template"]["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "0.5"}


def test_json_lines_with_a_job_manifest_become_its_workload(tmp_path):
    job = {"apiVersion": "batch/v1", "kind": "Job",
           "metadata": {"name": "train", "namespace": "team-a", "labels": {"kueue.x-k8s.io/queue-name": "default"}},
           "spec": {"parallelism": 3, "completions": 3, "template": {"spec": {
               "restartPolicy": "Never",
               "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "2"}}}]}}}}
    path = tmp_path / "trace.jsonl"
    path.write_text(json.dumps({"submitted": 0, "runtime": "10m", "manifest": job}) + "\n")
    workload = read_trace([str(path)]).workloads[0]
    assert (workload.queue, workload.namespace) == ("default", "team-a")
    assert workload.shape.pod_sets[0]["count"] == 3


def test_csv_with_resource_columns(tmp_path):
    path = tmp_path / "trace.csv"
    path.write_text("submitted,namespace,queue,name,priority,runtime,count,cpu,memory,nvidia.com/gpu,minCount\n"
                    "2026-11-02T08:00:00Z,team-a,default,wl-1,100,2h,4,8,64Gi,1,2\n"
                    "2026-11-02T08:10:00Z,team-a,default,wl-2,,30m,1,500m,,,\n")
    first, second = read_trace([str(path)]).workloads
    assert (first.runtime, first.priority, second.submitted) == (7200.0, 100, 600.0)
    requests = first.shape.pod_sets[0]["template"]["spec"]["containers"][0]["resources"]["requests"]
    assert requests == {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": "1"}
    assert first.shape.pod_sets[0]["minCount"] == 2
    assert second.priority is None


def test_formats_mix_and_directories_are_read_in_name_order(tmp_path):
    (tmp_path / "b.csv").write_text("submitted,queue,name,runtime,count,cpu\n10,default,from-csv,1m,1,1\n")
    (tmp_path / "a.jsonl").write_text(json.dumps({"submitted": 10, "queue": "default", "name": "from-jsonl",
                                                  "podSets": [{"requests": {"cpu": "1"}}]}) + "\n")
    (tmp_path / "notes.txt").write_text("ignored: not a trace file name")
    trace = read_trace([str(tmp_path)])
    assert [w.name for w in trace.workloads] == ["from-jsonl", "from-csv"]
    assert [w.order for w in trace.workloads] == [0, 1]


@pytest.mark.parametrize("line, key, words", [
    ('{"submitted": "yesterday", "queue": "q", "podSets": [{}]}', "submitted", "not an RFC 3339 time"),
    ('{"submitted": 0, "queue": "q", "runtime": "2 hours", "podSets": [{}]}', "runtime", "not a runtime"),
    ('{"submitted": 0, "queue": "q", "podSets": [{"requests": {"cpu": "8x"}}]}', "podSets[0].requests.cpu",
     "not a quantity"),
    ('{"submitted": 0, "queue": "q", "podSets": [{"count": -1}]}', "podSets[0].count", "less than 0"),
    ('{"submitted": 0, "queue": "q", "podSets": [{"count": 2, "minCount": 3}]}', "podSets[0].minCount",
     "more than count"),
    ('{"submitted": 0, "queue": "q", "runtme": "1h", "podSets": [{}]}', "runtme", "did you mean 'runtime'"),
    ('{"submitted": 0, "podSets": [{}]}', "queue", "Required value"),
    ('{"submitted": 0, "queue": "q", "priority": 1, "priorityClass": "x", "podSets": [{}]}', "priorityClass",
     "not both"),
    ('{"submitted": 0, "queue": "q"}', "podSets", "either podSets or manifest"),
    ('{"submitted": 0, "queue": "q", "manifest": {"kind": "Deployment"}}', "manifest", "not one"),
    ('{"submitted": 0, "queue": "q", "queue": "r", "podSets": [{}]}', None, "the key 'queue' appears twice"),
    ('{"submitted": 0, "queue": "q", "podSets": [{}]', None, "not valid JSON"),
])
def test_bad_json_lines_are_refused_with_file_line_and_field(tmp_path, line, key, words):
    path = tmp_path / "trace.jsonl"
    path.write_text('{"submitted": 0, "queue": "q", "podSets": [{}]}\n' + line + "\n")
    with pytest.raises(TraceError) as caught:
        read_trace([str(path)])
    error = caught.value
    assert (error.source, error.line, error.key) == (str(path), 2, key)
    assert words in str(error) and str(error).startswith(f"{path} line 2: ")
    assert error.as_json()["line"] == 2 and error.as_json()["file"] == str(path)


def test_a_pod_set_of_count_zero_is_read(tmp_path):
    """Kueue's CRD allows count 0 (a pod set scaled to nothing), in JSON Lines and CSV alike."""
    (tmp_path / "a.jsonl").write_text('{"submitted": 0, "queue": "q", "name": "j", "podSets": [{"name": "idle", '
                                      '"count": 0, "requests": {"cpu": "1"}}, {"name": "main", "count": 1}]}\n')
    (tmp_path / "b.csv").write_text("submitted,queue,name,runtime,count,cpu\n0,q,c,1h,0,1\n")
    trace = read_trace([str(tmp_path / "a.jsonl"), str(tmp_path / "b.csv")])
    assert [[ps["count"] for ps in w.shape.pod_sets] for w in trace.workloads] == [[0, 1], [0]]


@pytest.mark.parametrize("row, key, words", [
    ("x,default,a,1h,1,1", "submitted", "not an RFC 3339 time"),
    ("0,default,a,1h,-2,1", "count", "less than 0"),
    ("0,default,a,forever,1,1", "runtime", "not a runtime"),
    ("0,default,a,1h,two,1", "count", "not a whole number"),
    ("0,default,a,1h,1,1 core", "cpu", "not a quantity"),
    ("0,default,a,1h,1", None, "5 cells, but the header has 6 columns"),
    ("0,,a,1h,1,1", "queue", "Required value"),
])
def test_bad_csv_rows_are_refused_with_file_line_and_column(tmp_path, row, key, words):
    path = tmp_path / "trace.csv"
    path.write_text("submitted,queue,name,runtime,count,cpu\n0,default,ok,1h,1,1\n" + row + "\n")
    with pytest.raises(TraceError) as caught:
        read_trace([str(path)])
    assert (caught.value.line, caught.value.key) == (3, key)
    assert words in str(caught.value)


@pytest.mark.parametrize("header, words", [
    ("submitted,name,runtime,count,cpu", "the header lacks queue"),
    ("submitted,queue,runtme,count,cpu", "did you mean 'runtime'"),
    ("submitted,queue,count", "no resource columns"),
    ("submitted,queue,count,cpu,runtime", "comes after count"),
])
def test_a_bad_csv_header_is_refused(tmp_path, header, words):
    path = tmp_path / "trace.csv"
    path.write_text(header + "\n")
    with pytest.raises(TraceError) as caught:
        read_trace([str(path)])
    assert caught.value.line == 1 and words in str(caught.value)


@pytest.mark.parametrize("change, key, words", [
    (lambda w: w["metadata"].pop("creationTimestamp"), "items[1].metadata.creationTimestamp", "Required value"),
    (lambda w: w["metadata"].update(creationTimestamp="soon"), "items[1].metadata.creationTimestamp",
     "not an RFC 3339 time"),
    (lambda w: w["spec"].pop("queueName"), "items[1].spec.queueName", "Required value"),
    (lambda w: w.update(kind="Job"), "items[1].kind", "is not a Kueue Workload"),
    (lambda w: w["spec"]["podSets"][0]["template"]["spec"]["containers"][0]["resources"]["requests"].update(
        cpu="lots"), "items[1].spec.podSets[0].template.spec.containers[0].resources.requests.cpu", "must be a quantity"),
    (lambda w: w["status"]["conditions"].append({"type": "Finished", "status": "True"}),
     "items[1].status.conditions[Finished]", "lastTransitionTime"),
])
def test_bad_exports_are_refused_with_file_document_and_field(tmp_path, change, key, words):
    bad = _export("b", "2026-11-02T08:00:00Z", uid="u2")
    change(bad)
    path = tmp_path / "export.yaml"
    path.write_text(yaml.safe_dump_all([{"apiVersion": "v1", "kind": "List", "items": []},
                                        _list(_export("a", "2026-11-02T08:00:00Z", uid="u1"), bad)]))
    with pytest.raises(TraceError) as caught:
        read_trace([str(path)])
    assert (caught.value.document, caught.value.key) == (1, key)
    assert words in str(caught.value) and str(caught.value).startswith(f"{path} document 1: {key}: ")


def test_unreadable_files_are_refused(tmp_path):
    missing = tmp_path / "nope.jsonl"
    with pytest.raises(LoadError, match="no such file"):
        read_trace([str(missing)])
    binary = tmp_path / "trace.jsonl"
    binary.write_bytes(b'{"submitted": 0, "queue": "q", "podSets": [{}]}\n\xff\xfe\n')
    with pytest.raises(TraceError, match="not UTF-8") as caught:
        read_trace([str(binary)])
    assert caught.value.line == 2
    long_line = tmp_path / "long.jsonl"
    long_line.write_text('{"submitted": 0, "queue": "' + "q" * (MAX_LINE_BYTES + 10) + '"}\n')
    with pytest.raises(TraceError, match="longer than 1 MiB") as caught:
        read_trace([str(long_line)])
    assert caught.value.line == 1
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(TraceError, match="no workloads"):
        read_trace([str(empty)])
    (tmp_path / "sub").mkdir()
    with pytest.raises(TraceError, match="a directory with no trace files"):
        read_trace([str(tmp_path / "sub")])


def test_a_large_yaml_export_is_refused_before_it_is_parsed(tmp_path):
    from aks_kueue.k8s.loader import Limits

    path = tmp_path / "export.yaml"
    path.write_text(yaml.safe_dump(_list(*[_export(f"w{i}", "2026-11-02T08:00:00Z") for i in range(20)])))
    with pytest.raises(TraceError, match="split the export"):
        read_trace([str(path)], Limits(max_bytes=2048))


def test_trimming_keeps_what_admission_and_placement_read():
    spec = {"containers": [{"name": "c", "image": "x", "env": [{"name": "A", "value": "1"}],
                            "resources": {"limits": {"nvidia.com/gpu": 1}}}],
            "initContainers": [{"name": "i", "image": "y", "restartPolicy": "Always",
                                "resources": {"requests": {"cpu": "1"}}}],
            "affinity": {"nodeAffinity": {"x": 1}, "podAntiAffinity": {"y": 2}}, "volumes": [{"name": "v"}],
            "tolerations": [{"key": "k", "operator": "Exists"}], "overhead": {"cpu": "100m"}}
    assert trim_pod_spec(spec) == {
        "containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": 1}}}],
        "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "1"}}, "restartPolicy": "Always"}],
        "overhead": {"cpu": "100m"}, "affinity": {"nodeAffinity": {"x": 1}},
        "tolerations": [{"key": "k", "operator": "Exists"}]}


def test_relative_and_absolute_times_share_one_clock(tmp_path):
    # Seconds "from the start" count from the earliest real time; every time is then from the first submission.
    path = tmp_path / "trace.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in [
        {"submitted": "2026-11-02T08:10:00Z", "queue": "q", "name": "late", "podSets": [{}]},
        {"submitted": 300, "queue": "q", "name": "relative", "podSets": [{}]},
        {"submitted": "2026-11-02T08:00:00Z", "queue": "q", "name": "first", "podSets": [{}]}]) + "\n")
    trace = read_trace([str(path)])
    assert {w.name: w.submitted for w in trace.workloads} == {"late": 600.0, "relative": 300.0, "first": 0.0}
    assert trace.start == 1793606400.0
