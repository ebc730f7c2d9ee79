"""One look per method, the same in every figure and table of the report: its name as the
paper's tables write it, its band, its family's colours.

Methods are grouped in families (the paper's Table 3 groups them the same
way); a family has one hue, its members differ by shade, line style and
marker. NURD is drawn black and thick, the free reference rules in warm
dash-dot lines, so both stand out of any crowd. ``style_for(method)`` is the
only entry point the plotting code needs; unknown methods get the "other"
family (grey) so a new method is drawn before anyone styles it.
"""

from __future__ import annotations

from dataclasses import dataclass

from stragglers.prediction.methods import VARIANTS

# The label of each method family (the classes' ``family``), in the order of legends, panels and
# table bands; the members come from the registry (one fact in one place).
FAMILY_LABELS = {
    "nurd": "NURD family",
    "rules": "reference rules",
    "outliers": "outlier detectors",
    "pu": "PU learning",
    "survival": "survival / censored regression",
    "wrangler": "Wrangler",
}

# Each method's name as the paper's tables write it (a method not listed is shown by its name).
DISPLAY_NAMES = {
    "flag_all": "flag all at t1",
    "wait_for_tau": "wait for tau",
    "spark_speculation": "Spark speculation",
    "spark4_speculation": "Spark 4 speculation",
    "km_survival": "KM survival rule",
    "oracle": "oracle (headroom)",
    "abod": "ABOD", "cblof": "CBLOF", "hbos": "HBOS", "iforest": "IForest", "knn": "KNN", "lof": "LOF",
    "mcd": "MCD", "ocsvm": "OCSVM", "pca": "PCA", "sos": "SOS", "lscp": "LSCP", "cof": "COF", "sod": "SOD",
    "xgbod": "XGBOD",
    "pu_en": "PU-EN", "pu_bg": "PU-BG",
    "tobit": "Tobit", "grabit": "Grabit", "coxph": "CoxPH",
    "survival_job": "Survival (job)", "survival_history": "Survival (history)",
    "wrangler": "Wrangler",
    "gbtr": "GBTR", "nurd_nc": "NURD-NC", "nurd": "NURD",
}

def display_name(method: str) -> str:
    """The method's name as in the paper's tables (the name itself if it has none)."""
    return DISPLAY_NAMES.get(method, method)


def band(method: str) -> str:
    """"reference" (a reference rule), "nurd" (the NURD family) or "baseline" (every other method)."""
    cls = VARIANTS.get(method)
    if cls is not None and cls.tags.reference_rule:
        return "reference"
    return "nurd" if cls is not None and cls.family == "nurd" else "baseline"


def _families() -> dict[str, tuple[str, ...]]:
    members: dict[str, list[str]] = {f: [] for f in FAMILY_LABELS.values()}
    for name, cls in VARIANTS.items():
        family = FAMILY_LABELS.get(cls.family)
        if family:
            members[family].append(name)
    # NURD first in its family: it is the method every figure is about
    members["NURD family"].sort(key=lambda m: m != "nurd")
    return {f: tuple(m) for f, m in members.items()}


#: Family name -> members (registry names), each family in the registry's order.
FAMILIES: dict[str, tuple[str, ...]] = _families()
OTHER_FAMILY = "other"
REFERENCE_FAMILY = "reference rules"

# Per-family palettes (hex), one entry per member in FAMILIES order. The 14
# outlier detectors share 7 cool blues/teals: the first seven solid, the other
# seven dashed, and every one has its own marker.
_PALETTES: dict[str, tuple[str, ...]] = {
    "NURD family": ("#000000", "#4d4d4d", "#8c8c8c"),
    "reference rules": ("#d62728", "#ff7f0e", "#8c564b", "#e377c2", "#bcbd22", "#b8860b"),
    "outlier detectors": ("#1f77b4", "#17becf", "#0b2e6b", "#00796b", "#5e81ac", "#74a9cf", "#3f51b5") * 2,
    "PU learning": ("#7b2cbf", "#c77dff"),
    "survival / censored regression": ("#2ca02c", "#74c476", "#006d2c"),
    "Wrangler": ("#b8860b",),
    OTHER_FAMILY: ("#bdbdbd",),
}
_LINESTYLES = ("-", "--", ":", (0, (5, 1, 1, 1)))
_MARKERS = ("o", "s", "^", "v", "D", "P", "X", "<", ">", "h", "*", "p", "d", "8")


@dataclass(frozen=True)
class MethodStyle:
    family: str
    color: str
    linestyle: object
    marker: str
    linewidth: float
    zorder: int
    highlight: bool           # NURD and the reference rules: drawn thick, on top, in every panel

    def line_kwargs(self) -> dict:
        """Keyword arguments for ``Axes.plot``."""
        return {"color": self.color, "linestyle": self.linestyle, "marker": self.marker,
                "linewidth": self.linewidth, "zorder": self.zorder, "markersize": 4 if self.highlight else 3}


def family_of(method: str) -> str:
    for family, members in FAMILIES.items():
        if method in members:
            return family
    return OTHER_FAMILY


def family_order(family: str) -> int:
    names = list(FAMILIES)
    return names.index(family) if family in names else len(names)


def is_reference_rule(method: str) -> bool:
    return family_of(method) == REFERENCE_FAMILY


def style_for(method: str) -> MethodStyle:
    """The style of ``method`` (a registry name such as ``nurd`` or ``hbos``)."""
    family = family_of(method)
    if method == "nurd":
        return MethodStyle(family, "#000000", "-", "o", 2.8, 10, True)
    if family == REFERENCE_FAMILY:
        i = FAMILIES[family].index(method)
        return MethodStyle(family, _PALETTES[family][i], "-.", _MARKERS[i], 2.2, 9, True)
    members = FAMILIES.get(family, ())
    i = members.index(method) if method in members else 0
    palette = _PALETTES[family]
    if family == "outlier detectors":
        linestyle = "-" if i < 7 else "--"
    else:
        linestyle = _LINESTYLES[i % len(_LINESTYLES)]
    return MethodStyle(family, palette[i % len(palette)], linestyle, _MARKERS[i % len(_MARKERS)], 1.4, 3, False)


def sort_key(method: str) -> tuple:
    """Family order, then the member's position in its family, then the name."""
    family = family_of(method)
    members = FAMILIES.get(family, ())
    return (family_order(family), members.index(method) if method in members else len(members), method)
