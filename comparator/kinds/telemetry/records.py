"""The telemetry kind's records: each side's metrics and thresholds (:class:`TelemetrySide`, the
kind's summary of a side and a half of ``findings["telemetry"]``), the crosswalk between two systems,
and a release's metric and threshold changes (``findings["release"]`` ``metrics``,
``orphaned_thresholds``, ``thresholds``). Free of the extractor: the renderers read them.

A metric's ``type`` and a threshold's ``source_kind`` are the extractor's words (its ``MetricType``
and ``SourceKind`` values), kept as text; the kind's own vocabularies are enums.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping

from comparator.codec import omitted_when_none
from comparator.records import Where


class Provenance(str, enum.Enum):
    """Whose a series is: the system's own design, a twin of its own metric, or a library's."""

    OWN = "own"
    TWIN = "twin"
    LIBRARY = "library"


class Reading(str, enum.Enum):
    """How a threshold reads a metric."""

    DIRECT = "direct"  # a series of it in the expression
    RECORDED = "recorded"  # behind a recording rule
    LINK = "link"  # a definition the extractor linked by name (a prometheus-adapter rule)


# ---------------------------------------------------------------------------------------- one side


@dataclasses.dataclass(frozen=True, slots=True)
class MetricThreshold:
    """A threshold as a metric's row shows it: what it compares, and how it reads the metric."""

    reads: Reading
    name: str
    op: str
    value: float | None
    source_kind: str
    severity: str
    default: bool
    path: str
    line: int


@dataclasses.dataclass(frozen=True, slots=True)
class Metric:
    """A metric definition (a library's series are rows of this type as they are)."""

    name: str
    type: str
    unit: str
    help: str
    labels: tuple[str, ...]
    language: str
    dynamic: bool  # the name is a pattern
    unresolved: str
    exposed_names: tuple[str, ...]  # the series a scrape shows
    library: str
    via: str
    origin: str  # "" for the system's own, else the library that provides the series
    provenance: Provenance
    quantiles: tuple[float, ...]
    exemplars: bool
    path: str
    line: int
    thresholds: tuple[MetricThreshold, ...]  # the thresholds that read it


@dataclasses.dataclass(frozen=True, slots=True)
class OwnMetric(Metric):
    """One of the system's own metrics, at one definition site."""

    twins: tuple[str, ...]  # libraries that expose it again under their own names
    repeat: bool  # a further definition site of a name an earlier row has
    other_sites: tuple[Where, ...]  # on the first row of a name: its further definition sites


@dataclasses.dataclass(frozen=True, slots=True)
class TwinOf:
    name: str
    library: str
    path: str
    line: int


@dataclasses.dataclass(frozen=True, slots=True)
class TwinMetric(Metric):
    """A metric exposed a second time through another client library (vLLM's Ray series)."""

    twin_of: TwinOf


@dataclasses.dataclass(frozen=True, slots=True)
class LinkedMetric:
    name: str
    provenance: Provenance
    origin: str


@dataclasses.dataclass(frozen=True, slots=True)
class ThresholdRow:
    name: str
    expr: str
    metrics: tuple[str, ...]  # series the expression reads
    raw_metrics: tuple[str, ...]  # the series behind the recording rules it reads
    links: tuple[str, ...]
    via: tuple[str, ...]
    unlinked: str  # why it reads no metric of this evidence ("" when it reads one)
    op: str
    value: float | None
    for_: str
    severity: str
    source_kind: str
    default: bool
    path: str
    line: int
    reads_defined_metric: bool
    reads: tuple[Provenance, ...]  # whose metrics it reads
    linked: tuple[LinkedMetric, ...]
    recorded_through: tuple[str, ...]  # the recording rules between it and the metric


@dataclasses.dataclass(frozen=True, slots=True)
class UnresolvedName:
    """A metric name the extractor could not read, with why."""

    name: str  # the pattern, or "" when nothing of the name could be read
    reason: str
    kind: str  # "pattern", or the extractor's diagnostic code without its "metric-" prefix
    via: str
    path: str
    line: int


@dataclasses.dataclass(frozen=True, slots=True)
class TelemetrySide:
    """One system's telemetry: own metrics, twins and library series apart, with their thresholds."""

    metrics: tuple[OwnMetric, ...]
    twins: tuple[TwinMetric, ...]
    library_metrics: tuple[Metric, ...]
    thresholds: tuple[ThresholdRow, ...]
    unresolved: tuple[UnresolvedName, ...]
    by_type: Mapping[str, int]  # own metric names per metric type
    dominant_type: str
    definitions: int  # own definition sites
    own_names: int
    without_threshold: tuple[str, ...]
    with_threshold: int
    library_by_origin: Mapping[str, int]  # library -> series it provides
    twins_by_library: Mapping[str, int]  # library -> own metrics it exposes again
    unlinked_thresholds: int
    empty_reason: str
    # metrics defined in modules the layers set apart (tests, examples & benchmarks; vendored code):
    # listed, neither counted as the system's own nor paired nor diffed between releases
    apart_metrics: tuple[OwnMetric, ...] = ()
    apart_by_layer: Mapping[str, int] = dataclasses.field(default_factory=dict)  # layer title -> names
    unresolved_apart: tuple[UnresolvedName, ...] = ()  # names and types left unread in those modules


# ---------------------------------------------------------------------------------------- two systems


@dataclasses.dataclass(frozen=True, slots=True)
class CrosswalkMetric:
    name: str
    type: str
    unit: str
    path: str
    line: int
    thresholds: int


@dataclasses.dataclass(frozen=True, slots=True)
class CrosswalkRow:
    """Two metrics that measure the same thing under different names or units."""

    score: float
    shared: tuple[str, ...]  # the concept tokens both names have
    dimension: str
    same_name: bool
    unit_note: str
    a: CrosswalkMetric
    b: CrosswalkMetric


@dataclasses.dataclass(frozen=True, slots=True)
class LibrarySeries:
    """The series one library gives each side (never paired in the crosswalk)."""

    origin: str
    a: int
    b: int
    shared: tuple[str, ...]
    only_a: tuple[str, ...]
    only_b: tuple[str, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class TelemetrySection:
    a: TelemetrySide
    b: TelemetrySide
    crosswalk: tuple[CrosswalkRow, ...]
    libraries: tuple[LibrarySeries, ...]


# ---------------------------------------------------------------------------------------- a release


@dataclasses.dataclass(frozen=True, slots=True)
class MetricRef:
    name: str
    type: str
    origin: str
    twins: tuple[str, ...]
    path: str
    line: int


@dataclasses.dataclass(frozen=True, slots=True)
class MetricPresence(MetricRef):
    """A metric one release has and the other lacks."""

    breaking: bool  # a removed metric breaks what reads it


@dataclasses.dataclass(frozen=True, slots=True)
class RenamedMetric:
    from_: MetricRef
    to: MetricRef
    similarity: float
    origin: str
    breaking: bool


@dataclasses.dataclass(frozen=True, slots=True)
class RetypedMetric:
    name: str
    old_type: str
    new_type: str
    origin: str
    old_location: Where
    breaking: bool
    path: str
    line: int


@dataclasses.dataclass(frozen=True, slots=True)
class TwinsChanged:
    """Libraries that began or stopped exposing a metric that stayed."""

    name: str
    added: tuple[str, ...]
    removed: tuple[str, ...]
    breaking: bool
    path: str
    line: int


@dataclasses.dataclass(frozen=True, slots=True)
class MetricChanges:
    added: tuple[MetricPresence, ...]
    removed: tuple[MetricPresence, ...]
    renamed: tuple[RenamedMetric, ...]
    retyped: tuple[RetypedMetric, ...]
    twins_changed: tuple[TwinsChanged, ...]
    renames_not_searched: str | None = omitted_when_none()  # why renames were not looked for


@dataclasses.dataclass(frozen=True, slots=True)
class OrphanedThreshold:
    """A threshold that reads a series the old release exposed and the new one does not."""

    name: str
    source_kind: str
    op: str
    value: float | None
    missing: tuple[str, ...]
    renamed_to: Mapping[str, str]  # missing series -> the series to read instead
    reads: Reading
    through: tuple[str, ...]
    origin: str
    release: str  # the side whose threshold it is
    breaking: bool
    path: str
    line: int


@dataclasses.dataclass(frozen=True, slots=True)
class ThresholdRef:
    name: str
    source_kind: str
    op: str
    value: float | None
    expr: str
    path: str
    line: int


@dataclasses.dataclass(frozen=True, slots=True)
class ThresholdPresence(ThresholdRef):
    breaking: bool


@dataclasses.dataclass(frozen=True, slots=True)
class ThresholdChange(ThresholdRef):
    changes: tuple[str, ...]
    old_value: float | None
    old_location: Where
    breaking: bool


@dataclasses.dataclass(frozen=True, slots=True)
class ThresholdChanges:
    added: tuple[ThresholdPresence, ...]
    removed: tuple[ThresholdPresence, ...]
    changed: tuple[ThresholdChange, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class TelemetryRelease:
    metrics: MetricChanges
    orphaned_thresholds: tuple[OrphanedThreshold, ...]
    thresholds: ThresholdChanges
