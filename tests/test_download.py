"""The trace downloader against a real loopback HTTP server (no internet)."""

from __future__ import annotations

import hashlib
import json
import re
import time
from pathlib import Path

import pytest

from stragglers.traces.google_parts import EVENT_TABLES, download_progress
from stragglers.traces.download import (
    ALIBABA_2017_URL,
    ALIBABA_2018_URL,
    GOOGLE_2011_URL,
    MANIFEST_NAME,
    DownloadReport,
    TraceDownloadError,
    default_trace_url,
    download_alibaba,
    download_google,
    parse_parts,
    parse_sha256sum,
)

from tests.httpserver import TraceServer, make_bucket, make_tar_gz

FAST = dict(backoff_s=0.001, retries=4, progress=False, timeout=10.0)
TU0 = "task_usage/part-00000-of-00500.csv.gz"
TU1 = "task_usage/part-00001-of-00500.csv.gz"


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch):
    for var in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def bucket(tmp_path):
    root = tmp_path / "bucket"
    files = make_bucket(root, n_parts=3, rows=600)
    return root, files


@pytest.fixture
def server(bucket):
    root, _ = bucket
    with TraceServer(root) as srv:
        yield srv


def _expected(files, parts=2):
    sel = {"schema.csv": files["schema.csv"]}
    for rel, data in files.items():
        if rel.endswith(".csv.gz") and int(rel.split("part-")[1][:5]) < parts:
            sel[rel] = data
    return sel


def _assert_tree(dest: Path, expected: dict[str, bytes]):
    for rel, data in expected.items():
        assert (dest / rel).read_bytes() == data, rel
    leftovers = [p for p in dest.rglob("*.part")]
    assert leftovers == []


# --------------------------------------------------------------------------


def test_parse_parts():
    assert parse_parts("all") == "all"
    assert parse_parts(" ALL ") == "all"
    assert parse_parts("3") == 3
    assert parse_parts(5) == 5
    for bad in ("0", "-1", "two", "", "1.5"):
        with pytest.raises(ValueError, match="NURD_TRACE_PARTS"):
            parse_parts(bad)


def test_events_selects_every_part_of_the_event_tables_only(tmp_path):
    assert parse_parts("events") == parse_parts(" Events ") == {
        "job_events": "all", "task_events": "all", "machine_events": "all"}
    root = tmp_path / "bucket"
    files = make_bucket(root, tables=("job_events", "task_events", "task_usage", "machine_events"), n_parts=3,
                        rows=200)
    logs: list[str] = []
    with TraceServer(root) as slow:
        slow.delay_s = 0.15          # slow enough that the 0.1 s progress ticker fires while it runs
        rep = download_google(slow.url, tmp_path / "dest", parts="events", workers=1, log=logs.append,
                              progress_every_s=0.1, **FAST)
    got = sorted(str(p.relative_to(tmp_path / "dest")) for p in rep.files)
    want = sorted(["schema.csv"] + [rel for rel in files if rel.split("/")[0] in EVENT_TABLES])
    assert got == want and len(want) == 1 + 3 * 3
    assert rep.tables == {"job_events": 3, "task_events": 3, "task_usage": 0, "machine_events": 3}
    assert rep.tables_missing == {"task_usage": "not selected by NURD_TRACE_PARTS"}
    ticks = [m for m in logs if m.startswith("download progress: ")]
    assert len(ticks) >= 3, logs
    assert all(re.search(r"\d+/10 files, [\d.]+ (B|KB) fetched in \d+ s \(", t) for t in ticks), ticks
    assert any(" left" in t for t in ticks), ticks     # an estimate once a file is fetched


def test_download_progress_line_worked_by_hand():
    # 4 of 10 files done, 3 of them fetched: 3 MB in 30 s = 0.1 MB/s; 6 files left at 1 MB each = 60 s
    mb = 1024 * 1024
    assert download_progress(done=4, total=10, fetched_files=3, fetched_bytes=3 * mb, seconds=30.0) == (
        "download progress: 4/10 files, 3.0 MB fetched in 30 s (102.4 KB/s), about 60 s left")
    # nothing fetched yet: no estimate; 200 files left at 1 MB and 0.1 MB/s: 2000 s = 33 min
    assert download_progress(done=0, total=5, fetched_files=0, fetched_bytes=0, seconds=3.0).endswith("(0 B/s)")
    assert download_progress(done=10, total=210, fetched_files=10, fetched_bytes=10 * mb,
                             seconds=100.0).endswith("about 33 min left")


def test_constants_and_default_urls():
    assert GOOGLE_2011_URL == "https://storage.googleapis.com/clusterdata-2011-2/"
    assert default_trace_url("google_2011") == GOOGLE_2011_URL
    assert default_trace_url("alibaba_2018") == ALIBABA_2018_URL
    assert default_trace_url("alibaba_2017") == ALIBABA_2017_URL
    with pytest.raises(ValueError):
        default_trace_url("synthetic")


def test_parse_sha256sum_rejects_unsafe_paths():
    h = "a" * 64
    assert parse_sha256sum(f"{h}  ./job_events/x.csv.gz\n{h} *schema.csv\n") == {
        "job_events/x.csv.gz": h,
        "schema.csv": h,
    }
    with pytest.raises(TraceDownloadError):
        parse_sha256sum(f"{h}  ../etc/passwd\n")
    with pytest.raises(TraceDownloadError):
        parse_sha256sum("nothex  ./a\n")


def test_full_download_verifies_every_file(server, bucket, tmp_path):
    _, files = bucket
    dest = tmp_path / "dest"
    logs: list[str] = []
    rep = download_google(server.url, dest, parts=2, workers=1, log=logs.append, **FAST)
    expected = _expected(files, 2)
    assert isinstance(rep, DownloadReport)
    assert sorted(rep.files) == sorted(dest / r for r in expected)
    assert rep.files_verified == len(expected) == 7
    assert rep.files_skipped == 0
    assert rep.bytes_downloaded == rep.bytes_total == sum(len(d) for d in expected.values())
    assert rep.seconds >= 0
    _assert_tree(dest, expected)
    assert not (dest / "task_usage/part-00002-of-00500.csv.gz").exists()
    assert any(m.startswith(f"downloaded {TU0}") for m in logs)
    manifest = json.loads((dest / MANIFEST_NAME).read_text())["files"]
    for rel, data in expected.items():
        assert manifest[rel]["sha256"] == hashlib.sha256(data).hexdigest()
        assert manifest[rel]["size"] == len(data)


def test_all_parts_and_table_subset(server, bucket, tmp_path):
    _, files = bucket
    dest = tmp_path / "dest"
    rep = download_google(server.url, dest, tables=("task_usage",), parts="all", **FAST)
    assert rep.files_verified == 1 + 3
    assert not (dest / "job_events").exists()
    for p in range(3):
        rel = f"task_usage/part-{p:05d}-of-00500.csv.gz"
        assert (dest / rel).read_bytes() == files[rel]


def test_connection_cut_resumes_without_refetching(server, bucket, tmp_path):
    _, files = bucket
    size = len(files[TU0])
    cut = size // 3
    assert cut > 0
    server.cut_after[TU0] = cut
    dest = tmp_path / "dest"
    logs: list[str] = []
    download_google(server.url, dest, parts=2, workers=2, log=logs.append, **FAST)
    _assert_tree(dest, _expected(files, 2))
    reqs = server.requests_for(TU0)
    assert [r.range for r in reqs] == [None, f"bytes={cut}-"]
    assert [r.status for r in reqs] == [200, 206]
    assert [r.bytes_sent for r in reqs] == [cut, size - cut]
    assert sum(r.bytes_sent for r in reqs) == size  # no byte fetched twice
    assert any("resuming at byte" in m for m in logs)


def test_partial_file_from_earlier_run_is_resumed(server, bucket, tmp_path):
    _, files = bucket
    dest = tmp_path / "dest"
    (dest / "task_usage").mkdir(parents=True)
    (dest / (TU0 + ".part")).write_bytes(files[TU0][:500])
    download_google(server.url, dest, parts=1, tables=("task_usage",), **FAST)
    assert (dest / TU0).read_bytes() == files[TU0]
    assert [r.range for r in server.requests_for(TU0)] == ["bytes=500-"]


def test_server_ignoring_range_restarts_cleanly(server, bucket, tmp_path):
    _, files = bucket
    server.ignore_range.add(TU0)
    server.cut_after[TU0] = 700
    dest = tmp_path / "dest"
    download_google(server.url, dest, parts=1, tables=("task_usage",), **FAST)
    assert (dest / TU0).read_bytes() == files[TU0]
    reqs = server.requests_for(TU0)
    assert [r.status for r in reqs] == [200, 200]
    assert reqs[1].range == "bytes=700-"  # asked to resume, got the whole file


def test_5xx_then_success(server, bucket, tmp_path):
    _, files = bucket
    server.fail_first[TU1] = (2, 503)
    server.fail_first["SHA256SUM"] = (1, 500)
    dest = tmp_path / "dest"
    logs: list[str] = []
    download_google(server.url, dest, parts=2, log=logs.append, **FAST)
    _assert_tree(dest, _expected(files, 2))
    assert [r.status for r in server.requests_for(TU1)] == [503, 503, 200]
    assert any("retry 2/4" in m for m in logs)


def test_5xx_forever_gives_up_naming_file(server, tmp_path):
    server.fail_first[TU1] = (100, 500)
    with pytest.raises(TraceDownloadError, match=TU1) as ei:
        download_google(server.url, tmp_path / "dest", parts=2, workers=1, **FAST)
    assert server.url in str(ei.value)
    assert len(server.requests_for(TU1)) == FAST["retries"] + 1
    assert not (tmp_path / "dest" / TU1).exists()


def test_checksum_mismatch_raises_and_leaves_nothing(server, tmp_path):
    server.corrupt.add(TU1)
    dest = tmp_path / "dest"
    with pytest.raises(TraceDownloadError, match="checksum mismatch") as ei:
        download_google(server.url, dest, parts=2, workers=1, **FAST)
    assert TU1 in str(ei.value) and "What to do: " in str(ei.value)
    assert ei.value.path == TU1
    assert not (dest / TU1).exists()
    assert not (dest / (TU1 + ".part")).exists()
    assert len(server.requests_for(TU1)) == 1  # no pointless retry of a fresh download


def test_missing_on_server_names_it(server, tmp_path):
    server.missing.add(TU1)
    with pytest.raises(TraceDownloadError, match="missing on the server") as ei:
        download_google(server.url, tmp_path / "dest", parts=2, workers=1, **FAST)
    assert TU1 in str(ei.value) and server.url in str(ei.value)
    assert len(server.requests_for(TU1)) == 1  # 404 is not retried
    assert not list((tmp_path / "dest").rglob("*.part"))


def test_part_not_in_sha256sum_names_it(server, tmp_path):
    with pytest.raises(TraceDownloadError, match="task_usage/part-00003-of-00500.csv.gz") as ei:
        download_google(server.url, tmp_path / "dest", parts=4, **FAST)
    assert "not listed in SHA256SUM" in str(ei.value)
    assert "job_events/part-00003-of-00500.csv.gz" in str(ei.value)
    # Failed before fetching any data file.
    assert server.paths_requested() == ["SHA256SUM"]


def test_unknown_table_is_an_error(server, tmp_path):
    with pytest.raises(TraceDownloadError, match="machine_events"):
        download_google(server.url, tmp_path / "dest", tables=("machine_events",), **FAST)


def test_rerun_skips_verified_files(server, bucket, tmp_path):
    _, files = bucket
    dest = tmp_path / "dest"
    download_google(server.url, dest, parts=2, **FAST)
    server.clear_log()
    rep = download_google(server.url, dest, parts=2, **FAST)
    assert server.paths_requested() == []  # SHA256SUM cached, every file trusted
    assert rep.files_skipped == 7 and rep.files_verified == 0 and rep.bytes_downloaded == 0
    assert rep.bytes_total == sum(len(d) for d in _expected(files, 2).values())

    # Growing the selection fetches only the new parts.
    rep = download_google(server.url, dest, parts=3, **FAST)
    assert sorted(server.paths_requested()) == sorted(
        f"{t}/part-00002-of-00500.csv.gz" for t in ("job_events", "task_events", "task_usage")
    )
    assert rep.files_skipped == 7 and rep.files_verified == 3


def test_rerun_rehashes_without_manifest_and_replaces_tampered(server, bucket, tmp_path):
    _, files = bucket
    dest = tmp_path / "dest"
    download_google(server.url, dest, parts=1, tables=("task_usage",), **FAST)
    (dest / MANIFEST_NAME).unlink()
    server.clear_log()
    rep = download_google(server.url, dest, parts=1, tables=("task_usage",), **FAST)
    assert server.paths_requested() == []
    assert rep.files_skipped == 2 and rep.files_verified == 2  # hashed, not fetched

    # A file changed on disk after verification is re-checked and re-fetched.
    time.sleep(0.01)
    (dest / TU0).write_bytes(b"garbage")
    rep = download_google(server.url, dest, parts=1, tables=("task_usage",), **FAST)
    assert server.paths_requested() == [TU0]
    assert (dest / TU0).read_bytes() == files[TU0]


def test_file_url_and_plain_directory(bucket, tmp_path):
    root, files = bucket
    expected = _expected(files, 2)
    for i, base in enumerate((root.as_uri() + "/", str(root))):
        dest = tmp_path / f"dest{i}"
        rep = download_google(base, dest, parts=2, **FAST)
        assert rep.files_verified == len(expected)
        _assert_tree(dest, expected)


def test_local_source_detects_corruption_and_missing(bucket, tmp_path):
    root, files = bucket
    (root / TU1).write_bytes(b"x" + files[TU1][1:])
    with pytest.raises(TraceDownloadError, match=TU1):
        download_google(str(root), tmp_path / "d1", parts=2, **FAST)
    assert not (tmp_path / "d1" / TU1).exists()
    (root / TU1).unlink()
    with pytest.raises(TraceDownloadError, match=f"missing.*{TU1}"):
        download_google(root.as_uri(), tmp_path / "d2", parts=2, **FAST)


def test_parallel_workers_same_result(server, bucket, tmp_path):
    _, files = bucket
    server.cut_after[TU1] = 400
    server.fail_first["job_events/part-00002-of-00500.csv.gz"] = (1, 502)
    r1 = download_google(server.url, tmp_path / "a", parts="all", workers=1, **FAST)
    r3 = download_google(server.url, tmp_path / "b", parts="all", workers=3, **FAST)
    assert r1.files_verified == r3.files_verified == 10
    assert r1.bytes_total == r3.bytes_total
    for rel, data in files.items():
        assert (tmp_path / "a" / rel).read_bytes() == data
        assert (tmp_path / "b" / rel).read_bytes() == data
    ma = json.loads((tmp_path / "a" / MANIFEST_NAME).read_text())["files"]
    mb = json.loads((tmp_path / "b" / MANIFEST_NAME).read_text())["files"]
    assert {k: v["sha256"] for k, v in ma.items()} == {k: v["sha256"] for k, v in mb.items()}


def test_parallel_error_stops_and_keeps_verified_files(server, bucket, tmp_path):
    server.corrupt.add("task_usage/part-00002-of-00500.csv.gz")
    dest = tmp_path / "dest"
    with pytest.raises(TraceDownloadError, match="part-00002"):
        download_google(server.url, dest, parts="all", workers=3, **FAST)
    assert not (dest / "task_usage/part-00002-of-00500.csv.gz").exists()
    for p in dest.rglob("*.csv.gz"):  # whatever made it is verified
        man = json.loads((dest / MANIFEST_NAME).read_text())["files"]
        rel = p.relative_to(dest).as_posix()
        assert man[rel]["sha256"] == hashlib.sha256(p.read_bytes()).hexdigest()


def test_schema_not_listed_is_size_checked(tmp_path):
    root = tmp_path / "bucket"
    files = make_bucket(root, n_parts=1, rows=50, schema_in_sums=False)
    logs: list[str] = []
    dest = tmp_path / "dest"
    rep = download_google(str(root), dest, parts=1, log=logs.append, **FAST)
    assert (dest / "schema.csv").read_bytes() == files["schema.csv"]
    assert rep.files_verified == 4
    assert any("only size-checked" in m for m in logs)
    rep = download_google(str(root), dest, parts=1, **FAST)
    assert rep.files_skipped == 4


# --------------------------------------------------------------------------
# Alibaba
# --------------------------------------------------------------------------

CSV = b"".join(
    f"inst_{i},task_{i % 7},job_{i % 3},1,Terminated,{i},{i + 50},m_{i % 11},1,1,{i % 100},{i % 100},0.5,0.7\n".encode()
    for i in range(20000)
)


@pytest.fixture
def alibaba(tmp_path):
    root = tmp_path / "ali"
    data = make_tar_gz(root / "v2018Traces" / "batch_instance.tar.gz",
                       {"README": b"hello\n", "batch_instance.csv": CSV, "other.csv": b"x\n"})
    with TraceServer(root) as srv:
        yield srv, data, srv.url + "v2018Traces/batch_instance.tar.gz"


def test_alibaba_stream_extract_with_resume(alibaba, tmp_path):
    srv, data, url = alibaba
    rel = "v2018Traces/batch_instance.tar.gz"
    srv.cut_after[rel] = len(data) // 2
    dest = tmp_path / "out"
    logs: list[str] = []
    rep = download_alibaba(url, dest, expected_size=len(data),
                           sha256=hashlib.sha256(data).hexdigest(), log=logs.append, **FAST)
    assert (dest / "batch_instance.csv").read_bytes() == CSV
    assert (dest / "batch_instance.tar.gz").read_bytes() == data
    assert not list(dest.glob("*.part"))
    reqs = srv.requests_for(rel)
    assert [r.range for r in reqs] == [None, f"bytes={len(data) // 2}-"]
    assert sum(r.bytes_sent for r in reqs) == len(data)
    assert rep.bytes_downloaded == rep.bytes_total == len(data)
    assert rep.files_verified == 1
    assert any(m.startswith("extracted batch_instance.csv") for m in logs)

    srv.clear_log()
    rep = download_alibaba(url, dest, expected_size=len(data), **FAST)
    assert srv.paths_requested() == [] and rep.files_skipped == 1


def test_alibaba_size_mismatch(alibaba, tmp_path):
    srv, data, url = alibaba
    dest = tmp_path / "out"
    with pytest.raises(TraceDownloadError, match="size mismatch.*batch_instance.tar.gz") as ei:
        download_alibaba(url, dest, expected_size=len(data) + 10, **FAST)
    assert url in str(ei.value)
    assert not (dest / "batch_instance.tar.gz").exists()
    assert not (dest / "batch_instance.csv").exists()


def test_alibaba_truncated_transfer_is_an_error(alibaba, tmp_path):
    srv, data, url = alibaba
    rel = "v2018Traces/batch_instance.tar.gz"
    srv.cut_always[rel] = 100  # every attempt is cut after 100 bytes
    dest = tmp_path / "out"
    with pytest.raises(TraceDownloadError, match="truncated") as ei:
        download_alibaba(url, dest, retries=2, backoff_s=0.001, progress=False)
    assert "batch_instance.tar.gz" in str(ei.value)
    assert not (dest / "batch_instance.tar.gz").exists()
    # The partial transfer is kept for a later resume (never under the final name).
    assert (dest / "batch_instance.tar.gz.part").stat().st_size == 300


def test_alibaba_member_in_subdir_and_local_source(tmp_path):
    arc = tmp_path / "src" / "trace.tar.gz"
    make_tar_gz(arc, {"./data/batch_instance.csv": CSV})
    dest = tmp_path / "out"
    download_alibaba(arc.as_uri(), dest, **FAST)
    assert (dest / "batch_instance.csv").read_bytes() == CSV
    dest2 = tmp_path / "out2"
    download_alibaba(str(arc), dest2, keep_archive=False, **FAST)
    assert (dest2 / "batch_instance.csv").read_bytes() == CSV
    assert not (dest2 / "trace.tar.gz").exists()


def test_alibaba_missing_member_and_corrupt_archive(tmp_path):
    arc = tmp_path / "src" / "a.tar.gz"
    make_tar_gz(arc, {"other.csv": b"1\n"})
    with pytest.raises(TraceDownloadError, match="batch_instance.csv.*not found"):
        download_alibaba(str(arc), tmp_path / "o1", **FAST)
    assert not list((tmp_path / "o1").glob("*.part"))
    bad = tmp_path / "src" / "bad.tar.gz"
    bad.write_bytes(b"\x1f\x8b" + b"not really gzip" * 10)
    with pytest.raises(TraceDownloadError, match="bad.tar.gz.*corrupt"):
        download_alibaba(str(bad), tmp_path / "o2", **FAST)
    assert not (tmp_path / "o2" / "bad.tar.gz").exists()
    assert not (tmp_path / "o2" / "batch_instance.csv").exists()


def test_alibaba_archive_already_in_dest_is_used_in_place(tmp_path):
    dest = tmp_path / "out"
    arc = dest / "batch_instance.tar.gz"
    data = make_tar_gz(arc, {"batch_instance.csv": CSV})
    rep = download_alibaba(str(arc), dest, keep_archive=False, expected_size=len(data), **FAST)
    assert (dest / "batch_instance.csv").read_bytes() == CSV
    assert arc.read_bytes() == data  # the source itself is never deleted
    assert rep.bytes_downloaded == 0


def test_complete_part_file_is_not_refetched(server, bucket, tmp_path):
    _, files = bucket
    dest = tmp_path / "dest"
    (dest / "task_usage").mkdir(parents=True)
    (dest / (TU0 + ".part")).write_bytes(files[TU0])  # finished, never renamed
    download_google(server.url, dest, parts=1, tables=("task_usage",), **FAST)
    assert (dest / TU0).read_bytes() == files[TU0]
    reqs = server.requests_for(TU0)
    assert [(r.status, r.bytes_sent) for r in reqs] == [(416, 0)]


def test_stale_part_file_with_wrong_bytes_is_redone_once(server, bucket, tmp_path):
    _, files = bucket
    dest = tmp_path / "dest"
    (dest / "task_usage").mkdir(parents=True)
    (dest / (TU0 + ".part")).write_bytes(b"\0" * 300)  # wrong prefix
    download_google(server.url, dest, parts=1, tables=("task_usage",), **FAST)
    assert (dest / TU0).read_bytes() == files[TU0]
    assert [r.range for r in server.requests_for(TU0)] == ["bytes=300-", None]


def test_progress_bar_and_log_lines(server, tmp_path, capsys):
    logs: list[str] = []
    download_google(server.url, tmp_path / "dest", parts=1, log=logs.append,
                    **{**FAST, "progress": True})
    err = capsys.readouterr().err
    assert "clusterdata-2011-2" in err  # tqdm bar description
    assert logs[-1].startswith("clusterdata-2011-2: 4 files")
    assert all("/s)" in m for m in logs if m.startswith("downloaded "))


# --------------------------------------------------------------------------
# Partial mirrors and per-table part selections
# --------------------------------------------------------------------------


def test_parse_parts_per_table():
    assert parse_parts("task_events=0-13,job_events=all") == {
        "task_events": tuple(range(14)), "job_events": "all"}
    assert parse_parts("task_events=3, 2") == {"task_events": 3, "*": 2}
    assert parse_parts("job_events=all,all") == {"job_events": "all", "*": "all"}
    for bad in ("task_events=5-2", "task_events=x", "0-3", "task_events=1,task_events=2", "a b=1",
                "task_events=0"):
        with pytest.raises(ValueError, match="NURD_TRACE_PARTS"):
            parse_parts(bad)


def test_partial_sha256sum_takes_the_listed_tables_and_reports_the_rest(tmp_path):
    root = tmp_path / "mirror"
    files = make_bucket(root, tables=("job_events", "task_events"), n_parts=3, rows=50)
    logs: list[str] = []
    rep = download_google(str(root), tmp_path / "dest", parts="all", log=logs.append, **FAST)
    assert rep.tables == {"job_events": 3, "task_events": 3, "task_usage": 0, "machine_events": 0}
    assert rep.tables_missing == {"task_usage": "no parts listed in SHA256SUM",
                                  "machine_events": "no parts listed in SHA256SUM"}
    assert rep.files_verified == 1 + 6
    assert any("task_usage left out" in m for m in logs)
    for rel, data in files.items():
        assert (tmp_path / "dest" / rel).read_bytes() == data
    assert not (tmp_path / "dest" / "task_usage").exists()


def test_per_table_selection_fetches_exactly_the_named_parts(server, bucket, tmp_path):
    dest = tmp_path / "dest"
    rep = download_google(server.url, dest, parts="task_events=1-2,job_events=all", **FAST)
    got = sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*.csv.gz"))
    assert got == [f"job_events/part-0000{i}-of-00500.csv.gz" for i in range(3)] + [
        "task_events/part-00001-of-00500.csv.gz", "task_events/part-00002-of-00500.csv.gz"]
    assert rep.tables_missing == {"task_usage": "not selected by NURD_TRACE_PARTS",
                                  "machine_events": "not selected by NURD_TRACE_PARTS"}
    # a named table or part the index does not list is an error naming it
    with pytest.raises(TraceDownloadError, match="task_events/part-00007-of-00500.csv.gz"):
        download_google(server.url, tmp_path / "d2", parts="task_events=6-7", **FAST)


def test_named_table_without_parts_is_an_error(tmp_path):
    root = tmp_path / "mirror"
    make_bucket(root, tables=("job_events", "task_events"), n_parts=1, rows=20)
    with pytest.raises(TraceDownloadError, match="'task_usage' is selected by NURD_TRACE_PARTS"):
        download_google(str(root), tmp_path / "dest", parts="task_usage=all,all", **FAST)


def test_local_directory_without_sha256sum_is_taken_as_it_is(tmp_path):
    root = tmp_path / "mirror"
    files = make_bucket(root, tables=("job_events", "task_events"), n_parts=2, rows=30)
    (root / "SHA256SUM").unlink()
    (root / "schema.csv").unlink()
    logs: list[str] = []
    dest = tmp_path / "dest"
    rep = download_google(str(root), dest, parts="all", log=logs.append, **FAST)
    assert rep.files_unverified == 4 and rep.files_verified == 0
    assert rep.tables_missing == {"task_usage": "no parts listed in SHA256SUM",
                                  "machine_events": "no parts listed in SHA256SUM"}
    assert any("has no SHA256SUM" in m for m in logs)
    assert any("schema.csv is not at the source" in m for m in logs)
    for rel, data in files.items():
        if rel != "schema.csv":
            assert (dest / rel).read_bytes() == data
    rep = download_google(str(root), dest, parts="all", **FAST)   # second run: nothing fetched
    assert rep.files_skipped == 4 and rep.bytes_downloaded == 0


def test_one_part_machine_events_is_fetched_whole_by_a_part_count(tmp_path):
    # the bucket's machine_events is one part (part-00000-of-00001); a count N of parts per table
    # (the default 2) must fetch it, not ask for a part 00001 that does not exist
    root = tmp_path / "mirror"
    files = make_bucket(root, tables=("job_events", "task_events"), n_parts=2, rows=20)
    machines = make_bucket(tmp_path / "machines", tables=("machine_events",), n_parts=1, of=1, rows=20)
    rel = "machine_events/part-00000-of-00001.csv.gz"
    (root / "machine_events").mkdir()
    (root / rel).write_bytes(machines[rel])
    with open(root / "SHA256SUM", "a") as sums:
        sums.write(f"{hashlib.sha256(machines[rel]).hexdigest()}  ./{rel}\n")
    rep = download_google(str(root), tmp_path / "dest", parts=2, **FAST)
    assert rep.tables == {"job_events": 2, "task_events": 2, "task_usage": 0, "machine_events": 1}
    assert rep.tables_missing == {"task_usage": "no parts listed in SHA256SUM"}
    assert rep.files_verified == 1 + 4 + 1
    assert (tmp_path / "dest" / rel).read_bytes() == machines[rel]
    assert (tmp_path / "dest" / "job_events/part-00001-of-00500.csv.gz").read_bytes() == files[
        "job_events/part-00001-of-00500.csv.gz"]
