"""The entry script for `spark-submit`: run rw's CLI as a Spark application.

    spark-submit --master spark://HOST:7077 "$(python -m rw_cli.spark_submit --path)" \\
        --state-store s3://bucket/rw --s3-endpoint http://HOST:8333 -f pipeline.sql
    spark-submit ... "$(python -m rw_cli.spark_submit --path)" --data-dir DIR run --until-idle

Everything after the script is `rw`'s own arguments; the engine is Spark and the master is
the one spark-submit was given (its SparkSession is the one rw uses). `--path` prints this
file's path, for the command line above.
"""
from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    from pyspark.sql import SparkSession

    from rw_cli.cli import main as rw_main
    from rw_cli.spark import context

    spark = SparkSession.builder.getOrCreate()
    master = spark.sparkContext.master
    context.adopt(master, spark)
    rw_main(["--engine", "spark", "--spark-master", master, *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    if sys.argv[1:] == ["--path"]:
        print(__file__)
    else:
        main()
