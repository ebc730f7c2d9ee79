"""What is estimated from the latencies seen so far, below the engine, the methods and the replay that
all read it: the online straggler threshold tau_hat(t) and a copy's expected cost (threshold), the
censored normal likelihood (likelihood)."""
