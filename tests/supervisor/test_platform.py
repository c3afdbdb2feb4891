"""Which systems gamerig runs a session on (``supervisor.platform``): each missing piece is
named, and this machine (Linux, where the suite runs) has them all."""

from __future__ import annotations

from supervisor import platform as plat


def test_windows_is_refused_naming_each_missing_piece():
    found = plat.problems(system="Windows", posix=False, has_fcntl=False, zmq_ipc=False, python=(3, 12))
    assert len(found) == 3
    assert "POSIX" in found[0] and "WSL2" in found[0] and "ipc://" in found[1] and "fcntl" in found[2]


def test_an_old_python_is_named():
    assert plat.problems(system="Linux", posix=True, has_fcntl=True, zmq_ipc=True, python=(3, 10)) == [
        "Python 3.11 or newer (this is 3.10)"
    ]


def test_this_linux_machine_can_run_sessions_without_a_note():
    assert plat.problems() == [] and plat.note() is None
    plat.require_supported()
