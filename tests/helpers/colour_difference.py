"""How different two colours look: CIEDE2000 (Sharma, Wu and Dalal's formulation, 2005)
between sRGB colours given as ``#rrggbb``.

A difference of about 2 is just noticeable side by side; thin chart lines of two runs
need far more to be told apart at a glance (Okabe-Ito's blue and sky blue: 22).
"""

from __future__ import annotations

import math

_WHITE = (0.95047, 1.0, 1.08883)  # D65


def _linear(channel: int) -> float:
    c = channel / 255.0
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def lab(colour: str) -> tuple[float, float, float]:
    """CIE L*a*b* of an sRGB ``#rrggbb`` colour (D65)."""
    r, g, b = (_linear(int(colour[i : i + 2], 16)) for i in (1, 3, 5))
    xyz = (
        (0.4124 * r + 0.3576 * g + 0.1805 * b) / _WHITE[0],
        (0.2126 * r + 0.7152 * g + 0.0722 * b) / _WHITE[1],
        (0.0193 * r + 0.1192 * g + 0.9505 * b) / _WHITE[2],
    )
    fx, fy, fz = (t ** (1 / 3) if t > 216 / 24389 else (24389 / 27 * t + 16) / 116 for t in xyz)
    return 116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)


def delta_e(first: str, second: str) -> float:
    """CIEDE2000 between two ``#rrggbb`` colours."""
    l1, a1, b1 = lab(first)
    l2, a2, b2 = lab(second)
    c_mean = (math.hypot(a1, b1) + math.hypot(a2, b2)) / 2
    g = 0.5 * (1 - math.sqrt(c_mean**7 / (c_mean**7 + 25**7)))
    a1, a2 = a1 * (1 + g), a2 * (1 + g)
    c1, c2 = math.hypot(a1, b1), math.hypot(a2, b2)
    h1 = math.degrees(math.atan2(b1, a1)) % 360
    h2 = math.degrees(math.atan2(b2, a2)) % 360
    dh = 0.0 if c1 * c2 == 0 else (h2 - h1 + 180) % 360 - 180
    d_l, d_c = l2 - l1, c2 - c1
    d_h = 2 * math.sqrt(c1 * c2) * math.sin(math.radians(dh / 2))
    l_mean, c_mean = (l1 + l2) / 2, (c1 + c2) / 2
    if c1 * c2 == 0:
        h_mean = h1 + h2
    elif abs(h1 - h2) <= 180:
        h_mean = (h1 + h2) / 2
    else:
        h_mean = (h1 + h2 + 360) / 2 if h1 + h2 < 360 else (h1 + h2 - 360) / 2
    t = (
        1
        - 0.17 * math.cos(math.radians(h_mean - 30))
        + 0.24 * math.cos(math.radians(2 * h_mean))
        + 0.32 * math.cos(math.radians(3 * h_mean + 6))
        - 0.20 * math.cos(math.radians(4 * h_mean - 63))
    )
    s_l = 1 + 0.015 * (l_mean - 50) ** 2 / math.sqrt(20 + (l_mean - 50) ** 2)
    s_c = 1 + 0.045 * c_mean
    s_h = 1 + 0.015 * c_mean * t
    turn = 30 * math.exp(-(((h_mean - 275) / 25) ** 2))
    r_t = -math.sin(math.radians(2 * turn)) * 2 * math.sqrt(c_mean**7 / (c_mean**7 + 25**7))
    return math.sqrt(
        (d_l / s_l) ** 2 + (d_c / s_c) ** 2 + (d_h / s_h) ** 2 + r_t * (d_c / s_c) * (d_h / s_h)
    )
