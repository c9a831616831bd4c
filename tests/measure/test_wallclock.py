"""The parent's clock checks on made-up chunks (measure/wallclock)."""
from harness.measure.wallclock import ChunkWall, impossible, undercounted, wall_per_call_ms


def _chunks(wall_ms: float, sample_ms: float, calls: int = 10) -> list[ChunkWall]:
    return [ChunkWall(wall_ms, sample_ms * calls, calls) for _ in range(5)]


def test_a_claim_longer_than_the_chunk_is_impossible() -> None:
    assert impossible(_chunks(10.0, 0.9)) is None
    assert "parent saw only" in impossible(_chunks(10.0, 1.5))


def test_undercount_is_the_remainder_beyond_the_references() -> None:
    ref = _chunks(20.0, 1.0)                                   # 1 ms of harness per call around 1 ms calls
    assert undercounted(_chunks(40.0, 3.0), ref, 3.0) is None  # honest: 3 ms calls, same 1 ms around them
    assert "parent's clock" in undercounted(_chunks(40.0, 1.0), ref, 1.0)  # the same calls reported as 1 ms
    assert undercounted(_chunks(21.9, 0.01), _chunks(20.0, 0.01), 0.01) is None  # per-chunk noise under the floor
    assert undercounted([], ref, 1.0) is None


def test_wall_per_call_is_the_median_chunk() -> None:
    assert wall_per_call_ms([ChunkWall(10, 5, 10), ChunkWall(30, 5, 10), ChunkWall(20, 5, 10)]) == 2.0
    assert wall_per_call_ms([]) == 0.0
