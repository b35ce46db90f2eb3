"""Quantities with units, normalized with pint: 20 L = 20 litres = 20 000 mL; 12 MPa = 120 bar.

A mention is a point (``20 L``), a range (``15–25 L``, ``between 15 and 25 L``) or a bound (``up to 120 bar``,
``at least 5 years``). Two mentions are comparable when pint says their units have the same dimensionality.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from enum import StrEnum

import pint

from citeaudit.checks._numbers import NUMBER_PATTERN, Number, parse_number

__all__ = ["Bound", "QuantityMention", "compare", "quantities_in"]

# Surface forms → pint unit expressions. Case matters (mW vs MW). Ambiguous short forms that are also words
# ("in", "t", "h" after a bare number in prose) are left out on purpose: a missed unit costs less than a false alarm.
_UNITS: dict[str, str] = {
    "l": "liter", "L": "liter", "ℓ": "liter", "litre": "liter", "litres": "liter", "liter": "liter",
    "liters": "liter", "ml": "milliliter", "mL": "milliliter", "millilitre": "milliliter",
    "millilitres": "milliliter", "milliliter": "milliliter", "milliliters": "milliliter",
    "cl": "centiliter", "cL": "centiliter", "dl": "deciliter", "dL": "deciliter", "hl": "hectoliter",
    "gal": "gallon", "gallon": "gallon", "gallons": "gallon",
    "m³": "meter**3", "m3": "meter**3", "cm³": "centimeter**3", "cm3": "centimeter**3", "cc": "centimeter**3",
    "mg": "milligram", "g": "gram", "gram": "gram", "grams": "gram", "gramme": "gram", "grammes": "gram",
    "kg": "kilogram", "kilo": "kilogram", "kilos": "kilogram", "kilogram": "kilogram", "kilograms": "kilogram",
    "kilogramme": "kilogram", "kilogrammes": "kilogram", "tonne": "tonne", "tonnes": "tonne",
    "lb": "pound", "lbs": "pound", "pound": "pound", "pounds": "pound", "oz": "ounce", "ounce": "ounce",
    "ounces": "ounce",
    "mm": "millimeter", "cm": "centimeter", "m": "meter", "km": "kilometer", "µm": "micrometer",
    "μm": "micrometer", "millimetre": "millimeter", "millimetres": "millimeter", "millimeter": "millimeter",
    "millimeters": "millimeter", "centimetre": "centimeter", "centimetres": "centimeter",
    "centimeter": "centimeter", "centimeters": "centimeter", "metre": "meter", "metres": "meter",
    "meter": "meter", "meters": "meter", "kilometre": "kilometer", "kilometres": "kilometer",
    "kilometer": "kilometer", "kilometers": "kilometer", "inch": "inch", "inches": "inch", "in.": "inch",
    "″": "inch", "ft": "foot", "feet": "foot", "foot": "foot", "mi": "mile", "miles": "mile",
    "m²": "meter**2", "m2": "meter**2", "cm²": "centimeter**2", "mm²": "millimeter**2", "mm2": "millimeter**2",
    "Pa": "pascal", "kPa": "kilopascal", "MPa": "megapascal", "GPa": "gigapascal", "hPa": "hectopascal",
    "bar": "bar", "bars": "bar", "mbar": "millibar", "psi": "psi", "atm": "atmosphere",
    "N": "newton", "kN": "kilonewton", "Nm": "newton*meter", "N·m": "newton*meter", "N m": "newton*meter",
    "mW": "milliwatt", "W": "watt", "kW": "kilowatt", "MW": "megawatt", "watt": "watt", "watts": "watt",
    "kilowatt": "kilowatt", "kilowatts": "kilowatt", "hp": "horsepower", "HP": "horsepower",
    "Wh": "watt*hour", "kWh": "kilowatt*hour", "MWh": "megawatt*hour", "J": "joule", "kJ": "kilojoule",
    "MJ": "megajoule",
    "mV": "millivolt", "V": "volt", "kV": "kilovolt", "volt": "volt", "volts": "volt",
    "mA": "milliampere", "A": "ampere", "amp": "ampere", "amps": "ampere", "ampere": "ampere",
    "amperes": "ampere", "mAh": "milliampere*hour", "Ah": "ampere*hour",
    "Hz": "hertz", "kHz": "kilohertz", "MHz": "megahertz", "GHz": "gigahertz",
    "rpm": "revolutions_per_minute", "RPM": "revolutions_per_minute", "dB": "decibel", "dBA": "decibel",
    "dB(A)": "decibel",
    "°C": "degree_Celsius", "℃": "degree_Celsius", "°F": "degree_Fahrenheit", "℉": "degree_Fahrenheit",
    "km/h": "kilometer/hour", "kph": "kilometer/hour", "mph": "mile/hour", "m/s": "meter/second",
    "l/min": "liter/minute", "L/min": "liter/minute", "l/h": "liter/hour", "L/h": "liter/hour",
    "m³/h": "meter**3/hour", "m3/h": "meter**3/hour",
    "ms": "millisecond", "s": "second", "sec": "second", "secs": "second", "second": "second",
    "seconds": "second", "min": "minute", "mins": "minute", "minute": "minute", "minutes": "minute",
    "hr": "hour", "hrs": "hour", "hour": "hour", "hours": "hour", "day": "day", "days": "day",
    "week": "week", "weeks": "week", "month": "month", "months": "month", "year": "year", "years": "year",
    "yr": "year", "yrs": "year",
    "B": "byte", "kB": "kilobyte", "KB": "kilobyte", "MB": "megabyte", "GB": "gigabyte", "TB": "terabyte",
    "%": "percent", "percent": "percent", "per cent": "percent",
}  # fmt: skip
_SPACED_ONLY = frozenset({"s"})
_OWN_KIND = frozenset({"decibel", "percent"})
_MULTIPLIERS = {"thousand": 1e3, "million": 1e6, "billion": 1e9}

_UNIT_ALTERNATION = "|".join(re.escape(u) for u in sorted(_UNITS, key=len, reverse=True))
# A unit ends at a non-word character; "%" and quote-like units end by themselves.
_UNIT = rf"(?P<unit>{_UNIT_ALTERNATION})(?![\w²³])"
_MULT = r"(?:\s?(?P<mult>thousand|million|billion))?"
_SPACE = r"[ \u00a0\u202f\u2009]?"
_RANGE_SEP = r"\s?(?:-|–|—|to|bis|à)\s?"
_BETWEEN_SEP = r"\s?(?:and|to|-|–|—)\s?"
_UPPER = (
    r"(?P<upper>up to|upto|max\.?|maximum(?: of)?|at most|no more than|not more than|less than|under|below|bis zu"
    r"|≤|<=|<)\s?"
)
_LOWER = r"(?P<lower>at least|min\.?|minimum(?: of)?|no less than|not less than|more than|over|above|≥|>=|>)\s?"

_MENTION = re.compile(
    rf"(?:{_UPPER}|{_LOWER}|(?P<between>between|from)\s)?"
    rf"(?P<a>{NUMBER_PATTERN})"
    rf"(?:{_SPACE}(?P<unit_a>{_UNIT_ALTERNATION})(?![\w²³]))?"
    rf"(?:(?(between){_BETWEEN_SEP}|{_RANGE_SEP})(?P<b>{NUMBER_PATTERN}))?"
    rf"{_MULT}{_SPACE}{_UNIT}"
)


class Bound(StrEnum):
    """How a mention constrains the value."""

    POINT = "point"
    """One value (``20 L``)."""
    RANGE = "range"
    """A closed interval (``15–25 L``)."""
    UPPER = "upper"
    """A maximum (``up to 120 bar``)."""
    LOWER = "lower"
    """A minimum (``at least 5 years``)."""


@dataclass(frozen=True, slots=True)
class QuantityMention:
    """A quantity stated in text, in base units of its dimensionality."""

    start: int
    """Start offset in the text."""
    end: int
    """End offset (exclusive)."""
    text: str
    """The mention as written."""
    bound: Bound
    """Point, range or bound."""
    low: float
    """Value (or lower end), in base units."""
    high: float
    """Value (or upper end), in base units; equals ``low`` for a point or a bound."""
    tolerance: float
    """How far rounding of the written digits may move the value, in base units."""
    dimensionality: str
    """pint dimensionality, the key for comparability."""
    unit: str
    """The unit as written."""


@functools.cache
def _registry() -> pint.UnitRegistry[float]:
    return pint.UnitRegistry()


def _base(number: float, unit: str) -> tuple[float, str]:
    if _UNITS[unit] in _OWN_KIND:
        # Decibels are logarithmic and percentages are ratios of unstated wholes: compared only with their own kind.
        return number, _UNITS[unit]
    # Offset units (°C, °F) convert as absolute temperatures, which is what a spec sheet states.
    base = _registry().Quantity(number, _UNITS[unit]).to_base_units()
    return float(base.magnitude), str(base.dimensionality)


def _step(number: Number, multiplier: float, unit: str) -> float:
    # The rounding step converted as a difference, so offset units (°C → K) scale without their offset.
    return abs(
        _base((number.value + number.half_step) * multiplier, unit)[0] - _base(number.value * multiplier, unit)[0]
    )


def quantities_in(text: str, locale: str = "en") -> list[QuantityMention]:
    """Every quantity with a known unit in ``text``, in order."""
    mentions: list[QuantityMention] = []
    for match in _MENTION.finditer(text):
        unit = match.group("unit")
        if unit in _SPACED_ONLY and match.start("unit") == match.end("b" if match.group("b") else "a"):
            continue  # "1990s" is a decade, "80s" too: a glued "s" is never read as seconds
        multiplier = _MULTIPLIERS.get(match.group("mult") or "", 1.0)
        first = parse_number(match.group("a"), locale)
        first_unit = match.group("unit_a") or unit
        low, dimensionality = _base(first.value * multiplier, first_unit)
        tolerance = _step(first, multiplier, first_unit)
        if match.group("b"):
            second = parse_number(match.group("b"), locale)
            high, other = _base(second.value * multiplier, unit)
            if other != dimensionality:
                continue
            tolerance = max(tolerance, _step(second, multiplier, unit))
            bound = Bound.RANGE
        else:
            high = low
            bound = Bound.UPPER if match.group("upper") else Bound.LOWER if match.group("lower") else Bound.POINT
        low, high = min(low, high), max(low, high)
        mentions.append(
            QuantityMention(
                match.start(), match.end(), match.group(), bound, low, high, tolerance, dimensionality, unit
            )
        )
    return mentions


def _relative(a: float, b: float) -> float:
    scale = max(abs(a), abs(b))
    return 0.0 if scale == 0 else abs(a - b) / scale


def _same(a: float, b: float, tolerance: float) -> bool:
    # Exact (up to float noise), or within the rounding of the written digits but never more than 5 % apart.
    return _relative(a, b) <= 1e-9 or (abs(a - b) <= tolerance and _relative(a, b) <= 0.05)


def compare(claim: QuantityMention, passage: QuantityMention) -> bool | None:
    """Whether ``passage`` states ``claim``'s quantity: ``True`` equal, ``False`` different, ``None`` not comparable.

    Points and bounds compare their values; a point matches a range that contains it; two ranges match when
    both ends do; a range that contains the other side's point is consistent.
    """
    if claim.dimensionality != passage.dimensionality:
        return None
    tolerance = max(claim.tolerance, passage.tolerance)
    if claim.bound is Bound.RANGE and passage.bound is Bound.RANGE:
        return _same(claim.low, passage.low, tolerance) and _same(claim.high, passage.high, tolerance)
    if claim.bound is Bound.RANGE or passage.bound is Bound.RANGE:
        ranged, other = (claim, passage) if claim.bound is Bound.RANGE else (passage, claim)
        if other.bound is Bound.UPPER:
            return _same(ranged.high, other.low, tolerance)
        if other.bound is Bound.LOWER:
            return _same(ranged.low, other.low, tolerance)
        return ranged.low - tolerance <= other.low <= ranged.high + tolerance
    return _same(claim.low, passage.low, tolerance)


def ratio_note(claim: QuantityMention, passage: QuantityMention) -> str:
    """``"tenfold"``/``"thousandfold"`` when the values differ by a power of ten (a unit slip), else ``""``."""
    if claim.low <= 0 or passage.low <= 0:
        return ""
    exponent = math.log10(claim.low / passage.low)
    nearest = round(exponent)
    if nearest == 0 or abs(exponent - nearest) > 0.01:
        return ""
    names = {1: "tenfold", 2: "hundredfold", 3: "thousandfold", 6: "millionfold"}
    name = names.get(abs(nearest), f"10^{abs(nearest)}-fold")
    return f"{name} difference (claim is {'larger' if nearest > 0 else 'smaller'}): a likely unit error"
