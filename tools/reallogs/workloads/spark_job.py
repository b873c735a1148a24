"""Healthy PySpark job in local[2] mode at log level INFO: an RDD word count with a shuffle,
a DataFrame aggregation, a join, and a cached table."""
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

spark = (SparkSession.builder.master("local[2]").appName("reallogs-healthy")
         .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "4")
         .getOrCreate())
spark.sparkContext.setLogLevel("INFO")
sc = spark.sparkContext

words = sc.parallelize([f"w{i % 37} w{i % 11} w{i % 5}" for i in range(20000)], 4)
counts = words.flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(lambda a, b: a + b).collect()
print("distinct words:", len(counts), "total:", sum(c for _, c in counts))

df = spark.range(0, 100000).withColumn("k", F.col("id") % 10).withColumn("v", F.col("id") * 2)
agg = df.groupBy("k").agg(F.sum("v").alias("s"), F.count("*").alias("n")).orderBy("k").collect()
print("groups:", [(r.k, r.n) for r in agg])

dim = spark.createDataFrame([(i, f"name{i}") for i in range(10)], ["k", "name"])
joined = df.join(dim, "k").groupBy("name").count().orderBy("name").collect()
print("joined rows:", sum(r["count"] for r in joined))

df.cache()
print("cached count:", df.count(), df.filter(F.col("k") == 3).count())
spark.stop()
print("spark job finished")
