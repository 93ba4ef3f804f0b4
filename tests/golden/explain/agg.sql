create materialized view m as select k, sum(v) as s, count(*) as c, min(v) as lo from t where v > 0 group by k having count(*) > 1
