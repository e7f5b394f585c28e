"""Access spec -> fio options, including the multi-line conversion of docs/reference/iometer.md."""

from app.engine.jobs.specmap import largest_remainder, spec_options
from app.model.plan import AccessSpec, SpecLine


def opts(*lines: SpecLine, sector: int = 512) -> dict[str, str]:
    return dict(spec_options(AccessSpec("x", list(lines)), sector))


def L(size, of, reads, rnd, delay=0, burst=1, align=0, reply=0):  # noqa: N802 - reads like Iometer's line
    return SpecLine(size, of, reads, rnd, delay, burst, align, reply)


def test_sequential_read():
    assert opts(L(32768, 100, 100, 0)) == {"rw": "read", "bs": "32k"}


def test_vmware_reallife_mix():
    # 8k, 65% read, 60% random, sector aligned
    assert opts(L(8192, 100, 65, 60)) == {
        "rw": "randrw",
        "rwmixread": "65",
        "percentage_random": "60,60",
        "bs": "8k",
        "blockalign": "512",
    }


def test_random_write_request_size_alignment_uses_fio_default():
    assert opts(L(4096, 100, 0, 100, align=4096)) == {"rw": "randwrite", "bs": "4k"}


def test_align_zero_is_the_sector_size_of_the_target():
    assert opts(L(4096, 100, 100, 100), sector=4096)["blockalign"] == "4k"
    assert opts(L(4096, 100, 100, 100, align=65536))["blockalign"] == "64k"


def test_fileserver_pattern():
    sizes = [(512, 10), (1024, 5), (2048, 5), (4096, 60), (8192, 2), (16384, 4), (32768, 4), (65536, 10)]
    o = opts(*[L(s, p, 80, 100) for s, p in sizes])
    split = "512/10:1k/5:2k/5:4k/60:8k/2:16k/4:32k/4:64k/10"
    assert o == {"rw": "randrw", "rwmixread": "80", "bssplit": f"{split},{split}", "blockalign": "512"}


def test_webserver_pattern_read_only_split_and_odd_size():
    sizes = [
        (512, 22),
        (1024, 15),
        (2048, 8),
        (4096, 23),
        (8192, 15),
        (16384, 2),
        (32768, 6),
        (66560, 7),
        (131072, 1),
        (524288, 1),
    ]
    o = opts(*[L(s, p, 100, 100) for s, p in sizes])
    assert o["rw"] == "randread"
    assert o["bssplit"] == "512/22:1k/15:2k/8:4k/23:8k/15:16k/2:32k/6:65k/7:128k/1:512k/1"
    assert "bs_unaligned" not in o  # every size is a multiple of 512


def test_user_guide_multi_line_example_per_direction_weights():
    # 30% 64 KB reads, 50% 512 B writes, 20% 1 KB 50/50 (User's Guide §12.5)
    o = opts(L(65536, 30, 100, 0), L(512, 50, 0, 0), L(1024, 20, 50, 0))
    assert o["rw"] == "rw" and o["rwmixread"] == "40"
    reads, writes = o["bssplit"].split(",")
    assert reads == "1k/25:64k/75"  # 10/40 and 30/40
    assert writes == "512/83:1k/17"  # 50/60 and 10/60


def test_burst_weights_lines_and_delay_becomes_thinktime():
    o = opts(L(4096, 50, 100, 100, delay=2, burst=3), L(8192, 50, 100, 100, delay=2, burst=1))
    assert o["bssplit"] == "4k/75:8k/25"  # picked per burst: 50*3 vs 50*1
    assert (o["thinktime"], o["thinktime_blocks"], o["thinktime_blocks_type"]) == ("2000", "2", "issue")


def test_unaligned_sizes_need_bs_unaligned():
    assert opts(L(1024, 50, 100, 0), L(1536, 50, 100, 0))["bs_unaligned"] == "1"


def test_largest_remainder_adds_to_100():
    out = largest_remainder({1: 1 / 3, 2: 1 / 3, 3: 1 / 3})
    assert sum(out.values()) == 100 and sorted(out.values()) == [33, 33, 34]
    assert largest_remainder({1: 0.999, 2: 0.001}) == {1: 100}  # a weight below 0.5% rounds away


def test_fixed_transfers_per_direction():
    """The one size of each direction's I/Os, where it has one (telemetry counts its completed I/Os by it)."""
    from app.engine.jobs.specmap import fixed_transfers

    def of(*lines: tuple[int, int, int]) -> tuple[int | None, int | None]:
        return fixed_transfers(AccessSpec("x", [SpecLine(s, p, r, 100, 0, 1, 0, 0) for s, p, r in lines]))

    assert of((2048, 100, 70)) == (2048, 2048)
    assert of((4096, 60, 100), (65536, 40, 0)) == (4096, 65536)  # reads of one size, writes of another
    assert of((4096, 50, 50), (8192, 50, 50)) == (None, None)  # bssplit both ways
    assert of((4096, 50, 100), (8192, 50, 50)) == (None, 8192)  # reads of two sizes, writes of one
    assert of((4096, 100, 50), (8192, 0, 50)) == (4096, 4096)  # a line of 0 % issues nothing
