"""Stage 1, traces: what a trace format is, the embedded generator, and the downloader."""
