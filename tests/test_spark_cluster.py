"""A real Spark standalone cluster (tests/spark_cluster.py) writes real event logs with real speculative
copies: the copy of each slowed partition runs on the other host, every codec and the rolling layout
are what was asked, and the cluster keeps to loopback and leaves no process behind."""

import ipaddress
import subprocess
import sys
import time

import pytest

from tests import spark_cluster
from tests.spark_cluster import (CODECS, PARTITIONS, VARIANTS, WORKER_HOSTS, event_files, read_events,
                                 sniff_codec, speculative_copies)


def _attempts(log):
    """(stage id, task index) -> {attempt: (start event, end event)} of the stages of PARTITIONS tasks,
    and those stages in submission order."""
    stages, attempts = [], {}
    for event in read_events(log):
        if event["Event"] == "SparkListenerStageSubmitted" and event["Stage Info"]["Number of Tasks"] == PARTITIONS:
            stages.append(event["Stage Info"]["Stage ID"])
        if event["Event"] in ("SparkListenerTaskStart", "SparkListenerTaskEnd"):
            info = event["Task Info"]
            pair = attempts.setdefault((event["Stage ID"], info["Index"]), {}).setdefault(info["Attempt"], [None, None])
            pair[event["Event"] == "SparkListenerTaskEnd"] = event
    return stages, attempts


@pytest.mark.parametrize("variant", [v.name for v in VARIANTS if not v.killed])
def test_the_slowed_partition_is_copied_onto_the_other_host(spark_eventlogs, variant):
    app = spark_eventlogs.app(variant)
    stages, attempts = _attempts(spark_eventlogs.log_path(variant))
    assert len(stages) == len(app["slowed"])
    for stage, slowed in zip(stages, app["slowed"]):
        lives = attempts[stage, slowed]
        original = [pair for pair in lives.values() if not pair[0]["Task Info"]["Speculative"]]
        copies = [pair for pair in lives.values() if pair[0]["Task Info"]["Speculative"]]
        assert len(original) == 1 and copies, f"stage {stage}: partition {slowed} has {len(copies)} speculative attempts"
        (start, end), = original
        for copy_start, copy_end in copies:
            assert copy_end is not None and copy_end["Task Info"]["Speculative"] is True
            assert copy_start["Task Info"]["Host"] in WORKER_HOSTS
            assert copy_start["Task Info"]["Host"] != start["Task Info"]["Host"]
            assert copy_start["Task Info"]["Launch Time"] > start["Task Info"]["Launch Time"]
        # one life succeeded and Spark killed the other: the copy, since the original sleeps
        reasons = sorted(pair[1]["Task End Reason"]["Reason"] for pair in lives.values())
        assert reasons == ["Success", "TaskKilled"]
        assert end["Task End Reason"]["Reason"] == "TaskKilled"


def test_every_executor_ran_on_its_own_loopback_worker(spark_eventlogs):
    """Each application had one executor per worker host, and the driver's and executors' block
    managers were on loopback."""
    for app in spark_eventlogs.apps:
        events = list(read_events(spark_eventlogs.log_path(app["variant"])))
        hosts = sorted(e["Executor Info"]["Host"] for e in events if e["Event"] == "SparkListenerExecutorAdded")
        assert hosts == sorted(WORKER_HOSTS), app["variant"]
        managers = {e["Block Manager ID"]["Host"] for e in events if e["Event"] == "SparkListenerBlockManagerAdded"}
        assert managers == {spark_cluster.MASTER_HOST, *WORKER_HOSTS}, app["variant"]


def test_the_recorded_ground_truth_is_the_logs(spark_eventlogs):
    """The manifest's copies (what later tests compare a replay with) are re-read from the logs, and
    every slowed partition has one."""
    for app in spark_eventlogs.apps:
        copies = speculative_copies(spark_eventlogs.log_path(app["variant"]))
        assert [c for c in spark_eventlogs.copies(inprogress=True) if c.app_id == app["app_id"]] == copies
        assert any(c.app_id == app["app_id"] for c in spark_eventlogs.copies()) != app["killed"]
        assert all(any(c.task_index == slowed for c in copies) for slowed in app["slowed"])
        for c in copies:
            assert c.app_id == app["app_id"]
            assert c.stage_submitted <= c.original_launch < c.copy_launch
            assert c.original_host != c.copy_host


@pytest.mark.parametrize("variant", [v.name for v in VARIANTS])
def test_each_log_is_written_with_the_codec_asked(spark_eventlogs, variant):
    app = spark_eventlogs.app(variant)
    files = event_files(spark_eventlogs.log_path(variant))
    for path in files:
        assert sniff_codec(path) == app["codec"], path.name
        assert path.name.removesuffix(".inprogress").endswith(f".{app['codec']}" if app["codec"] else app["app_id"])
    if app["codec"] is None:
        assert files[0].read_bytes().startswith(b'{"Event":"SparkListenerLogStart"')


def test_every_codec_spark_offers_and_both_layouts_are_covered(spark_eventlogs):
    assert {a["codec"] for a in spark_eventlogs.apps} == {None, *CODECS}
    assert {a["rolling"] for a in spark_eventlogs.apps} == {True, False}


def test_a_rolling_log_is_a_folder_of_several_events_files_and_an_appstatus(spark_eventlogs):
    for app in spark_eventlogs.apps:
        log = spark_eventlogs.log_path(app["variant"])
        if not app["rolling"]:
            assert log.is_file() and log.name.startswith(app["app_id"])
            continue
        assert log.is_dir() and log.name == f"eventlog_v2_{app['app_id']}"
        files = event_files(log)
        assert [int(p.name.split("_")[1]) for p in files] == list(range(1, len(files) + 1))
        assert len(files) > 1
        assert (log / f"appstatus_{app['app_id']}").is_file()   # complete: no .inprogress left
        events = list(read_events(log))
        assert events[0]["Event"] == "SparkListenerLogStart" and events[-1]["Event"] == "SparkListenerApplicationEnd"


def test_a_killed_driver_leaves_its_log_in_progress(spark_eventlogs):
    """The last application's driver kills itself after its first stage, as a crashed driver would:
    its log stays ``.inprogress``, readable up to what Spark flushed, with no application end."""
    (app,) = [a for a in spark_eventlogs.apps if a["killed"]]
    log = spark_eventlogs.log_path(app["variant"])
    assert log.parent.name == spark_cluster.INPROGRESS_DIR
    assert log.name == f"{app['app_id']}.{app['codec']}.inprogress"
    events = [e["Event"] for e in read_events(log)]
    assert events[0] == "SparkListenerLogStart" and "SparkListenerJobEnd" in events
    assert "SparkListenerApplicationEnd" not in events
    assert [c.task_index for c in spark_eventlogs.copies(inprogress=True) if c.app_id == app["app_id"]] == app["slowed"]
    complete = [p.name for p in spark_eventlogs.eventlog_dir.rglob("*") if p.name.endswith(".inprogress")]
    assert complete == []


def test_the_cluster_keeps_to_loopback_and_leaves_no_process_on_failure(tmp_path):
    reason = spark_cluster.java_missing_reason()
    if reason:
        pytest.skip(reason)
    with pytest.raises(RuntimeError, match="a test failed inside"):
        with spark_cluster.standalone_cluster(tmp_path, worker_hosts=WORKER_HOSTS[:1]) as cluster:
            assert sorted(spark_cluster.processes_under(tmp_path)) == sorted(p.pid for p in cluster.processes.values())
            for name, proc in cluster.processes.items():
                addresses = spark_cluster.listening_addresses(proc.pid)
                assert addresses, f"{name} listens nowhere"
                assert all(ipaddress.ip_address(a).is_loopback for a in addresses), (name, addresses)
            assert spark_cluster.listening_addresses(cluster.processes["worker1"].pid) == {WORKER_HOSTS[0]}
            raise RuntimeError("a test failed inside")
    assert spark_cluster.processes_under(tmp_path) == []


def test_a_run_killed_outright_leaves_no_process(tmp_path):
    """SIGKILL gives the harness no chance to stop anything: the kernel kills its daemons."""
    reason = spark_cluster.java_missing_reason()
    if reason:
        pytest.skip(reason)
    code = ("import sys, time; from tests.spark_cluster import standalone_cluster\n"
            "with standalone_cluster(sys.argv[1], worker_hosts=('127.0.0.2',)):\n"
            "    print('up', flush=True); time.sleep(600)\n")
    harness = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], cwd=spark_cluster.REPO,
                               stdout=subprocess.PIPE, text=True)
    try:
        assert harness.stdout.readline() == "up\n"
        assert len(spark_cluster.processes_under(tmp_path)) == 2   # the master and the worker
    finally:
        harness.kill()
        harness.wait()
    for _ in range(300):   # the kernel's kill is not instant, only prompt
        if not spark_cluster.processes_under(tmp_path):
            break
        time.sleep(0.1)
    assert spark_cluster.processes_under(tmp_path) == []


def test_without_java_it_says_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    reason = spark_cluster.java_missing_reason()
    assert reason is not None and "apt-get install openjdk-17-jre-headless" in reason
    assert "\n" not in reason


def test_the_command_line_answers_help():
    out = subprocess.run([sys.executable, "-m", "tests.spark_cluster", "--help"], capture_output=True, text=True,
                         cwd=spark_cluster.REPO, check=True).stdout
    assert "--out" in out and "manifest.json" in out
