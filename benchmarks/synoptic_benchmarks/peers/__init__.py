"""Helpers of ``python -m synoptic_benchmarks.peers.run`` (Synoptic side by side with
a peer server on the same workload): counting, per-process CPU/RSS from ``/proc``,
and the peers' own client protocols. Not used by the gateway itself."""
