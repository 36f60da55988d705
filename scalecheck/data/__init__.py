"""L1: frozen records (measurements, model specs, fitted models). numpy only; no I/O."""
