"""Production telemetry evidence: Prometheus metric definitions (``metrics``) and the thresholds
production attaches to them (``thresholds``), plus live scrape reconciliation (:mod:`.scrape`).

Two steps, in this order (thresholds links to the metrics step's records)::

    from extractor.telemetry import METRICS_STEP, THRESHOLDS_STEP
"""

from extractor.telemetry.metrics import METRICS_STEP
from extractor.telemetry.thresholds import THRESHOLDS_STEP

STEPS = (METRICS_STEP, THRESHOLDS_STEP)

__all__ = ["METRICS_STEP", "STEPS", "THRESHOLDS_STEP"]
