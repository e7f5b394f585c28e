"""Iometer's lexical rules: ExtractFirstInt, ExtractFirstToken, lines, decoding, SmartName."""

from __future__ import annotations

import pytest

from icf_import.document import SpecLine
from icf_import.lexer import (
    decode,
    extract_int,
    extract_token,
    looks_like_text,
    split_lines,
    strict_int,
    trim,
)
from icf_import.smartname import smart_name, untitled_name


@pytest.mark.parametrize(
    ("text", "number", "rest"),
    [
        ("0          0          15", 0, "0          15"),
        ("1,DISABLED,1", 1, "DISABLED,1"),
        ("  -7 , 8", -7, "8"),
        (",500", 500, ""),
        ("12abc", 12, "abc"),
        ("-", 0, ""),  # atoi("-") is 0
        ("8000000,0", 8000000, "0"),
    ],
)
def test_extract_int(text, number, rest):
    assert extract_int(text)[:2] == (number, rest)


@pytest.mark.parametrize("text", ["", "NONE", "1-2", "9" * 31])
def test_extract_int_without_an_integer(text):
    assert extract_int(text)[0] is None


def test_text_skipped_before_a_number():
    assert extract_int("0:5")[2] == ""
    _, rest, skipped = extract_int(":5")
    assert skipped == ":" and not looks_like_text(skipped)
    assert looks_like_text("[*TIME_SECS*]") and looks_like_text("abc ")


@pytest.mark.parametrize(
    ("text", "spaces", "token", "rest"),
    [
        ("NETWORK,TCP", False, "NETWORK", ",TCP"),
        (",TCP", False, "TCP", ""),
        ("Max Throughput-100%Read,ALL", True, "Max Throughput-100%Read", ",ALL"),
        ("Max Throughput-100%Read,ALL", False, "Max", "Throughput-100%Read,ALL"),
        ("a|b,ALL", True, "a", "|b,ALL"),
        ("Café,ALL", True, "Caf", "é,ALL"),
        ("\t", False, "", "\t"),
    ],
)
def test_extract_token(text, spaces, token, rest):
    assert extract_token(text, spaces) == (token, rest)


def test_lines_and_trimming():
    assert split_lines("a\r\nb\nc\rd\r\n") == ["a", "b", "c", "d"]
    assert split_lines("a\n\n") == ["a", ""]
    assert split_lines("") == []
    assert split_lines("a\x0bb\x0cc\x85d") == ["a\x0bb\x0cc\x85d"]  # only CR and LF end lines
    assert trim(" \t x \x0b\r") == "x"
    assert trim("\xa0x\xa0") == "\xa0x\xa0"  # NBSP is no C-locale whitespace


def test_decode():
    assert decode(b"\xef\xbb\xbfVersion") == "Version"
    assert decode("é".encode()) == "é"
    assert decode(b"\xe9\x80") == "é€"  # cp1252
    assert decode(b"\x81\xe9") == "\x81é"  # a byte cp1252 leaves undefined


def test_strict_int():
    assert (strict_int(" 42 "), strict_int("-1"), strict_int("+3")) == (42, -1, 3)
    assert (strict_int("4k"), strict_int(""), strict_int("1 2")) == (None, None, None)


@pytest.mark.parametrize(
    ("size", "reads", "random", "name"),
    [
        (2048, 67, 100, "2 KiB random 67% reads"),
        (512, 0, 0, "512 B sequential writes"),
        (1048576, 100, 0, "1 MiB sequential reads"),
        (65536, 25, 50, "64 KiB 50% random 25% reads"),
        (1000, 100, 100, "0 KiB random reads"),  # integer division, as Iometer's %d of size/1024
        (4096 * 1024, 100, 100, "4096 KiB random reads"),  # only exactly 1 MiB is spelled MiB
    ],
)
def test_smart_name(size, reads, random, name):
    assert smart_name(SpecLine(size=size, reads=reads, random=random), set()) == name


def test_smart_name_avoids_clashes_case_insensitively():
    line = SpecLine(size=512, reads=0, random=0)
    assert smart_name(line, {"512 b sequential writes"}) == "512 B sequential writes 2"
    assert (
        smart_name(line, {"512 b sequential writes", "512 b sequential writes 2"})
        == "512 B sequential writes 3"
    )


def test_untitled_name_counts_untitled_specs():
    assert untitled_name(["Idle"], {"idle"}) == "Untitled 1"
    assert untitled_name(["Idle", "Untitled 1", "x"], {"idle", "untitled 1", "x"}) == "Untitled 2"
    assert untitled_name(["Untitled 5"], {"untitled 5", "untitled 2"}) == "Untitled 3"
