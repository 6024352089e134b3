"""The KV bucket where adapters keep what they learn about their sources.

The Tango adapter keeps, per device, what reading each attribute costs the
device (``synoptic_adapters.tango.memory``), so that its next start reads known
slow attributes last. ``synoptic bus init`` creates the bucket (production
adapters may not create streams); an adapter creates it when missing and
allowed.
"""

from __future__ import annotations

from typing import Any

from nats.js.api import KeyValueConfig, StorageType

#: The Tango adapters' bucket.
TANGO_READS_BUCKET = "tango_reads"


def learned_bucket_config(
    bucket: str = TANGO_READS_BUCKET, replicas: int = 1
) -> KeyValueConfig:
    """One value per key (the latest), on file: it outlives server restarts."""
    return KeyValueConfig(
        bucket=bucket,
        description="Synoptic Tango adapters: what reading each attribute costs "
        "its device (one key per device)",
        history=1,
        storage=StorageType.FILE,
        replicas=replicas,
    )


async def ensure_learned_bucket(
    nc: Any, bucket: str = TANGO_READS_BUCKET, replicas: int = 1
) -> Any:
    """The bucket, created when missing; its KeyValue handle."""
    from nats.js.errors import BucketNotFoundError

    js = nc.jetstream()
    try:
        return await js.key_value(bucket)
    except BucketNotFoundError:
        return await js.create_key_value(learned_bucket_config(bucket, replicas))
