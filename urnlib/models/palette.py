"""The book's one colour-blind-safe palette, keyed by model kind, and the shades of one kind's colour.

Every model kind draws in one colour of seaborn's ``"colorblind"`` palette (Wong's, after Okabe and Ito,
which stays apart under the common colour-vision deficiencies), the same in every chapter
(:data:`PALETTE`; :mod:`urnlib.models.kinds` gives each kind's :class:`~urnlib.models.registry.Style` its
entry). Several models of one kind in one figure (URN 8, 16 and 32; four TPRUs) take :func:`shades` of it:
one apart from the next in lightness *and* hue (CIELAB), so that no two look alike (four TPRUs in pinks 17-20
apart, ΔE*ab, read as one in a review of the book: :data:`MIN_DELTA_E` asks for more). A model alone of its
kind in a figure is drawn in its kind's colour itself.

Pure arithmetic on colours (no matplotlib: the models layer does not draw); :mod:`urnlib.plots` draws them.
"""

from __future__ import annotations

import math

__all__ = ["COLORBLIND", "PALETTE", "MIN_DELTA_E", "LIGHTNESS", "lab", "hex_of", "delta_e", "shades"]

#: seaborn's "colorblind" palette (``seaborn.color_palette("colorblind").as_hex()``; a test checks it)
COLORBLIND = ("#0173b2", "#de8f05", "#029e73", "#d55e00", "#cc78bc", "#ca9161", "#fbafe4", "#949494",
              "#ece133", "#56b4e9")
#: each style's colour (a :class:`~urnlib.models.registry.Style`'s ``word``): kinds that meet in a figure
#: (the zoo draws seven cells side by side) take colours at least 25 apart in CIELAB
PALETTE = {
    "urn": COLORBLIND[0],        # blue
    "srn": COLORBLIND[1],        # orange
    "gru": COLORBLIND[2],        # bluish green
    "lstm": COLORBLIND[3],       # vermillion
    "turn": COLORBLIND[4],       # reddish purple
    "nnlm": COLORBLIND[5],       # brown
    "arbitrary": COLORBLIND[7],  # grey
    "matrix": COLORBLIND[8],     # yellow, drawn darker (LIGHTNESS): paper 003's three models
    "tpru": COLORBLIND[9],       # sky blue
    "baseline": "#4d4d4d",       # reference lines (heuristics, n-gram counts): dark grey, dotted
}
#: the CIELAB lightness a drawn line keeps to: lighter ones fade into the white page (the palette's yellow,
#: L* 88, is drawn at 72), darker ones into the black of the paper's marks
LIGHTNESS = (30.0, 78.0)
#: ΔE*ab (CIE 1976) between any two of up to four shades of a palette colour in one figure, at least (three
#: for a grey, whose hue cannot turn: LIGHTNESS holds four greys 16 apart)
MIN_DELTA_E = 22.0
#: the lightness between neighbouring shades (more for a colour of little chroma, grey); the hue turns as far
#: as it takes, with it, to be _TARGET apart (sRGB's gamut takes some of that back), at most _MAX_TURN degrees
_STEP_L, _STEP_L_GREY, _TARGET, _MAX_TURN = 16.0, 26.0, 28.0, 40.0

_WHITE = (0.95047, 1.0, 1.08883)  # D65
_TO_XYZ = ((0.4124, 0.3576, 0.1805), (0.2126, 0.7152, 0.0722), (0.0193, 0.1192, 0.9505))
_FROM_XYZ = ((3.2406, -1.5372, -0.4986), (-0.9689, 1.8758, 0.0415), (0.0557, -0.2040, 1.0570))


def lab(colour: str) -> tuple[float, float, float]:
    """CIELAB ``(L*, a*, b*)`` of a ``"#rrggbb"`` sRGB colour (D65 white)."""
    rgb = [int(colour.lstrip("#")[i:i + 2], 16) / 255 for i in (0, 2, 4)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    xyz = [sum(m * c for m, c in zip(row, linear)) / w for row, w in zip(_TO_XYZ, _WHITE)]
    f = [t ** (1 / 3) if t > (6 / 29) ** 3 else t / (3 * (6 / 29) ** 2) + 4 / 29 for t in xyz]
    return 116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])


def _srgb(L: float, a: float, b: float) -> list[float]:
    """The sRGB channels of CIELAB ``(L, a, b)`` (outside [0, 1] where the colour is out of sRGB's gamut)."""
    fy = (L + 16) / 116
    f = (fy + a / 500, fy, fy - b / 200)
    xyz = [w * (t ** 3 if t > 6 / 29 else 3 * (6 / 29) ** 2 * (t - 4 / 29)) for t, w in zip(f, _WHITE)]
    linear = [sum(m * c for m, c in zip(row, xyz)) for row in _FROM_XYZ]
    return [12.92 * c if c <= 0.0031308 else 1.055 * c ** (1 / 2.4) - 0.055 for c in linear]


def hex_of(L: float, a: float, b: float) -> str:
    """The ``"#rrggbb"`` of CIELAB ``(L, a, b)``; out of sRGB's gamut, of the same lightness and hue with as
    much chroma as sRGB has there."""
    for _ in range(100):
        rgb = _srgb(L, a, b)
        if all(-1e-4 <= c <= 1 + 1e-4 for c in rgb):
            break
        a, b = 0.95 * a, 0.95 * b
    return "#" + "".join(f"{round(min(max(c, 0.0), 1.0) * 255):02x}" for c in rgb)


def delta_e(first: str, second: str) -> float:
    """ΔE*ab (CIE 1976): the distance of two colours in CIELAB (about 2.3: just noticeable)."""
    return math.dist(lab(first), lab(second))


def shades(colour: str, n: int = 1) -> tuple[str, ...]:
    """``n`` shades of ``colour`` for ``n`` models of one kind in one figure, the first the lightest: centred
    on the colour, one step of lightness (:data:`_STEP_L`) and hue apart, the hue turning as far as it takes
    to be :data:`MIN_DELTA_E` apart or more, all inside :data:`LIGHTNESS`. ``n = 1``: the colour itself (its
    lightness brought inside :data:`LIGHTNESS`). Black and white are no model's colour and take no shades
    (the paper's values and kept epochs are drawn black).

    Args:
        colour: ``"#rrggbb"``, e.g. a :data:`PALETTE` entry.
        n: how many models of the kind the figure draws (1 or more).
    """
    if n < 1:
        raise ValueError(f"shades of a colour for n={n} models: give n >= 1")
    L, a, b = lab(colour)
    chroma, hue = math.hypot(a, b), math.atan2(b, a)
    if chroma < 1 and not 1 <= L <= 99:  # black (or white): a reference drawn so stays so
        return (colour,) * n
    low, high = LIGHTNESS
    step = min(_STEP_L if chroma > 12 else _STEP_L_GREY, (high - low) / max(n - 1, 1))
    needed = math.sqrt(max(_TARGET ** 2 - step ** 2, 0.0))  # what the hue's turn must add
    turn = 2 * math.asin(min(1.0, needed / (2 * chroma))) if chroma > 1 else 0.0
    turn = min(turn, math.radians(_MAX_TURN))
    half = step * (n - 1) / 2
    centre = min(max(L, low + half), high - half)
    offsets = [i - (n - 1) / 2 for i in range(n)]
    if n == 1 and low <= L <= high:
        return (colour,)
    return tuple(hex_of(centre - o * step, chroma * math.cos(hue + o * turn),
                        chroma * math.sin(hue + o * turn)) for o in offsets)
