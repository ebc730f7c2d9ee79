"""Node-level stragglers after Ouyang, Garraghan et al. (SCC 2016): per-node models of
the z-normalized task durations, indicators (Table 1) and the P-cores ranking."""
