"""Time buckets of a board's tie groups, so that "my rank" never walks a whole group.

People level on correct answers are ranked by their total time (time_ms). rank_counts keeps,
per board, the people of each (correct, bucket), where a bucket is a range of times growing
with the time: 16 buckets per doubling (each 3 to 6 % wide), every millisecond its own
bucket below 32 ms. A tie group of thousands spreads over dozens of buckets, so my rank sums
rank_counts for those in faster buckets and counts in the rank index only those in my own
bucket (the nearer side of it: rank_counts has the bucket's people).

The bucket is exact integer arithmetic, the same in Python (the materializers, from what their
upserts return) and in SQL (recounts, migrations, PostgreSQL's set-based application): the
highest set bit of the time, then its next four bits. Changing it needs a migration that
counts rank_counts again.
"""

from __future__ import annotations

SHIFT = 4
PER_DOUBLING = 1 << SHIFT  # buckets per doubling of the time
LINEAR = 2 * PER_DOUBLING  # times below this are a bucket each (0 also holds any time < 0)
LOWEST = -(1 << 63)  # the lower bound of bucket 0
TOP_BIT = 62  # times are below 2**63 (bigint)


def bucket(time_ms: int) -> int:
    """The bucket of a total time: monotonic, exact, the same as sql()."""
    if time_ms < LINEAR:
        return max(time_ms, 0)
    shift = time_ms.bit_length() - 1 - SHIFT  # >= 1: the bits below the top five go
    return PER_DOUBLING * shift + (time_ms >> shift)


def low(number: int) -> int:
    """The least time of bucket `number` (LOWEST for bucket 0)."""
    if number <= 0:
        return LOWEST
    if number < LINEAR:
        return number
    shift = number // PER_DOUBLING - 1
    return (number % PER_DOUBLING + PER_DOUBLING) << shift


def bounds(time_ms: int) -> tuple[int, int, int]:
    """(bucket, its least time, the least time of the next bucket) of a total time (the
    last bucket ends at the greatest bigint)."""
    number = bucket(time_ms)
    return number, low(number), min(low(number + 1), (1 << 63) - 1)


def sql(column: str, postgres: bool = False) -> str:
    """bucket() of an integer expression as SQL, no floating point anywhere. PostgreSQL:
    width_bucket() over every bucket's least time (a constant array, searched in halves: one
    call, cheap to plan); SQLite, which has no such function: the top bit's position found by
    a binary search of nested CASEs (six comparisons)."""
    value = f"({column})"
    if postgres:
        return f"width_bucket({value}::bigint, '{LOWS}'::bigint[])"

    def top(low: int, high: int) -> str:
        """For a value with its top bit in [low, high]."""
        if low == high:
            shift = low - SHIFT
            return f"{PER_DOUBLING * shift} + ({value} >> {shift})"
        middle = (low + high + 1) // 2
        return (f"CASE WHEN {value} >= {1 << middle} THEN {top(middle, high)}"
                f" ELSE {top(low, middle - 1)} END")

    return (f"CASE WHEN {value} < {LINEAR} THEN MAX({value}, 0)"
            f" ELSE {top(SHIFT + 1, TOP_BIT)} END")


# every bucket's least time but bucket 0's, as a PostgreSQL array: width_bucket() counts the
# ones at or below a time, which is its bucket
LOWS = "{" + ",".join(str(low(n)) for n in range(1, bucket((1 << 63) - 1) + 1)) + "}"


def low_sql(number: str) -> str:
    """low() of an integer bucket expression as PostgreSQL (a bigint)."""
    n = f"({number})"
    return (f"(CASE WHEN {n} <= 0 THEN '{LOWEST}'::bigint WHEN {n} < {LINEAR} THEN {n}::bigint"
            f" ELSE ({n} % {PER_DOUBLING} + {PER_DOUBLING})::bigint"
            f" << ({n} / {PER_DOUBLING} - 1) END)")
