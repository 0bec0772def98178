"""The shortest decimal of a 32-bit float, which log probabilities are written as (behavior.md#token-chunks-and-usage).

Model servers compute log probabilities as 32-bit floats; the reference writes each as the shortest decimal that
reads back as the same 32-bit float. :func:`f32_logprob` gives the double of that decimal, worked out exactly
without formatting and parsing candidates: in doubles for the floats of about 1e-5 to 1e7, where every step is
exact, and in integers for the others.
"""

from __future__ import annotations

import math
import struct

__all__ = ["F32_MEMO", "NEG_INF_LOGPROB", "f32_logprob", "f32_logprob_once", "f32_remembered"]

#: What a ``-inf`` log probability becomes (the value vLLM's OpenAI-compatible server writes for it); so does a
#: negative one beyond the 32-bit range (D21).
NEG_INF_LOGPROB = -9999.0
#: The largest 32-bit float, by its shortest decimal: what a positive log probability beyond that range becomes.
_F32_MAX = 3.4028235e38
_f32_pack = struct.Struct("<f").pack
_u32_unpack = struct.Struct("<I").unpack
_POW10 = [10**k for k in range(64)]
#: :func:`f32_logprob` of the values seen, by value (emptied when full): a stream's entries repeat.
F32_MEMO: dict[float, float] = {}
F32_MEMO_LIMIT = 1 << 14


def f32_logprob(value: float) -> float:
    """A finite log probability as a 32-bit float, as model servers compute it and the reference writes it: the
    float of the shortest decimal that reads back as the same 32-bit float, the nearest such one to it (ties to an
    even last digit): ``-0.31326162815093994`` → ``-0.31326163``, ``-1e-50`` → ``-0.0``. A value beyond the 32-bit
    range is ``-9999.0`` when negative (as ``-inf`` is) and the largest 32-bit float when positive (D21).

    Examples:
        >>> f32_logprob(-0.31326162815093994), f32_logprob(-0.25), f32_logprob(-1e-50), f32_logprob(-1e39)
        (-0.31326163, -0.25, -0.0, -9999.0)
    """
    found = F32_MEMO.get(value)
    if found is not None and value != 0:  # (0.0 and -0.0 are one key)
        return found
    return f32_remembered(value)


def f32_logprob_once(value: float) -> float:
    """:func:`f32_logprob` worked out, not looked up nor remembered: for a caller that keeps what it makes of the
    value instead. A model server's log probabilities are mostly 32-bit floats of about 1e-5 to 1e7, worked out
    here in doubles (see :func:`_float_steps`); the others, and the ends of an interval, by :func:`_f32_shortest`."""
    try:
        packed = _f32_pack(value)
    except OverflowError:
        return NEG_INF_LOGPROB if value < 0 else _F32_MAX
    bits: int = _u32_unpack(packed)[0]
    steps = _FLOAT_STEPS[(bits >> 23) & 0xFF]
    if steps is not None and bits & 0x7FFFFF:
        # v * 10**k and its distance to the nearest integer (ties to even, as round does), against the interval's
        # half in the same units; each step exact. The sign rides along: v is the signed 32-bit float.
        v: float = _f32_unpack(packed)[0]
        up, half = steps
        scaled = v * up
        digits = round(scaled)
        off = abs(digits - scaled)
        if off < half:
            return digits / up
        if off > half:  # the power below: its nearest multiple is always inside
            up *= 10.0
            return round(v * up) / up
        # An end of the interval (v's own only when v is even): worked out in integers.
    return _f32_shortest(value)


def f32_remembered(value: float) -> float:
    """:func:`f32_logprob` of a value not found in its memo (where it goes), for a caller that looked."""
    shortest = f32_logprob_once(value)
    if len(F32_MEMO) >= F32_MEMO_LIMIT:
        F32_MEMO.clear()
    F32_MEMO[value] = shortest
    return shortest


def _ratio(scale: int, power: int) -> tuple[int, int]:
    """``2**scale / 10**power`` as a fraction ``num / den`` of integers."""
    if scale >= 0:
        return (1 << scale) * (_POW10[-power] if power < 0 else 1), _POW10[power] if power >= 0 else 1
    if power < 0:
        return _POW10[-power], 1 << -scale
    return 1, _POW10[power] << -scale


def _steps(exponent: int) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """What :func:`_f32_shortest` tries for a normal float of ``exponent`` whose interval has equal halves (4
    units of ``2**(exponent - 152)`` wide): the power of ten just above that width, then the one below it (an
    interval of that width always holds a multiple of the lower one), each with its :func:`_ratio`."""
    scale = exponent - 152
    power = math.floor(math.log10(4 * 2.0**scale)) + 1
    return (power, *_ratio(scale, power)), (power - 1, *_ratio(scale, power - 1))


#: :func:`_steps` by exponent (normal floats only: 1 to 254).
_STEPS = [_steps(exponent) if 0 < exponent < 255 else ((0, 0, 1), (0, 0, 1)) for exponent in range(256)]


def _float_steps(exponent: int) -> tuple[float, float] | None:
    """For :func:`f32_logprob_once` in doubles: ``10**k`` for the power ``10**-k`` of the first of :func:`_steps`,
    and the interval's half (2 units of ``2**(exponent - 152)``) times ``10**k``; None where that is not exact.

    Every product taken is exact when ``0 <= k`` and ``k + 1 <= 12`` (32-bit floats from about 1e-5 to 1e7): a
    24-bit mantissa times ``5**12 < 2**28`` fits the 53 bits of a double, and the powers of two only move the
    exponent. ``round`` of an exact double is exact, so is its difference to it (both are multiples of its last
    place), and a correctly rounded division of exact operands gives the double nearest to the decimal, as the
    integer path's does."""
    if not 0 < exponent < 255:
        return None
    k = -_STEPS[exponent][0][0]
    if not 0 <= k <= 11:
        return None
    return float(10**k), math.ldexp(1.0, exponent - 151) * 10**k


#: :func:`_float_steps` by exponent.
_FLOAT_STEPS = [_float_steps(exponent) for exponent in range(256)]
_f32_unpack = struct.Struct("<f").unpack


def _f32_shortest(value: float) -> float:
    """:func:`f32_logprob` of a value within the 32-bit range, in integers (:func:`f32_logprob_once` takes most
    values in doubles first): the 32-bit float ``v`` nearest to ``value`` owns the reals between the midpoints to
    its neighbours (the midpoints too when its last bit is 0), and the answer is the multiple of the largest power
    of ten in that interval that is nearest to ``v``.

    Raises:
        OverflowError: ``value`` is beyond the 32-bit range.
    """
    packed = _f32_pack(value)
    bits: int = _u32_unpack(packed)[0]
    exponent = (bits >> 23) & 0xFF
    fraction = bits & 0x7FFFFF
    odd = fraction & 1  # the interval's ends are v's own only when v is even
    if exponent and fraction:
        # The commonest case, from a table: an interval of equal halves, 4 units wide around v = 4 * mantissa.
        # The multiple of 10**power nearest to v (a tie to the even one) is inside when any is (equal halves);
        # else the one of the power below, which always is.
        v = 4 * (fraction | 0x800000)
        for power, num, den in _STEPS[exponent]:
            scaled = v * num
            digits, rest = divmod(scaled, den)
            if 2 * rest > den or (2 * rest == den and digits & 1):
                digits += 1
            # Its distance to v against the interval's half (2 units), both in units of 2**scale / num.
            off = abs(digits * den - scaled)
            if off < 2 * num or (off == 2 * num and not odd):
                break
    else:
        found = _searched_digits(exponent, fraction, odd)
        if found is None:
            return -0.0 if bits >> 31 else 0.0
        digits, power = found
    # The float nearest to digits * 10**power (both conversions round correctly), with its sign.
    shortest = digits / _POW10[-power] if power < 0 else float(digits * _POW10[power])
    return -shortest if bits >> 31 else shortest


def _searched_digits(exponent: int, fraction: int, odd: int) -> tuple[int, int] | None:
    """:func:`_f32_shortest`'s digits and power of ten for a float of uneven halves (a power of two) or a
    subnormal, found by search down from the power just above the interval's width; None for zero."""
    # In units of 2**scale: v is 4 * mantissa, its interval lo..hi (narrower below a power of two).
    if exponent:
        mantissa = fraction | 0x800000
        scale = exponent - 152
        lo = 4 * mantissa - (1 if exponent > 1 else 2)
    elif fraction:  # a subnormal
        mantissa, scale = fraction, -151
        lo = 4 * mantissa - 2
    else:
        return None
    hi = 4 * mantissa + 2
    # The largest power 10**k with a multiple in the interval: at most one above the interval's width.
    power = math.floor(math.log10((hi - lo) * 2.0**scale)) + 1
    while True:
        # Reals in units of 2**scale, divided by 10**power: num / den.
        num, den = _ratio(scale, power)
        low, rest = divmod(lo * num, den)
        if rest or odd:
            low += 1
        high, rest = divmod(hi * num, den)
        if not rest and odd:
            high -= 1
        if low <= high:
            break
        power -= 1
    digits = low
    if low < high:
        digits, rest = divmod(4 * mantissa * num, den)
        if 2 * rest > den or (2 * rest == den and digits & 1):
            digits += 1
        digits = min(max(digits, low), high)
    return digits, power
