"""Production telemetry evidence: Prometheus metric definitions (``metrics``) and the thresholds
production attaches to them (``thresholds``), plus live scrape reconciliation (:mod:`.scrape`)."""
