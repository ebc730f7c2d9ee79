"""Failure and kill prediction and proactive cloning after El-Sayed, Zhu and Schroeder
(ICDCS 2017): random forests over job configuration, early usage and failure flags
(Table IV), and the trace replay of Algorithm 1 (Section VI-B)."""
