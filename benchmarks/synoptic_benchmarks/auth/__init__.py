"""The sign-in benchmark (``make bench-auth``): the browser's round trip through
the provider, the gateway's cost of checking a token, and a rotated key."""
