"""The s3 source and sink against a real S3 server (SeaweedFS on 127.0.0.1)."""
import json
import uuid

import boto3
from botocore.config import Config

from .conftest import S3_BUCKET, drain


def _client(endpoint):
    return boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                        config=Config(s3={"addressing_style": "path"}))


def test_s3_source_and_sink(session, seaweedfs):
    c = _client(seaweedfs)
    run = uuid.uuid4().hex
    c.put_object(Bucket=S3_BUCKET, Key=f"in-{run}/a.json",
                 Body=b'{"id": 1, "v": "x"}\n{"id": 2, "v": "y"}\nnot json\n')
    c.put_object(Bucket=S3_BUCKET, Key=f"in-{run}/b.csv", Body=b"id,v\n9,z\n")  # not matched
    common = (f"s3.bucket_name = '{S3_BUCKET}', s3.endpoint_url = '{seaweedfs}', s3.region_name = 'us-east-1', "
              "s3.credentials.access = 'rw', s3.credentials.secret = 'rw-secret'")
    session.execute(f"CREATE SOURCE src (id INT, v VARCHAR) WITH (connector = 's3', {common}, "
                    f"match_pattern = 'in-{run}/*.json') FORMAT PLAIN ENCODE JSON")
    session.execute(f"CREATE SINK out AS SELECT id, v FROM src WITH (connector = 's3', {common}, "
                    f"s3.path = 'out-{run}/') FORMAT PLAIN ENCODE JSON")
    session.execute("CREATE MATERIALIZED VIEW m AS SELECT count(*) AS c FROM src")
    drain(session)
    c.put_object(Bucket=S3_BUCKET, Key=f"in-{run}/c.json", Body=b'{"id": 3, "v": "w"}\n')  # a later file
    drain(session)
    assert session.execute("SELECT c FROM m").fetchall() == [(3,)]
    keys = sorted(o["Key"] for o in c.list_objects_v2(Bucket=S3_BUCKET, Prefix=f"out-{run}/")["Contents"])
    assert keys and all(k.endswith(".jsonl") and "/.staging/" not in k for k in keys)
    rows = []
    for k in keys:
        body = c.get_object(Bucket=S3_BUCKET, Key=k)["Body"].read().decode()
        rows += [json.loads(line) for line in body.splitlines() if line]
    assert sorted(r["id"] for r in rows) == [1, 2, 3]
    jobs = {r[1]: r[3] for r in session.execute("SHOW JOBS").fetchall()}
    assert "1 bad records skipped" in jobs["src"]
