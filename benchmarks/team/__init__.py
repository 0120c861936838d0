"""``bench_team``'s parts: the topology a team runs (moto's S3 server holding the runs, one
PostgreSQL cluster, ``sumlens serve`` replicas configured by ``deploy/sumlens.env``, nginx
with ``deploy/nginx/sumlens.conf`` in front) and the load clients that drive it."""
