"""PV Access adapter benchmarks: beside the CA adapter, and images to a client."""
