create materialized view m as select k, v, count(*) as c from t group by grouping sets ((k), (k, v), ())
