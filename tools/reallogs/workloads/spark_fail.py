"""Failing PySpark job in local[2] mode: a Python UDF raises ValueError on one record, the task
fails (spark.task.maxFailures=1 in local mode), the job is aborted and collect() raises."""
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import DoubleType

spark = (SparkSession.builder.master("local[2]").appName("reallogs-failing")
         .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "4")
         .getOrCreate())


def parse_price(s):
    if s == "n/a":
        raise ValueError(f"could not parse price {s!r}")
    return float(s)


parse = F.udf(parse_price, DoubleType())
rows = [(i, str(i * 1.5) if i != 4321 else "n/a") for i in range(10000)]
df = spark.createDataFrame(rows, ["id", "price"]).repartition(4)
print("total:", df.select(F.sum(parse("price"))).collect())
spark.stop()
