"""The arming hint spelled for the shell it is typed into, and a hint copied with its quotes accepted."""

import subprocess

import pytest

from app.engine.guards.arming_hint import copied_name, shell_arg
from tests.platform_marks import posix_only


def test_windows_hint_uses_the_quotes_cmd_and_powershell_both_strip():
    assert shell_arg("C:", "Windows") == '"C:"'
    assert shell_arg(r"\\.\PhysicalDrive1", "Windows") == '"\\\\.\\PhysicalDrive1"'
    assert shell_arg('odd"name', "Windows") == '"odd""name"'


@posix_only("a POSIX shell reads the hint back")
def test_posix_hint_is_single_quoted_and_survives_a_quote_inside():
    assert shell_arg("D:", "Linux") == "'D:'"
    spelled = shell_arg("it's", "Linux")
    # the real shell reads it back as the name
    out = subprocess.run(["sh", "-c", f"printf %s {spelled}"], capture_output=True, text=True, check=True)
    assert out.stdout == "it's"


@pytest.mark.parametrize("typed", ["'C:'", '"C:"', "C:"])
def test_a_copied_hint_is_read_as_the_name(typed):
    assert copied_name(typed) == "C:"


def test_only_one_matching_pair_is_taken_off():
    assert copied_name("'C:\"") == "'C:\""  # not a pair
    assert copied_name("''C:''") == "'C:'"
    assert copied_name("'") == "'" and copied_name("") == ""
