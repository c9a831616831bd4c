"""The parent's clock checks on made-up chunks (measure/wallclock)."""
from harness.measure.wallclock import ChunkWall, impossible, wall_per_call_ms


def test_a_claim_longer_than_the_chunk_is_impossible() -> None:
    assert impossible([ChunkWall(10.0, 9.0, 10)]) is None
    assert "parent saw only" in impossible([ChunkWall(10.0, 9.0, 10), ChunkWall(10.0, 15.0, 10)])


def test_wall_per_call_is_the_median_chunk() -> None:
    assert wall_per_call_ms([ChunkWall(10, 5, 10), ChunkWall(30, 5, 10), ChunkWall(20, 5, 10)]) == 2.0
    assert wall_per_call_ms([]) == 0.0
