create materialized view m as select count(distinct v) as dv, stddev_samp(v) as sd from t
