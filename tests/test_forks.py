"""A batch's forked processes (``batch/forks.py``): results in the tasks'
order, no more than a window of tasks ahead, a task's exception raised in the
parent, a child that dies named in one line, and no child left behind."""

from __future__ import annotations

import os
import signal
import time

import pytest

from fraglens.batch.forks import WorkerLost, run_forked

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="forks")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_the_results_come_in_the_tasks_order_from_every_child():
    out = list(run_forked(lambda n: (os.getpid(), 2 * n), list(range(200)), jobs=3, window=5))
    assert [double for _, double in out] == [2 * n for n in range(200)]
    pids = {pid for pid, _ in out}
    assert len(pids) == 3 and os.getpid() not in pids
    assert not any(_alive(pid) for pid in pids)


def test_no_task_is_sent_more_than_a_window_ahead_of_the_last_taken(tmp_path):
    log = tmp_path / "started"

    def started(n: int) -> int:
        with log.open("a") as f:
            f.write(f"{n}\n")
        return n

    window = 4
    for n in run_forked(started, list(range(60)), jobs=2, window=window):
        assert max(int(x) for x in log.read_text().split()) <= n + window - 1


def test_a_tasks_exception_is_raised_here_and_the_children_end():
    pids = set()

    def boom(n: int) -> int:
        if n == 7:
            raise ValueError("seven")
        return os.getpid()

    with pytest.raises(ValueError, match="seven") as raised:
        for pid in run_forked(boom, list(range(40)), jobs=2, window=4):
            pids.add(pid)
    if hasattr(raised.value, "add_note"):  # Python 3.11: where it was raised
        assert "in a batch process" in raised.value.__notes__[0]
        assert "boom" in raised.value.__notes__[0]
    assert pids and not any(_alive(pid) for pid in pids)


def test_a_child_that_dies_before_it_answers_is_one_line():
    def die(n: int) -> int:
        if n == 5:
            os._exit(3)
        return n

    with pytest.raises(WorkerLost, match=r"^a batch process ended before it answered "
                                         r"\(exit status 3\)$"):
        list(run_forked(die, list(range(20)), jobs=2, window=4))


def test_a_batch_stopped_early_ends_its_children():
    def slow(n: int) -> int:
        time.sleep(0.01)
        return os.getpid()

    results = run_forked(slow, list(range(100)), jobs=2, window=4)
    pids = {next(results) for _ in range(3)}
    results.close()
    assert not any(_alive(pid) for pid in pids)


def test_ctrl_c_is_the_parents_the_children_go_on():
    def interrupted(n: int) -> int:
        os.kill(os.getpid(), signal.SIGINT)  # as the terminal sends it to the process group
        return n

    assert list(run_forked(interrupted, [1, 2, 3], jobs=2, window=2)) == [1, 2, 3]
