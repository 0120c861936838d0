"""``bench_remote``'s object store (moto behind the latency proxy) and its probes of a
server over the bucket."""
